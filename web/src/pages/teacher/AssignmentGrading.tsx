import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { formatDateTime } from '../../format';
import { RubricTable } from '../learner/AssignmentPanel';
import type { Assignment, Submission } from '../../types';

interface ModerationView {
  groups: Array<{
    submissionId: string;
    student: { id: string; name: string };
    instructorScore: number | null;
    peerScoreAverage: number | null;
    peerReviewsCompleted: number;
    peerReviewCount: number;
    instructorOverridden: boolean;
    reviews: Array<{ id: string; reviewer: { id: string; name: string }; status: string; score: number | null; feedback: string | null; flagReason: string | null }>;
  }>;
  total: number;
}

/** An assignment for its teacher: settings (create when missing), submissions with grading, and the peer-review moderation view. */
export function AssignmentGrading() {
  const { lessonId = '' } = useParams();
  const id = encodeURIComponent(lessonId);
  const assignment = useQuery({ queryKey: ['assignment', lessonId], queryFn: () => api.get<Assignment>(`/api/assignments/${id}`) });
  useTitle(assignment.data ? `Grading: ${assignment.data.title}` : 'Assignment');
  const missing = assignment.error instanceof ApiError && assignment.error.status === 404;
  return (
    <>
      <p className="small">
        <Link to={`/teach/lessons/${lessonId}`}>Back to the lesson</Link>
      </p>
      {missing ? (
        <>
          <h1>Set up the assignment</h1>
          <AssignmentSettings lessonId={lessonId} />
        </>
      ) : (
        <QueryState query={assignment} label="Loading the assignment">
          {(a) => (
            <>
              <h1>Grading: {a.title}</h1>
              <p className="muted">
                {a.courseTitle} · due {formatDateTime(a.dueDate)} · {a.maxScore} points
                {a.isPeerAssessed ? ` · ${a.peerReviewCount} peer reviews each` : ''}
              </p>
              {a.rubric ? <RubricTable rubric={a.rubric} /> : null}
              <Submissions assignment={a} />
              {a.isPeerAssessed ? <Moderation lessonId={lessonId} /> : null}
              <details>
                <summary>Change the assignment</summary>
                <AssignmentSettings lessonId={lessonId} current={a} />
              </details>
            </>
          )}
        </QueryState>
      )}
    </>
  );
}

