import { Link, useParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { formatDate, lessonTypeLabel } from '../../format';
import type { Course, CourseEnrollment, LessonType, Outline, OutlineLesson } from '../../types';

const LESSON_TYPES: LessonType[] = ['VIDEO', 'TEXT', 'PDF', 'QUIZ', 'ASSIGNMENT', 'SCORM', 'LIVE', 'INTERACTIVE'];

/** A course for its teacher: details, publishing, modules and lessons, enrollments. */
export function CourseEditor() {
  const { courseId = '' } = useParams();
  const id = encodeURIComponent(courseId);
  const queryClient = useQueryClient();
  const course = useQuery({ queryKey: ['course', courseId], queryFn: () => api.get<Course>(`/api/courses/${id}`) });
  // The course navigation rather than /modules: it also lists the lessons that are in no module.
  const outline = useQuery({ queryKey: ['course-outline', courseId], queryFn: () => api.get<Outline>(`/api/learn/${id}`) });
  const enrollments = useQuery({ queryKey: ['course-enrollments', courseId], queryFn: () => api.get<CourseEnrollment[]>(`/api/courses/${id}/enrollments`, { perPage: 100 }) });
  useTitle(course.data?.title ?? 'Course');
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: ['course', courseId] });
    void queryClient.invalidateQueries({ queryKey: ['course-outline', courseId] });
    void queryClient.invalidateQueries({ queryKey: ['teach-courses'] });
    void queryClient.invalidateQueries({ queryKey: ['course-enrollments', courseId] });
  };
  const save = useMutation({ mutationFn: (body: object) => api.patch<Course>(`/api/courses/${id}`, body), onSuccess: refresh });
  const publish = useMutation({ mutationFn: (status: 'PUBLISHED' | 'DRAFT') => api.post<Course>(`/api/courses/${id}/publish`, { status }), onSuccess: refresh });
  const addModule = useMutation({ mutationFn: (title: string) => api.post(`/api/courses/${id}/modules`, { title }), onSuccess: refresh });
  const addLesson = useMutation({ mutationFn: (body: object) => api.post(`/api/courses/${id}/lessons`, body), onSuccess: refresh });
  const enroll = useMutation({
    mutationFn: (studentIds: string[]) =>
      api.post<{ enrolled: unknown[]; alreadyEnrolled: unknown[]; failed: Array<{ studentId: string; message: string }> }>(`/api/courses/${id}/enrollments`, { studentIds }),
    onSuccess: refresh,
  });

  return (
    <QueryState query={course} label="Loading the course">
      {(c) => (
        <>
          <p className="small">
            <Link to="/teach">All courses</Link>
          </p>
          <h1>{c.title}</h1>
          <div className="row">
            <span className={c.status === 'PUBLISHED' ? 'tag ok' : 'tag'}>{c.status.toLowerCase()}</span>
            {c.status !== 'ARCHIVED' ? (
              <button type="button" className="secondary" onClick={() => publish.mutate(c.status === 'PUBLISHED' ? 'DRAFT' : 'PUBLISHED')} disabled={publish.isPending}>
                {c.status === 'PUBLISHED' ? 'Unpublish' : 'Publish'}
              </button>
            ) : null}
            <Link to={`/teach/live?courseId=${encodeURIComponent(c.id)}`}>Live sessions</Link>
          </div>
          <ErrorMessage error={publish.error} />

          <h2>Details</h2>
          <form
            key={c.id + String(save.data?.title ?? '')}
            onSubmit={(e) => {
              e.preventDefault();
              const data = new FormData(e.currentTarget);
              const passing = String(data.get('passingScore') ?? '');
              save.mutate({
                title: String(data.get('title')).trim(),
                description: String(data.get('description') ?? '').trim() || null,
                dripMode: data.get('dripMode'),
                certificateEnabled: data.get('certificateEnabled') === 'on',
                passingScore: passing === '' ? null : Number(passing),
              });
            }}
          >
            <label className="field">
              Title
              <input name="title" required maxLength={200} defaultValue={c.title} />
            </label>
            <label className="field">
              Description
              <textarea name="description" rows={3} defaultValue={c.description ?? ''} />
            </label>
            <label className="field">
              Lesson release (drip)
              <select name="dripMode" defaultValue={c.dripMode}>
                <option value="NONE">All lessons open at once</option>
                <option value="SEQUENTIAL">One after another</option>
                <option value="SCHEDULED">On scheduled dates</option>
              </select>
            </label>
            <label className="field">
              Passing score (%)
              <input type="number" name="passingScore" min={0} max={100} defaultValue={c.passingScore ?? ''} />
            </label>
            <label className="field inline">
              <input type="checkbox" name="certificateEnabled" defaultChecked={c.certificateEnabled} /> Issue a certificate on completion
            </label>
            <ErrorMessage error={save.error} />
            {save.isSuccess ? <Notice>Saved.</Notice> : null}
            <button type="submit" disabled={save.isPending}>
              Save details
            </button>
          </form>

          <h2>Modules and lessons</h2>
          <QueryState query={outline} label="Loading lessons">
            {({ modules: list, lessonsWithoutModule }) => (
              <>
                {list.map((m) => (
                  <section key={m.id} aria-labelledby={`m-${m.id}`}>
                    <h3 id={`m-${m.id}`}>{m.title}</h3>
                    <LessonList lessons={m.lessons} />
                  </section>
                ))}
                {lessonsWithoutModule.length > 0 ? (
                  <section aria-labelledby="m-none">
                    <h3 id="m-none">Without a module</h3>
                    <LessonList lessons={lessonsWithoutModule} />
                  </section>
                ) : null}
                <form
                  className="row"
                  onSubmit={(e) => {
                    e.preventDefault();
                    const form = e.currentTarget;
                    const data = new FormData(form);
                    addLesson.mutate(
                      { title: String(data.get('title')).trim(), type: data.get('type'), moduleId: data.get('moduleId') || null },
                      { onSuccess: () => form.reset() },
                    );
                  }}
                >
                  <label className="field">
                    New lesson title
                    <input name="title" required maxLength={200} />
                  </label>
                  <label className="field">
                    Type
                    <select name="type" defaultValue="TEXT">
                      {LESSON_TYPES.map((t) => (
                        <option key={t} value={t}>
                          {lessonTypeLabel[t]}
                        </option>
                      ))}
                    </select>
                  </label>
                  <label className="field">
                    Module
                    <select name="moduleId">
                      {list.map((m) => (
                        <option key={m.id} value={m.id}>
                          {m.title}
                        </option>
                      ))}
                      <option value="">No module</option>
                    </select>
                  </label>
                  <button type="submit" disabled={addLesson.isPending}>
                    Add lesson
                  </button>
                </form>
                <ErrorMessage error={addLesson.error} />
                <form
                  className="row"
                  onSubmit={(e) => {
                    e.preventDefault();
                    const form = e.currentTarget;
                    addModule.mutate(String(new FormData(form).get('title')).trim(), { onSuccess: () => form.reset() });
                  }}
                >
                  <label className="field">
                    New module title
                    <input name="title" required maxLength={200} />
                  </label>
                  <button type="submit" disabled={addModule.isPending}>
                    Add module
                  </button>
                </form>
                <ErrorMessage error={addModule.error} />
              </>
            )}
          </QueryState>

          <h2>Enrollments</h2>
          <QueryState query={enrollments} label="Loading enrollments">
            {(list) => (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Student</th>
                      <th scope="col">Status</th>
                      <th scope="col">Progress</th>
                      <th scope="col">Enrolled</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((e) => (
                      <tr key={e.id}>
                        <td>
                          {e.studentName} <span className="muted small">{e.studentId}</span>
                        </td>
                        <td>{e.status.toLowerCase()}</td>
                        <td>{e.progress}%</td>
                        <td>{formatDate(e.enrolledAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </QueryState>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              const form = e.currentTarget;
              const ids = String(new FormData(form).get('ids') ?? '')
                .split(/[\s,]+/)
                .filter(Boolean);
              enroll.mutate(ids, { onSuccess: () => form.reset() });
            }}
          >
            <label className="field">
              Enroll students (CRM contact ids, separated by commas)
              <input name="ids" required />
            </label>
            <button type="submit" disabled={enroll.isPending}>
              Enroll
            </button>
          </form>
          <ErrorMessage error={enroll.error} />
          {enroll.data ? (
            <Notice>
              {enroll.data.enrolled.length} enrolled, {enroll.data.alreadyEnrolled.length} already enrolled
              {enroll.data.failed.length > 0 ? `, not enrolled: ${enroll.data.failed.map((f) => `${f.studentId} (${f.message})`).join('; ')}` : ''}.
            </Notice>
          ) : null}
        </>
      )}
    </QueryState>
  );
}

/** A module's lessons in the editor, each linked to its editor (and an assignment to its grading). */
function LessonList({ lessons }: { lessons: OutlineLesson[] }) {
  return (
    <ol className="list">
      {lessons.map((l) => (
        <li key={l.id} className="row">
          <Link to={`/teach/lessons/${l.id}`}>{l.title}</Link>
          <span className="muted small">{lessonTypeLabel[l.type]}</span>
          {l.type === 'ASSIGNMENT' ? <Link to={`/teach/assignments/${l.id}`}>Submissions and grading</Link> : null}
        </li>
      ))}
    </ol>
  );
}
