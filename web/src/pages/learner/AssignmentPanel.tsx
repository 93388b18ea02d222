import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, uploadFile } from '../../api';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { formatDateTime } from '../../format';
import type { Assignment, Rubric, Submission } from '../../types';

export function RubricTable({ rubric }: { rubric: Rubric }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Rubric: {rubric.title}</caption>
        <thead>
          <tr>
            <th scope="col">Criterion</th>
            <th scope="col">Points</th>
          </tr>
        </thead>
        <tbody>
          {rubric.criteria.map((c) => (
            <tr key={c.id}>
              <td>
                <strong>{c.title}</strong>
                {c.description ? <div className="small muted">{c.description}</div> : null}
              </td>
              <td>{c.maxPoints}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SubmissionSummary({ s, maxScore }: { s: Submission; maxScore: number }) {
  return (
    <section aria-labelledby="my-submission">
      <h3 id="my-submission">Your submission</h3>
      <p className="small">
        Submitted {formatDateTime(s.submittedAt)}
        {s.isLate ? ' (late)' : ''} · <span className={s.status === 'GRADED' ? 'tag ok' : 'tag'}>{s.status === 'GRADED' ? 'Graded' : 'Waiting for a grade'}</span>
      </p>
      {s.score !== null ? (
        <p>
          Score: <strong>{s.score}</strong> of {maxScore}
          {s.peerScoreAverage !== null ? ` · peer average ${s.peerScoreAverage}` : ''}
        </p>
      ) : null}
      {s.feedback ? <p>Feedback: {s.feedback}</p> : null}
      {s.peerReviewsCompleted > 0 ? <p className="small muted">{s.peerReviewsCompleted} peer reviews completed</p> : null}
      {s.textContent ? <div className="prose">{s.textContent}</div> : null}
      {s.files.length > 0 ? (
        <ul>
          {s.files.map((f) => (
            <li key={f.fileId}>
              <a href={f.url}>{f.name}</a>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** An assignment: instructions, due date, rubric, the learner's submission, and the form to (re)submit with files. */
export function AssignmentPanel({ lessonId, canSubmit }: { lessonId: string; canSubmit: boolean }) {
  const key = ['assignment', lessonId];
  const assignment = useQuery({ queryKey: key, queryFn: () => api.get<Assignment>(`/api/assignments/${encodeURIComponent(lessonId)}`) });
  const queryClient = useQueryClient();
  const submit = useMutation({
    mutationFn: async ({ text, files }: { text: string; files: File[] }) => {
      const uploaded = [];
      for (const file of files) uploaded.push(await uploadFile(file, { lessonId }));
      return api.post<Submission>(`/api/assignments/${encodeURIComponent(lessonId)}/submit`, {
        ...(text ? { textContent: text } : {}),
        files: uploaded.map((f) => ({ fileId: f.id, name: f.name })),
      });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  return (
    <QueryState query={assignment} label="Loading the assignment">
      {(a) => (
        <section aria-labelledby="assignment-heading">
          <h2 id="assignment-heading">{a.title}</h2>
          <p className="small">
            Due {formatDateTime(a.dueDate)} · {a.maxScore} points{a.passingScore !== null ? ` · pass mark ${a.passingScore}` : ''}
            {a.isPeerAssessed ? ` · reviewed by ${a.peerReviewCount} classmate${a.peerReviewCount === 1 ? '' : 's'}, anonymously` : ''}
          </p>
          <div className="prose">{a.instructions}</div>
          {a.rubric ? (
            <>
              <h3>Rubric</h3>
              <RubricTable rubric={a.rubric} />
            </>
          ) : null}
          {a.mySubmission ? <SubmissionSummary s={a.mySubmission} maxScore={a.maxScore} /> : null}
          {submit.isSuccess ? <Notice>Your work was submitted.</Notice> : null}
          {canSubmit && a.mySubmission?.status !== 'GRADED' ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                const data = new FormData(e.currentTarget);
                const files = data.getAll('files').filter((f): f is File => f instanceof File && f.size > 0);
                submit.mutate({ text: String(data.get('text') ?? '').trim(), files });
              }}
            >
              <h3>{a.mySubmission ? 'Replace your submission' : 'Submit your work'}</h3>
              <label className="field">
                Your answer
                <textarea name="text" rows={6} defaultValue={a.mySubmission?.textContent ?? ''} />
              </label>
              <label className="field">
                Files
                <input type="file" name="files" multiple />
              </label>
              <ErrorMessage error={submit.error} />
              <button type="submit" disabled={submit.isPending}>
                {submit.isPending ? 'Submitting…' : 'Submit'}
              </button>
            </form>
          ) : null}
        </section>
      )}
    </QueryState>
  );
}
