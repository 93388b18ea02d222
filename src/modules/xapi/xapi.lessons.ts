import { serviceContext, type ServiceContext } from '../../platform/context.js';
import type { Session } from '../../platform/auth/tokens.js';
import { AppError } from '../../platform/http/errors.js';
import type { Course, Lesson } from '../courses/courses.tables.js';
import { requireAccess } from '../access/access.service.js';
import { completeFromLearningRecord } from '../progress/progress.service.js';
import type { LrsContext } from './xapi.context.js';
import { COMPLETING_VERBS, isObject, lessonIdOf, personIdOf, type JsonObject } from './xapi.keys.js';

/**
 * Lesson progress from xAPI (issue 15, deliverable 3). A statement whose verb is `completed` or
 * `passed`, whose object is a lesson's activity (`{PUBLIC_BASE_URL}/xapi/activities/lesson/{id}`)
 * and whose actor is one of the service's people (account `{homePage: PUBLIC_BASE_URL, name:
 * personId}`) completes that lesson for that person, through the progress service, in the
 * statement's transaction, when:
 * - the person may learn the lesson: the same rule as `POST /api/lessons/{id}/progress`
 *   (`lesson.learn`: an ACTIVE or COMPLETED enrollment, fees not overdue, not drip-locked),
 *   checked as that person before the transaction;
 * - the lesson allows it (`xapiCompletion`, default true);
 * - it is not a QUIZ or ASSIGNMENT lesson (those complete only through their assessment).
 * Otherwise the statement is stored all the same and nothing else happens (logged at info).
 * The score is `result.score.scaled` (as a percentage; negative counts as 0), else raw within
 * min and max, else none. Voiding the statement later does not undo the completion.
 */

interface PlannedCompletion {
  learner: Session;
  course: Course;
  lesson: Lesson;
  scorePercent: number | null;
}

function scoreOf(statement: JsonObject): number | null {
  const score = isObject(statement.result) && isObject(statement.result.score) ? statement.result.score : null;
  if (!score) return null;
  if (typeof score.scaled === 'number') return Math.max(0, score.scaled) * 100;
  const { raw, min, max } = score;
  if (typeof raw === 'number' && typeof min === 'number' && typeof max === 'number' && max > min) return ((raw - min) / (max - min)) * 100;
  return null;
}

/** The session a learner's progress is written as: theirs when they are the caller, else a learner session of the institution. */
function learnerSession(ctx: LrsContext, personId: string): Session {
  const self = ctx.principal.self;
  if (self && self.session.personId === personId) return self.session;
  return {
    userId: personId,
    personId,
    institutionId: ctx.institutionId,
    role: 'STUDENT',
    contactId: personId,
    isContact: true,
    contactType: 'CONTACT_STUDENT',
    permissions: [],
    email: null,
    name: null,
    expiresAt: null,
  };
}

const learnerContext = (ctx: LrsContext, learner: Session): ServiceContext => ({ ...serviceContext(ctx.deps, learner, ctx.log, ctx.requestId), db: ctx.db, inTx: ctx.inTx });

/** Before the statements' transaction: which of them complete which lessons, access checked as each learner. */
export async function planLessonCompletions(ctx: LrsContext, statements: JsonObject[]): Promise<PlannedCompletion[]> {
  const base = ctx.deps.config.publicBaseUrl;
  const planned = new Map<string, PlannedCompletion>();
  for (const s of statements) {
    const verbId = isObject(s.verb) ? s.verb.id : undefined;
    const object = s.object;
    if (typeof verbId !== 'string' || !COMPLETING_VERBS.has(verbId) || !isObject(object) || (object.objectType ?? 'Activity') !== 'Activity') continue;
    const lessonId = typeof object.id === 'string' ? lessonIdOf(object.id, base) : null;
    const personId = personIdOf(s.actor, base);
    if (!lessonId || !personId) continue;
    const learner = learnerSession(ctx, personId);
    const key = `${personId}\u0000${lessonId}`;
    const score = scoreOf(s);
    const seen = planned.get(key);
    if (seen) {
      if (score !== null) seen.scorePercent = Math.max(seen.scorePercent ?? 0, score);
      continue;
    }
    try {
      const { lesson, course } = await requireAccess(learnerContext(ctx, learner), 'lesson.learn', lessonId);
      if (!lesson.xapiCompletion) {
        ctx.log.info({ lessonId, personId }, 'xapi: the lesson does not take completion from statements');
        continue;
      }
      planned.set(key, { learner, course, lesson, scorePercent: score });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.log.info({ lessonId, personId, code: err.code }, 'xapi: a completing statement does not complete the lesson');
    }
  }
  return [...planned.values()];
}

/** In the statements' transaction: the progress writes. A learner who lost their enrollment meanwhile is skipped. */
export async function applyLessonCompletions(tx: LrsContext, planned: PlannedCompletion[]): Promise<void> {
  for (const p of planned) {
    try {
      await completeFromLearningRecord(learnerContext(tx, p.learner), p.course, p.lesson, p.scorePercent);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'ENROLLMENT_REQUIRED') throw err;
      tx.log.info({ lessonId: p.lesson.id, personId: p.learner.personId }, 'xapi: the enrollment ended before the completion was written');
    }
  }
}
