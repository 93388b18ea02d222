import { Link, useParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { QueryState } from '../../components/Status';
import { formatDateTime, lessonTypeLabel } from '../../format';
import type { Outline, OutlineLesson } from '../../types';

function lockText(l: OutlineLesson): string {
  if (l.lockReason === 'SEQUENTIAL') return 'Locked: complete the lessons before it first';
  return l.unlocksAt ? `Locked until ${formatDateTime(l.unlocksAt)}` : 'Locked';
}

function LessonRow({ courseId, lesson }: { courseId: string; lesson: OutlineLesson }) {
  const meta = [lessonTypeLabel[lesson.type], lesson.isRequired ? null : 'optional'].filter(Boolean).join(' · ');
  return (
    <li className={lesson.locked ? 'locked' : undefined}>
      <div className="row">
        {lesson.locked ? (
          <span>
            <span aria-hidden="true">🔒 </span>
            {lesson.title}
          </span>
        ) : (
          <Link to={`/courses/${courseId}/lessons/${lesson.id}`}>{lesson.title}</Link>
        )}
        <span className="muted small">{meta}</span>
        {lesson.completed ? <span className="tag ok">Completed</span> : lesson.progressPercent > 0 ? <span className="tag">{lesson.progressPercent}%</span> : null}
        {lesson.locked ? <span className="tag warn">{lockText(lesson)}</span> : null}
      </div>
    </li>
  );
}

/** The course outline: modules and lessons, completion, and drip locks with their unlock dates. */
export function CourseOutline() {
  const { courseId = '' } = useParams();
  const outline = useQuery({ queryKey: ['learn', courseId], queryFn: () => api.get<Outline>(`/api/learn/${encodeURIComponent(courseId)}`) });
  useTitle(outline.data?.course.title ?? 'Course');
  return (
    <QueryState query={outline} label="Loading the course">
      {(o) => (
        <>
          <h1>{o.course.title}</h1>
          {o.course.description ? <p>{o.course.description}</p> : null}
          {o.enrollment ? (
            <label className="small" style={{ display: 'block', maxWidth: '24rem' }}>
              Your progress: {o.enrollment.progress}%
              <progress max={100} value={o.enrollment.progress} />
            </label>
          ) : null}
          {o.modules.map((m) => (
            <section key={m.id} aria-labelledby={`module-${m.id}`}>
              <h2 id={`module-${m.id}`}>{m.title}</h2>
              <ol className="list outline">
                {m.lessons.map((l) => (
                  <LessonRow key={l.id} courseId={o.course.id} lesson={l} />
                ))}
              </ol>
            </section>
          ))}
          {o.lessonsWithoutModule.length > 0 ? (
            <section aria-labelledby="more-lessons">
              <h2 id="more-lessons">More lessons</h2>
              <ol className="list outline">
                {o.lessonsWithoutModule.map((l) => (
                  <LessonRow key={l.id} courseId={o.course.id} lesson={l} />
                ))}
              </ol>
            </section>
          ) : null}
        </>
      )}
    </QueryState>
  );
}
