import { Link, useNavigate } from 'react-router';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, QueryState } from '../../components/Status';
import { formatDate } from '../../format';
import type { Course } from '../../types';

/** The courses a teacher manages (drafts included), and a new one. */
export function TeachCourses() {
  useTitle('Courses');
  const navigate = useNavigate();
  const courses = useQuery({ queryKey: ['teach-courses'], queryFn: () => api.get<Array<Course & { updatedAt: string }>>('/api/courses', { perPage: 100 }) });
  const create = useMutation({
    mutationFn: (body: { title: string; description: string | null }) => api.post<Course>('/api/courses', body),
    onSuccess: (c) => navigate(`/teach/courses/${c.id}`),
  });
  return (
    <>
      <h1>Courses</h1>
      <QueryState query={courses} label="Loading courses">
        {(list) => (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Course</th>
                  <th scope="col">Status</th>
                  <th scope="col">Drip</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <Link to={`/teach/courses/${c.id}`}>{c.title}</Link>
                    </td>
                    <td>
                      <span className={c.status === 'PUBLISHED' ? 'tag ok' : 'tag'}>{c.status.toLowerCase()}</span>
                    </td>
                    <td>{c.dripMode.toLowerCase()}</td>
                    <td>{formatDate(c.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryState>
      <h2>New course</h2>
      <form
        className="narrow"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          const description = String(data.get('description') ?? '').trim();
          create.mutate({ title: String(data.get('title')).trim(), description: description || null });
        }}
      >
        <label className="field">
          Title
          <input name="title" required maxLength={200} />
        </label>
        <label className="field">
          Description
          <textarea name="description" rows={3} />
        </label>
        <ErrorMessage error={create.error} />
        <button type="submit" disabled={create.isPending}>
          Create a draft course
        </button>
      </form>
    </>
  );
}
