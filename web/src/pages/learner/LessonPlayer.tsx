import { useRef } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useTitle } from '../../components/Layout';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { lessonTypeLabel } from '../../format';
import { useSession } from '../../session';
import type { LessonView } from '../../types';
import { VideoLesson } from './VideoLesson';
import { QuizPanel } from './QuizPanel';
import { AssignmentPanel } from './AssignmentPanel';

/** Marks a reading, PDF or video lesson complete (quizzes and assignments complete through their assessment). */
function CompleteButton({ lessonId, courseId, completed }: { lessonId: string; courseId: string; completed: boolean }) {
  const queryClient = useQueryClient();
  const complete = useMutation({
    mutationFn: () => api.post<{ progress: number; courseCompleted: boolean }>(`/api/lessons/${encodeURIComponent(lessonId)}/progress`, { completed: true }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['learn', courseId] });
      void queryClient.invalidateQueries({ queryKey: ['my-courses'] });
    },
  });
  if (completed || complete.isSuccess) {
    return <Notice>{complete.data?.courseCompleted ? 'Lesson completed, and with it the course. Well done!' : 'Lesson completed.'}</Notice>;
  }
  return (
    <>
      <ErrorMessage error={complete.error} />
      <button type="button" onClick={() => complete.mutate()} disabled={complete.isPending}>
        Mark as complete
      </button>
    </>
  );
}

export function LessonPlayer() {
  const { courseId = '', lessonId = '' } = useParams();
  const [params] = useSearchParams();
  const session = useSession();
  const startAt = Number(params.get('t') ?? '') || 0;
  const view = useQuery({
    queryKey: ['learn', courseId, lessonId],
    queryFn: () => api.get<LessonView>(`/api/learn/${encodeURIComponent(courseId)}/${encodeURIComponent(lessonId)}`),
  });
  useTitle(view.data?.lesson.title ?? 'Lesson');
  const headingRef = useRef<HTMLHeadingElement>(null);
  const isLearner = session.role === 'STUDENT';

  return (
    <>
      <p className="small">
        <Link to={`/courses/${courseId}`}>Back to the course outline</Link>
      </p>
      <QueryState query={view} label="Loading the lesson">
        {(v) => {
          const l = v.lesson;
          const completed = v.progress?.completed ?? false;
          return (
            <article aria-labelledby="lesson-title">
              <h1 id="lesson-title" ref={headingRef}>
                {l.title}
              </h1>
              <p className="muted small">
                {lessonTypeLabel[l.type]}
                {completed ? ' · completed' : ''}
              </p>
              {l.type === 'VIDEO' ? <VideoLesson lesson={l} startAt={startAt || v.progress?.positionSeconds || 0} canAnnotate={isLearner} /> : null}
              {l.type === 'TEXT' ? <div className="prose">{l.content}</div> : null}
              {l.type === 'PDF' && l.content ? (
                <>
                  <iframe className="pdf-frame" src={l.content} title={`PDF: ${l.title}`} />
                  <p>
                    <a href={l.content} target="_blank" rel="noreferrer">
                      Open the PDF in a new tab
                    </a>
                  </p>
                </>
              ) : null}
              {l.type === 'QUIZ' ? <QuizPanel lessonId={l.id} courseId={courseId} /> : null}
              {l.type === 'ASSIGNMENT' ? <AssignmentPanel lessonId={l.id} canSubmit={isLearner} /> : null}
              {['SCORM', 'LIVE', 'INTERACTIVE'].includes(l.type) ? <p>This kind of lesson opens in the course’s own player, which the web app does not show yet.</p> : null}
              {isLearner && ['VIDEO', 'TEXT', 'PDF'].includes(l.type) ? <CompleteButton lessonId={l.id} courseId={courseId} completed={completed} /> : null}
              <nav aria-label="Lessons" className="row" style={{ marginTop: '1.5rem' }}>
                {v.previousLessonId ? <Link to={`/courses/${courseId}/lessons/${v.previousLessonId}`}>← Previous lesson</Link> : null}
                {v.nextLessonId ? <Link to={`/courses/${courseId}/lessons/${v.nextLessonId}`}>Next lesson →</Link> : null}
              </nav>
            </article>
          );
        }}
      </QueryState>
    </>
  );
}
