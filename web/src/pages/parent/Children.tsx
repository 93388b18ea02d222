import { Link, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { QueryState } from '../../components/Status';
import { formatDate, formatDateTime } from '../../format';
import type { Child, ChildOverview } from '../../types';

const days = (n: number) => `${n} ${n === 1 ? 'day' : 'days'}`;
/** How the API names a child: its Contact id, or its student id while it has no Contact row yet. */
const childKey = (c: Pick<Child, 'contactId' | 'studentId'>) => c.contactId ?? c.studentId;
const childName = (c: Pick<Child, 'name' | 'contactId' | 'studentId'>) => c.name ?? childKey(c);

export function Children() {
  useTitle('My children');
  const children = useQuery({ queryKey: ['children'], queryFn: () => api.get<{ children: Child[] }>('/api/parent/children') });
  return (
    <>
      <h1>My children</h1>
      <QueryState query={children} label="Loading your children">
        {({ children: list }) =>
          list.length === 0 ? (
            <p>No children are linked to your account in the school’s records.</p>
          ) : (
            <ul className="cards">
              {list.map((c) => (
                <li key={childKey(c)} className="card">
                  <h2>
                    <Link to={`/children/${encodeURIComponent(childKey(c))}`}>{childName(c)}</Link>
                  </h2>
                  <p className="small muted">{[c.class, c.section, c.relation ? `you: ${c.relation.toLowerCase()}` : null].filter(Boolean).join(' · ')}</p>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}

/** A child's overview (spec 4.6): courses, recent grades, upcoming assignments, live classes this month, streaks and badges, certificates. */
export function ChildOverviewPage() {
  const { childId = '' } = useParams();
  const overview = useQuery({ queryKey: ['child-overview', childId], queryFn: () => api.get<ChildOverview>(`/api/parent/children/${encodeURIComponent(childId)}/overview`) });
  useTitle(overview.data ? childName(overview.data.child) : 'Child');
  return (
    <>
      <p className="small">
        <Link to="/children">All children</Link>
      </p>
      <QueryState query={overview} label="Loading the overview">
        {(o) => (
          <>
            <h1>{childName(o.child)}</h1>
            <p className="muted">{[o.child.class, o.child.section].filter(Boolean).join(' · ')}</p>
            <dl className="stats" aria-label="Activity">
              <div>
                <dt>Current streak</dt>
                <dd>{days(o.gamification.currentStreak)}</dd>
              </div>
              <div>
                <dt>Longest streak</dt>
                <dd>{days(o.gamification.longestStreak)}</dd>
              </div>
              <div>
                <dt>Points</dt>
                <dd>{o.gamification.totalPoints}</dd>
              </div>
              <div>
                <dt>Badges</dt>
                <dd>{o.gamification.totalBadges}</dd>
              </div>
              <div>
                <dt>Live classes attended this month</dt>
                <dd>{o.liveClasses.attendedThisMonth}</dd>
              </div>
              <div>
                <dt>Live classes missed this month</dt>
                <dd>{o.liveClasses.missedThisMonth}</dd>
              </div>
            </dl>

            <h2>Courses</h2>
            {o.courses.length === 0 ? (
              <p>Not enrolled in any course.</p>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Course</th>
                      <th scope="col">Progress</th>
                      <th scope="col">Status</th>
                      <th scope="col">Final score</th>
                    </tr>
                  </thead>
                  <tbody>
                    {o.courses.map((c) => (
                      <tr key={c.enrollmentId}>
                        <td>{c.courseTitle}</td>
                        <td>
                          <progress max={100} value={c.progress} aria-label={`${c.courseTitle} progress`} /> {Math.round(c.progress)}%
                        </td>
                        <td>{c.status.toLowerCase()}</td>
                        <td>{c.finalScore !== null ? `${c.finalScore}%${c.passed === null ? '' : c.passed ? ' (passed)' : ' (not passed)'}` : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}

            <h2>Recent grades</h2>
            {o.recentGrades.length === 0 ? (
              <p>No graded work yet.</p>
            ) : (
              <ul className="list" aria-label="Recent grades">
                {o.recentGrades.map((g) => (
                  <li key={g.submissionId}>
                    <strong>{g.assignmentName}</strong> <span className="muted">({g.courseTitle})</span>: {g.score} of {g.maxScore} ({g.percentage}%){' '}
                    <span className={g.passed ? 'tag ok' : 'tag warn'}>{g.passed ? 'passed' : 'not passed'}</span>
                    <span className="small muted"> · {formatDate(g.gradedAt)}</span>
                  </li>
                ))}
              </ul>
            )}

            <h2>Upcoming assignments</h2>
            {o.upcomingAssignments.length === 0 ? (
              <p>Nothing due.</p>
            ) : (
              <ul className="list">
                {o.upcomingAssignments.map((a) => (
                  <li key={a.assignmentId}>
                    {a.title} <span className="muted">({a.courseTitle})</span>: due {formatDateTime(a.dueDate)}
                  </li>
                ))}
              </ul>
            )}

            <h2>Upcoming live classes</h2>
            {o.liveClasses.upcoming.length === 0 ? (
              <p>None scheduled.</p>
            ) : (
              <ul className="list">
                {o.liveClasses.upcoming.map((s) => (
                  <li key={s.sessionId}>
                    {s.title} <span className="muted">({s.courseTitle})</span>: {formatDateTime(s.scheduledAt)}, {s.durationMinutes} minutes
                  </li>
                ))}
              </ul>
            )}

            <h2>Certificates</h2>
            {o.certificates.length === 0 ? (
              <p>None yet.</p>
            ) : (
              <ul className="list">
                {o.certificates.map((c) => (
                  <li key={c.id}>
                    {c.courseTitle}: {c.certificateNumber}, {formatDate(c.issuedAt)}
                    {c.pdfUrl ? (
                      <>
                        {' '}
                        · <a href={c.pdfUrl}>PDF</a>
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </QueryState>
    </>
  );
}