function Submissions({ assignment }: { assignment: Assignment }) {
  const id = encodeURIComponent(assignment.id);
  const key = ['submissions', assignment.id];
  const queryClient = useQueryClient();
  const submissions = useQuery({ queryKey: key, queryFn: () => api.get<Submission[]>(`/api/assignments/${id}/submissions`, { perPage: 100 }) });
  const grade = useMutation({
    mutationFn: (body: { submissionId: string; score: number; feedback?: string }) => api.post<Submission>(`/api/assignments/${id}/grade`, body),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['moderation', assignment.id] });
    },
  });
  return (
    <section aria-labelledby="submissions-heading">
      <h2 id="submissions-heading">Submissions</h2>
      <ErrorMessage error={grade.error} />
      {grade.isSuccess ? <Notice>Grade saved: {grade.data.score} points.</Notice> : null}
      <QueryState query={submissions} label="Loading submissions">
        {(list) =>
          list.length === 0 ? (
            <p>No submissions yet.</p>
          ) : (
            <ul className="list">
              {list.map((s) => (
                <li key={s.id}>
                  <h3>{s.studentName ?? s.studentId}</h3>
                  <p className="small muted">
                    Submitted {formatDateTime(s.submittedAt)}
                    {s.isLate ? ' (late)' : ''} · {s.status === 'GRADED' ? `graded ${s.score} of ${assignment.maxScore}` : 'not graded'}
                    {s.peerScoreAverage !== null ? ` · peer average ${s.peerScoreAverage} (${s.peerReviewsCompleted} reviews)` : ''}
                  </p>
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
                  <form
                    className="row"
                    aria-label={`Grade ${s.studentName ?? s.studentId}`}
                    onSubmit={(e) => {
                      e.preventDefault();
                      const data = new FormData(e.currentTarget);
                      const feedback = String(data.get('feedback') ?? '').trim();
                      grade.mutate({ submissionId: s.id, score: Number(data.get('score')), ...(feedback ? { feedback } : {}) });
                    }}
                  >
                    <label className="field">
                      Score (0 to {assignment.maxScore})
                      <input type="number" name="score" min={0} max={assignment.maxScore} step="any" required defaultValue={s.instructorScore ?? ''} />
                    </label>
                    <label className="field">
                      Feedback
                      <input name="feedback" maxLength={5000} defaultValue={s.feedback ?? ''} />
                    </label>
                    <button type="submit" disabled={grade.isPending}>
                      {s.status === 'GRADED' ? 'Change the grade' : 'Save the grade'}
                    </button>
                  </form>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </section>
  );
}

function Moderation({ lessonId }: { lessonId: string }) {
  const view = useQuery({ queryKey: ['moderation', lessonId], queryFn: () => api.get<ModerationView>(`/api/assignments/${encodeURIComponent(lessonId)}/peer-reviews`) });
  return (
    <section aria-labelledby="moderation-heading">
      <h2 id="moderation-heading">Peer reviews</h2>
      <QueryState query={view} label="Loading peer reviews">
        {(v) =>
          v.groups.length === 0 ? (
            <p>No peer reviews allocated yet (they start once enough students have submitted).</p>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Author</th>
                    <th scope="col">Reviewer</th>
                    <th scope="col">Status</th>
                    <th scope="col">Score</th>
                    <th scope="col">Feedback or flag</th>
                  </tr>
                </thead>
                <tbody>
                  {v.groups.flatMap((g) =>
                    g.reviews.map((r, i) => (
                      <tr key={r.id}>
                        {i === 0 ? (
                          <th scope="rowgroup" rowSpan={g.reviews.length}>
                            {g.student.name}
                            <div className="small muted">
                              peer average {g.peerScoreAverage ?? '—'} · {g.peerReviewsCompleted} of {g.peerReviewCount}
                              {g.instructorOverridden ? ` · overridden by ${g.instructorScore}` : ''}
                            </div>
                          </th>
                        ) : null}
                        <td>{r.reviewer.name}</td>
                        <td>
                          <span className={r.status === 'FLAGGED' ? 'tag warn' : r.status === 'SUBMITTED' ? 'tag ok' : 'tag'}>{r.status.toLowerCase()}</span>
                        </td>
                        <td>{r.score ?? '—'}</td>
                        <td>{r.flagReason ? `Flagged: ${r.flagReason}` : (r.feedback ?? '')}</td>
                      </tr>
                    )),
                  )}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
    </section>
  );
}

function AssignmentSettings({ lessonId, current }: { lessonId: string; current?: Assignment }) {
  const queryClient = useQueryClient();
  const save = useMutation({
    mutationFn: (body: object) => api.put<Assignment>(`/api/assignments/${encodeURIComponent(lessonId)}`, body),
    onSuccess: (a) => queryClient.setQueryData(['assignment', lessonId], a),
  });
  const due = current ? new Date(current.dueDate) : new Date(Date.now() + 7 * 86_400_000);
  const dueLocal = new Date(due.getTime() - due.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const data = new FormData(e.currentTarget);
        const passing = String(data.get('passingScore') ?? '');
        const peer = data.get('isPeerAssessed') === 'on';
        save.mutate({
          title: String(data.get('title')).trim(),
          instructions: String(data.get('instructions')).trim(),
          maxScore: Number(data.get('maxScore')),
          passingScore: passing === '' ? null : Number(passing),
          dueDate: new Date(String(data.get('dueDate'))).toISOString(),
          allowLate: data.get('allowLate') === 'on',
          isPeerAssessed: peer,
          peerReviewCount: peer ? Number(data.get('peerReviewCount')) : 0,
        });
      }}
    >
      <label className="field">
        Title
        <input name="title" required maxLength={200} defaultValue={current?.title ?? ''} />
      </label>
      <label className="field">
        Instructions
        <textarea name="instructions" required rows={4} defaultValue={current?.instructions ?? ''} />
      </label>
      <div className="row">
        <label className="field">
          Points
          <input type="number" name="maxScore" min={1} required defaultValue={current?.maxScore ?? 10} />
        </label>
        <label className="field">
          Pass mark
          <input type="number" name="passingScore" min={0} defaultValue={current?.passingScore ?? ''} />
        </label>
        <label className="field">
          Due
          <input type="datetime-local" name="dueDate" required defaultValue={dueLocal} />
        </label>
      </div>
      <label className="field inline">
        <input type="checkbox" name="allowLate" defaultChecked={current?.allowLate ?? false} /> Accept late work
      </label>
      <label className="field inline">
        <input type="checkbox" name="isPeerAssessed" defaultChecked={current?.isPeerAssessed ?? false} /> Peer reviewed
      </label>
      <label className="field">
        Reviewers per submission
        <input type="number" name="peerReviewCount" min={1} max={10} defaultValue={current?.peerReviewCount || 2} />
      </label>
      <ErrorMessage error={save.error} />
      {save.isSuccess ? <Notice>Assignment saved.</Notice> : null}
      <button type="submit" disabled={save.isPending}>
        Save the assignment
      </button>
    </form>
  );
}
