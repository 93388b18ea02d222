import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { formatDate, formatDateTime } from '../../format';
import type { PeerReviewDetail, PeerReviewItem } from '../../types';

const statusLabel = { PENDING: 'To do', SUBMITTED: 'Submitted', FLAGGED: 'Flagged' };

/** The caller's peer-review queue: anonymous work of classmates to review. */
export function PeerReviewQueue() {
  useTitle('Peer reviews');
  const queue = useQuery({
    queryKey: ['peer-reviews'],
    queryFn: () => api.get<{ reviews: PeerReviewItem[]; total: number; pendingCount: number }>('/api/me/peer-reviews', { status: 'PENDING,SUBMITTED,FLAGGED', perPage: 100 }),
  });
  return (
    <>
      <h1>Peer reviews</h1>
      <p>Review your classmates’ work with the rubric. You do not see who wrote it, and they do not see who reviewed it.</p>
      <QueryState query={queue} label="Loading your reviews">
        {(q) =>
          q.reviews.length === 0 ? (
            <p>No reviews are assigned to you.</p>
          ) : (
            <>
              <p>{q.pendingCount} to do.</p>
              <ul className="list">
                {q.reviews.map((r) => (
                  <li key={r.id}>
                    <div className="row">
                      <Link to={`/peer-reviews/${r.id}`}>
                        {r.assignment.title} <span className="muted">({r.assignment.courseTitle})</span>
                      </Link>
                      <span className={r.status === 'PENDING' ? 'tag warn' : 'tag ok'}>{statusLabel[r.status]}</span>
                    </div>
                    <p className="small muted">
                      Submitted {formatDate(r.submission.submittedAt)} · {r.submission.fileCount} files · {r.submission.textContentPreview.slice(0, 120)}
                    </p>
                  </li>
                ))}
              </ul>
            </>
          )
        }
      </QueryState>
    </>
  );
}

/** The review form: the anonymous submission, a score per rubric criterion (or one score), feedback; save a draft, submit or flag. */
export function PeerReviewForm() {
  const { reviewId = '' } = useParams();
  const key = ['peer-review', reviewId];
  const detail = useQuery({ queryKey: key, queryFn: () => api.get<PeerReviewDetail>(`/api/peer-reviews/${encodeURIComponent(reviewId)}`) });
  useTitle(detail.data ? `Review: ${detail.data.assignment.title}` : 'Peer review');
  const queryClient = useQueryClient();
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: key });
    void queryClient.invalidateQueries({ queryKey: ['peer-reviews'] });
  };
  const save = useMutation({ mutationFn: (body: object) => api.patch(`/api/peer-reviews/${encodeURIComponent(reviewId)}`, body), onSuccess: refresh });
  const submit = useMutation({ mutationFn: (body: object) => api.post(`/api/peer-reviews/${encodeURIComponent(reviewId)}/submit`, body), onSuccess: refresh });
  const flag = useMutation({ mutationFn: (reason: string) => api.post(`/api/peer-reviews/${encodeURIComponent(reviewId)}/flag`, { reason }), onSuccess: refresh });

  return (
    <QueryState query={detail} label="Loading the review">
      {(d) => {
        const done = d.peerReview.status !== 'PENDING';
        const bodyFrom = (form: HTMLFormElement) => {
          const data = new FormData(form);
          const feedback = String(data.get('feedback') ?? '').trim();
          if (d.rubric) {
            const rubricScores = Object.fromEntries(d.rubric.criteria.map((c) => [c.id, Number(data.get(`criterion-${c.id}`))]));
            return { rubricScores, ...(feedback ? { feedback } : {}) };
          }
          return { score: Number(data.get('score')), ...(feedback ? { feedback } : {}) };
        };
        return (
          <>
            <h1>Review: {d.assignment.title}</h1>
            <p className="muted">
              {d.assignment.courseTitle} · submitted {formatDateTime(d.submission.submittedAt)}
              {d.submission.isLate ? ' (late)' : ''} · author hidden
            </p>
            <section aria-labelledby="instructions">
              <h2 id="instructions">Instructions</h2>
              <div className="prose">{d.assignment.instructions}</div>
            </section>
            <section aria-labelledby="work">
              <h2 id="work">The work</h2>
              {d.submission.textContent ? <div className="prose">{d.submission.textContent}</div> : <p className="muted">No text.</p>}
              {d.submission.files.length > 0 ? (
                <ul>
                  {d.submission.files.map((f) => (
                    <li key={f.id}>
                      <a href={f.url}>{f.name}</a>
                    </li>
                  ))}
                </ul>
              ) : null}
            </section>
            {done ? (
              <Notice>
                {d.peerReview.status === 'FLAGGED'
                  ? 'You flagged this submission.'
                  : `Review submitted: ${d.peerReview.score} of ${d.rubric?.totalPoints ?? d.assignment.maxScore}.`}
              </Notice>
            ) : (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  submit.mutate(bodyFrom(e.currentTarget));
                }}
              >
                <h2>Your review</h2>
                {d.rubric ? (
                  <fieldset>
                    <legend>{d.rubric.title}</legend>
                    {d.rubric.criteria.map((c) => (
                      <label key={c.id} className="field">
                        {c.title} (0 to {c.maxPoints}){c.description ? <span className="small muted">{c.description}</span> : null}
                        <input type="number" name={`criterion-${c.id}`} min={0} max={c.maxPoints} step="any" required defaultValue={d.peerReview.rubricScores[c.id] ?? ''} />
                      </label>
                    ))}
                  </fieldset>
                ) : (
                  <label className="field">
                    Score (0 to {d.assignment.maxScore})
                    <input type="number" name="score" min={0} max={d.assignment.maxScore} step="any" required />
                  </label>
                )}
                <label className="field">
                  Feedback for the author
                  <textarea name="feedback" rows={4} defaultValue={d.peerReview.feedback ?? ''} maxLength={10000} />
                </label>
                <ErrorMessage error={submit.error ?? save.error} />
                {save.isSuccess ? <Notice>Draft saved.</Notice> : null}
                <div className="row">
                  <button type="submit" disabled={submit.isPending}>
                    Submit review
                  </button>
                  {d.rubric ? (
                    <button type="button" className="secondary" onClick={(e) => save.mutate(bodyFrom(e.currentTarget.form!))} disabled={save.isPending}>
                      Save draft
                    </button>
                  ) : null}
                </div>
              </form>
            )}
            {!done ? (
              <details>
                <summary>Report a problem with this submission</summary>
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    flag.mutate(String(new FormData(e.currentTarget).get('reason') ?? '').trim());
                  }}
                >
                  <label className="field">
                    What is wrong? (3 to 500 characters)
                    <textarea name="reason" minLength={3} maxLength={500} required rows={2} />
                  </label>
                  <ErrorMessage error={flag.error} />
                  <button type="submit" className="danger" disabled={flag.isPending}>
                    Flag the submission
                  </button>
                </form>
              </details>
            ) : null}
            <p>
              <Link to="/peer-reviews">Back to your reviews</Link>
            </p>
          </>
        );
      }}
    </QueryState>
  );
}
