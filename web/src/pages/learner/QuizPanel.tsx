import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { ErrorMessage, Notice, QueryState } from '../../components/Status';
import { formatTimestamp } from '../../format';
import type { Quiz, QuizAttempt, QuizQuestion } from '../../types';

type Answer = { questionId: string; optionIds?: string[]; value?: boolean | number; text?: string };

/** Reads the answers from the form: one control group per question, named by its id. */
function answersFrom(form: HTMLFormElement, questions: QuizQuestion[]): Answer[] {
  const data = new FormData(form);
  const answers: Answer[] = [];
  for (const q of questions) {
    const values = data.getAll(q.id).map(String);
    if (q.type === 'SINGLE_CHOICE' || q.type === 'MULTIPLE_CHOICE') {
      if (values.length > 0) answers.push({ questionId: q.id, optionIds: values });
    } else if (q.type === 'TRUE_FALSE') {
      if (values[0]) answers.push({ questionId: q.id, value: values[0] === 'true' });
    } else if (q.type === 'NUMERIC') {
      if (values[0] !== undefined && values[0] !== '') answers.push({ questionId: q.id, value: Number(values[0]) });
    } else if (values[0]?.trim()) {
      answers.push({ questionId: q.id, text: values[0] });
    }
  }
  return answers;
}

/** Time left until the deadline, ticking each second (announced only when a minute is left). */
function TimeLeft({ deadlineAt }: { deadlineAt: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(id);
  }, []);
  const left = Math.max(0, Math.round((new Date(deadlineAt).getTime() - now) / 1000));
  return (
    <p className={left < 60 ? 'tag warn' : 'tag'} role="timer" aria-live={left === 60 ? 'assertive' : 'off'}>
      Time left: <span className="timestamp">{formatTimestamp(left)}</span>
    </p>
  );
}

function QuestionField({ q, index }: { q: QuizQuestion; index: number }) {
  const legend = (
    <legend>
      {index + 1}. {q.prompt}{' '}
      <span className="muted small">
        ({q.points} {q.points === 1 ? 'point' : 'points'})
      </span>
    </legend>
  );
  if (q.type === 'SINGLE_CHOICE' || q.type === 'MULTIPLE_CHOICE') {
    return (
      <fieldset>
        {legend}
        {q.type === 'MULTIPLE_CHOICE' ? <p className="muted small">Choose every answer that applies.</p> : null}
        {q.options?.map((o) => (
          <label key={o.id} className="field inline">
            <input type={q.type === 'SINGLE_CHOICE' ? 'radio' : 'checkbox'} name={q.id} value={o.id} /> {o.text}
          </label>
        ))}
      </fieldset>
    );
  }
  if (q.type === 'TRUE_FALSE') {
    return (
      <fieldset>
        {legend}
        <label className="field inline">
          <input type="radio" name={q.id} value="true" /> True
        </label>
        <label className="field inline">
          <input type="radio" name={q.id} value="false" /> False
        </label>
      </fieldset>
    );
  }
  return (
    <fieldset>
      {legend}
      <label className="field">
        Your answer
        {q.type === 'NUMERIC' ? <input type="number" step="any" name={q.id} inputMode="decimal" /> : <input type="text" name={q.id} maxLength={1000} />}
      </label>
    </fieldset>
  );
}

/**
 * Quiz taking: rules and attempts, the time limit shown (a timed quiz shows its questions once
 * an attempt is started, and the time left while it runs), and the graded result.
 */
export function QuizPanel({ lessonId, courseId }: { lessonId: string; courseId: string }) {
  const key = ['quiz', lessonId];
  const quizQuery = useQuery({ queryKey: key, queryFn: () => api.get<Quiz>(`/api/quiz/${encodeURIComponent(lessonId)}`) });
  const [started, setStarted] = useState<{ attempt: QuizAttempt; quiz: Quiz } | null>(null);
  const queryClient = useQueryClient();
  const start = useMutation({
    mutationFn: () => api.post<{ attempt: QuizAttempt; quiz: Quiz }>(`/api/quiz/${encodeURIComponent(lessonId)}/start`),
    onSuccess: (r) => setStarted(r),
  });
  const submit = useMutation({
    mutationFn: (body: { attemptId?: string; answers: Answer[] }) =>
      api.post<QuizAttempt & { completion: { courseCompleted: boolean } | null }>(`/api/quiz/${encodeURIComponent(lessonId)}/attempt`, body),
    onSuccess: () => {
      setStarted(null);
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['learn', courseId] });
    },
  });

  return (
    <QueryState query={quizQuery} label="Loading the quiz">
      {(loaded) => {
        const quiz = started?.quiz ?? loaded;
        const attempt = started?.attempt ?? null;
        const mine = loaded.myAttempts;
        const questions = quiz.questions;
        const canAttempt = !mine || mine.remaining === null || mine.remaining > 0 || mine.inProgress !== null;
        return (
          <section aria-labelledby="quiz-heading">
            <h2 id="quiz-heading">{quiz.title}</h2>
            {quiz.description ? <p>{quiz.description}</p> : null}
            <ul className="row list-inline small">
              <li className="tag">{quiz.questionCount} questions</li>
              <li className="tag">Pass mark {quiz.passingScore}%</li>
              <li className="tag">{quiz.timeLimitMinutes ? `Time limit: ${quiz.timeLimitMinutes} minutes` : 'No time limit'}</li>
              <li className="tag">{quiz.maxAttempts ? `Attempts: ${mine?.used ?? 0} of ${quiz.maxAttempts}` : `Attempts used: ${mine?.used ?? 0}`}</li>
              {mine?.bestPercentage !== null && mine?.bestPercentage !== undefined ? <li className="tag ok">Best: {mine.bestPercentage}%</li> : null}
            </ul>
            {submit.data ? (
              <div role="status" className={submit.data.passed ? 'notice' : 'error'}>
                <p>
                  <strong>{submit.data.passed ? 'Passed.' : 'Not passed this time.'}</strong> You scored {submit.data.score} of {submit.data.maxScore} ({submit.data.percentage}%).
                </p>
                <ul>
                  {submit.data.results?.map((r, i) => (
                    <li key={r.questionId}>
                      Question {i + 1}: {r.correct ? 'correct' : 'not correct'} ({r.pointsAwarded} of {r.points})
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
            <ErrorMessage error={start.error ?? submit.error} />
            {!canAttempt ? (
              <Notice>You have used all your attempts.</Notice>
            ) : questions === null ? (
              <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>
                {mine?.inProgress ? 'Continue your attempt' : `Start the quiz (${quiz.timeLimitMinutes} minutes)`}
              </button>
            ) : (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  submit.mutate({ attemptId: attempt?.id ?? mine?.inProgress?.id, answers: answersFrom(e.currentTarget, questions) });
                }}
              >
                {attempt?.deadlineAt ? <TimeLeft deadlineAt={attempt.deadlineAt} /> : null}
                {questions.map((q, i) => (
                  <QuestionField key={q.id} q={q} index={i} />
                ))}
                <button type="submit" disabled={submit.isPending}>
                  Submit answers
                </button>
              </form>
            )}
          </section>
        );
      }}
    </QueryState>
  );
}
