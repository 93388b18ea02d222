import { Link } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { QueryState } from '../../components/Status';
import { formatDate } from '../../format';
import type { MyCourse } from '../../types';

export function MyCourses() {
  useTitle('My courses');
  const mine = useQuery({ queryKey: ['my-courses'], queryFn: () => api.get<MyCourse[]>('/api/my-courses', { perPage: 100 }) });
  return (
    <>
      <h1>My courses</h1>
      <QueryState query={mine} label="Loading your courses">
        {(courses) =>
          courses.length === 0 ? (
            <p>
              You are not enrolled in any course yet. <Link to="/catalogue">Browse the catalogue</Link>.
            </p>
          ) : (
            <ul className="cards">
              {courses.map((e) => (
                <li key={e.id} className="card">
                  <h2>
                    <Link to={`/courses/${e.courseId}`}>{e.course.title}</Link>
                  </h2>
                  <label className="small">
                    Progress: {e.progress}%
                    <progress max={100} value={e.progress} />
                  </label>
                  <p className="muted small">
                    {e.status === 'COMPLETED' ? `Completed ${formatDate(e.completedAt)}` : `Enrolled ${formatDate(e.enrolledAt)}`}
                    {e.finalScore !== null ? ` · final score ${e.finalScore}%` : ''}
                  </p>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}
