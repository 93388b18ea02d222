import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok, paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { listAttemptsQuery, quizParams, quizSchema, staffAttemptSchema, startResultSchema, submitAttemptBody, submitResultSchema, upsertQuizBody } from './quizzes.schemas.js';
import * as quizzes from './quizzes.service.js';

const tags = ['quizzes'];

const LEARNER_ACCESS =
  'Learners need what opening the lesson needs (`lesson.open`): an ACTIVE or COMPLETED enrollment (403 ENROLLMENT_REQUIRED), ' +
  'the lesson not drip-locked (403 LESSON_LOCKED) and, when the institution gates on fees, fees not overdue (402 FEE_OVERDUE).';

const FLOW =
  'Flow: `POST /start` opens an attempt (IN_PROGRESS; idempotent while open) and returns the questions; `POST /attempt` submits it. ' +
  'A submission later than the deadline + 30 s is refused (400) and recorded EXPIRED. Without an open attempt, `POST /attempt` alone starts ' +
  'and submits a new attempt in one step, also on a timed quiz (its time is zero; a timed quiz shows its questions only during an open ' +
  'attempt, from `/start` or `GET` while one is open, so skipping the start gains no time).';

/** Issue 11 (spec 4.9 quiz rows): a QUIZ lesson's quiz, its attempts and their grading. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/quiz/:id',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'getQuiz',
        summary: 'The quiz of a QUIZ lesson',
        description:
          'Course managers (canManageCourses) get the whole quiz with its answer key. Everyone else gets the learner view: no correct options, ' +
          'right answers, accepted answers, numeric answers, tolerances or explanations; questions and options shuffled when the quiz says so ' +
          '(stable per attempt); `myAttempts` with the attempts used and left and the open attempt. On a quiz with a time limit, `questions` is ' +
          `null until the learner starts an attempt. ${LEARNER_ACCESS} 404 when the lesson is not a QUIZ lesson or has no quiz yet.`,
        params: quizParams,
        response: { 200: envelope(quizSchema) },
      },
    },
    async (req) => ok(await quizzes.getQuiz(ctxOf(req), req.params.id)),
  );

  r.put(
    '/api/quiz/:id',
    {
      config: { recordScope: 'owner-edit' },
      schema: {
        tags,
        operationId: 'upsertQuiz',
        summary: 'Create or replace the quiz of a QUIZ lesson',
        description:
          'The course owner with canManageCourses, or an ADMIN (as for changing the lesson; others 403). 201 when the quiz is created, 200 when replaced. ' +
          'Question ids are assigned by the server; send one back to keep the question (an id the quiz does not have is 400). Per type: ' +
          'SINGLE_CHOICE: `options` (2–20, ids unique) and `correctOptionIds` with exactly one of them; MULTIPLE_CHOICE: `options` and at least one ' +
          'correct option; TRUE_FALSE: `correctAnswer` (boolean); SHORT_ANSWER: `acceptedAnswers` (1–50); NUMERIC: `numericAnswer` and ' +
          '`tolerance` >= 0 (default 0). A field of another type is 400. 400 VALIDATION_ERROR lists each problem with its field; ' +
          '400 too when the lesson is not a QUIZ lesson. Attempts already made stay as they were graded.',
        params: quizParams,
        body: upsertQuizBody,
        response: { 200: envelope(quizSchema), 201: envelope(quizSchema) },
      },
    },
    async (req, reply) => {
      const { created, quiz } = await quizzes.upsertQuiz(ctxOf(req), req.params.id, req.body);
      return reply.code(created ? 201 : 200).send(ok(quiz));
    },
  );

  r.post(
    '/api/quiz/:id/start',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'startQuizAttempt',
        summary: 'Start an attempt (or get the open one)',
        description:
          'Returns the caller’s open attempt (200) or starts a new one (201): status IN_PROGRESS, `startedAt` now and, on a quiz with a time ' +
          'limit, `deadlineAt` = startedAt + the limit. Also returns the quiz as the learner takes it, questions included. A new attempt counts ' +
          'against `maxAttempts` (409 ATTEMPT_LIMIT). An open attempt past its deadline + 30 s is recorded EXPIRED first. ' +
          `Needs an enrollment (403 ENROLLMENT_REQUIRED, also for managers). ${LEARNER_ACCESS} ${FLOW}`,
        params: quizParams,
        response: { 200: envelope(startResultSchema), 201: envelope(startResultSchema) },
      },
    },
    async (req, reply) => {
      const { created, ...data } = await quizzes.startAttempt(ctxOf(req), req.params.id);
      return reply.code(created ? 201 : 200).send(ok(data));
    },
  );

  r.post(
    '/api/quiz/:id/attempt',
    {
      config: { recordScope: 'institution', errors: ['FEE_OVERDUE'] },
      schema: {
        tags,
        operationId: 'submitQuizAttempt',
        summary: 'Submit an attempt: graded on the server',
        description:
          'Body: `{attemptId?, answers: [{questionId, optionIds? | value? | text?}]}`. Choice questions take `optionIds` (exactly the set of ' +
          'correct options scores), TRUE_FALSE a boolean `value`, NUMERIC a number `value` (right within the tolerance), SHORT_ANSWER `text` ' +
          '(compared without any whitespace and case-insensitively with the accepted answers). Unanswered questions score 0; ' +
          'an unknown question or option, a question answered twice, more than one option for a SINGLE_CHOICE question or the field of another type is 400 (nothing stored). ' +
          'The answer has the attempt with `score`, `maxScore`, `percentage`, `passed` (percentage >= passingScore) and per question ' +
          '`{questionId, correct, pointsAwarded, points}`, never the right answers or explanations. A passed attempt completes the lesson ' +
          '(`completion`: enrollment progress, course completion and certificate follow). 409 ATTEMPT_LIMIT beyond `maxAttempts`; ' +
          '409 CONFLICT for an `attemptId` already submitted or expired; 400 VALIDATION_ERROR for a submission after the deadline + 30 s ' +
          `(the attempt is recorded EXPIRED, not graded, not passed). ${LEARNER_ACCESS} ${FLOW}`,
        params: quizParams,
        body: submitAttemptBody,
        response: { 200: envelope(submitResultSchema) },
      },
    },
    async (req) => ok(await quizzes.submitAttempt(ctxOf(req), req.params.id, req.body)),
  );

  r.get(
    '/api/quiz/:id/attempts',
    {
      config: { recordScope: 'institution' },
      schema: {
        tags,
        operationId: 'listQuizAttempts',
        summary: 'Attempts at a quiz: course staff see all, anyone else their own',
        description:
          'Newest first; `page` and `perPage`/`limit` (default 20, max 100) with `meta`. Course managers (canManageCourses) see every ' +
          'student’s attempts (or one student’s with `studentId`) with `studentName` from the CRM (a generic label when it is unknown); ' +
          'anyone else of the institution sees only their own (`studentName` null), also after leaving the course. Results show per question ' +
          'whether the answer was right and the points, never the right answer or an explanation. An IN_PROGRESS attempt past its deadline + 30 s shows as EXPIRED. An unknown lesson, or one the caller may not know, 404 NOT_FOUND; 400 VALIDATION_ERROR for a bad page value.',
        params: quizParams,
        querystring: listAttemptsQuery,
        response: { 200: pagedEnvelope(staffAttemptSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await quizzes.listAttempts(ctxOf(req), req.params.id, req.query);
      return paged(rows, meta);
    },
  );
};

export const quizzesModule: AppModule = { name: 'quizzes', routes };
