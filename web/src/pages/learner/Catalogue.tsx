import { useState } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { isStaff, useSession } from '../../session';
import type { CatalogueCourse } from '../../types';

export function Catalogue() {
  useTitle('Catalogue');
  const session = useSession();
  const [search, setSearch] = useState('');
  const catalogue = useQuery({ queryKey: ['catalogue', search], queryFn: () => api.get<CatalogueCourse[]>('/api/catalogue', { search, perPage: 100 }) });
  const queryClient = useQueryClient();
  const enroll = useMutation({
    mutationFn: (courseId: string) => api.post(`/api/courses/${encodeURIComponent(courseId)}/enroll`),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['catalogue'] });
      void queryClient.invalidateQueries({ queryKey: ['my-courses'] });
    },
  });
  const enrolledTitle = enroll.isSuccess ? catalogue.data?.find((c) => c.id === enroll.variables)?.title : null;
  return (
    <>
      <h1>Catalogue</h1>
      <form
        role="search"
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(String(new FormData(e.currentTarget).get('q') ?? '').trim());
        }}
      >
        <label className="field inline">
          Search courses
          <input type="search" name="q" defaultValue={search} />
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorMessage error={enroll.error} />
      {enrolledTitle ? <Notice>You are enrolled in {enrolledTitle}.</Notice> : null}
      <QueryState query={catalogue} label="Loading the catalogue">
        {(courses) =>
          courses.length === 0 ? (
            <p>No courses match.</p>
          ) : (
            <ul className="cards">
              {courses.map((c) => (
                <li key={c.id} className="card">
                  <h2>{c.title}</h2>
                  {c.description ? <p>{c.description}</p> : null}
                  <p className="muted small">
                    {c.lessonCount} lessons
                    {c.averageRating !== null ? ` · rated ${c.averageRating.toFixed(1)} of 5 (${c.reviewCount})` : ''}
                    {c.seatsLeft !== null ? ` · ${c.seatsLeft} seats left` : ''}
                  </p>
                  <div className="actions">
                    {c.enrollmentStatus === 'ACTIVE' || c.enrollmentStatus === 'COMPLETED' ? (
                      <Link className="button" to={`/courses/${c.id}`}>
                        Open course<span className="visually-hidden"> {c.title}</span>
                      </Link>
                    ) : isStaff(session) ? (
                      <Link className="button secondary" to={`/teach/courses/${c.id}`}>
                        Manage<span className="visually-hidden"> {c.title}</span>
                      </Link>
                    ) : session.role === 'STUDENT' ? (
                      <button type="button" onClick={() => enroll.mutate(c.id)} disabled={enroll.isPending}>
                        Enroll<span className="visually-hidden"> in {c.title}</span>
                      </button>
                    ) : null}
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </QueryState>
    </>
  );
}
