/**
 * Lesson progress from xAPI (issue 15, deliverable 3): a `completed` or `passed` statement
 * about a lesson's activity by an enrolled learner completes the lesson through the progress
 * service, as the progress API would, unless the lesson opts out, is assessed (QUIZ,
 * ASSIGNMENT), is drip-locked, or the learner is not enrolled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectOk } from '../../helpers/expect.js';
import { createCourse, createLesson, enroll } from '../../helpers/factories.js';
import { DEMO_ADMIN_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID } from '../../../src/dev/crm-sim/fixtures.js';
import { enrollments, lessonProgress } from '../../../src/modules/enrollments/enrollments.tables.js';
import { issueCredential, lrs, post, statement, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;
beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t);
});
afterAll(async () => t.close());

const learner = (personId: string) => ({ objectType: 'Agent', account: { homePage: 'http://lms.test', name: personId } });
const lessonActivity = (lessonId: string) => ({ objectType: 'Activity', id: `http://lms.test/xapi/activities/lesson/${lessonId}` });
const COMPLETED = { id: 'http://adlnet.gov/expapi/verbs/completed', display: { en: 'completed' } };
const PASSED = { id: 'http://adlnet.gov/expapi/verbs/passed', display: { en: 'passed' } };

async function progressOf(lessonId: string, studentId: string) {
  const [row] = await t.db
    .select()
    .from(lessonProgress)
    .where(and(eq(lessonProgress.lessonId, lessonId), eq(lessonProgress.studentId, studentId)));
  return row ?? null;
}

async function setup(lessonCount = 2) {
  const course = await createCourse(t);
  const lessons = [];
  for (let i = 0; i < lessonCount; i++) lessons.push(await createLesson(t, { courseId: course.id, order: i + 1, title: `L${i + 1}` }));
  const enrollment = await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
  return { course, lessons, enrollment };
}

describe('completing lessons from statements', () => {
  it('a completed statement from a credential completes the lesson and recomputes the enrollment; the last one completes the course', async () => {
    const { lessons, enrollment } = await setup(2);
    await post(t, cred.authorization, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(lessons[0]!.id) }));
    const p = await progressOf(lessons[0]!.id, DEMO_STUDENT_ID);
    expect(p?.completed).toBe(true);
    const [e1] = await t.db.select().from(enrollments).where(eq(enrollments.id, enrollment.id));
    expect(e1!.progress).toBe(50);
    await post(
      t,
      cred.authorization,
      statement({ actor: learner(DEMO_STUDENT_ID), verb: PASSED, object: lessonActivity(lessons[1]!.id), result: { score: { scaled: 0.8 }, success: true } }),
    );
    const p2 = await progressOf(lessons[1]!.id, DEMO_STUDENT_ID);
    expect(p2?.completed).toBe(true);
    expect(p2?.score).toBe(80);
    const [e2] = await t.db.select().from(enrollments).where(eq(enrollments.id, enrollment.id));
    expect(e2!.status).toBe('COMPLETED');
    expect(e2!.finalScore).toBe(80);
  });

  it('the learner’s own session may complete their lesson with the same rule', async () => {
    const { lessons } = await setup(2);
    const student = `Bearer ${await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID })}`;
    await post(t, student, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(lessons[1]!.id) }));
    expect((await progressOf(lessons[1]!.id, DEMO_STUDENT_ID))?.completed).toBe(true);
  });

  it('does nothing (the statement is still stored) for: other verbs, unenrolled learners, opted-out, QUIZ and drip-locked lessons, other home pages', async () => {
    const course = await createCourse(t, { dripMode: 'SEQUENTIAL' });
    const first = await createLesson(t, { courseId: course.id, order: 1 });
    const second = await createLesson(t, { courseId: course.id, order: 2 });
    const optedOut = await createLesson(t, { courseId: course.id, order: 3, xapiCompletion: false });
    const quiz = await createLesson(t, { courseId: course.id, order: 4, type: 'QUIZ' });
    await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
    const cases = [
      statement({ actor: learner(DEMO_STUDENT_ID), verb: { id: 'http://adlnet.gov/expapi/verbs/attempted' }, object: lessonActivity(first.id) }),
      statement({ actor: learner(DEMO_SIBLING_ID), verb: COMPLETED, object: lessonActivity(first.id) }),
      statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(second.id) }),
      statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(optedOut.id) }),
      statement({ actor: learner(DEMO_STUDENT_ID), verb: PASSED, object: lessonActivity(quiz.id) }),
      statement({ actor: { account: { homePage: 'http://elsewhere.example', name: DEMO_STUDENT_ID } }, verb: COMPLETED, object: lessonActivity(first.id) }),
      statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: { id: 'http://lms.test/xapi/activities/lesson/not-a-lesson' } }),
    ];
    const ids = await post(t, cred.authorization, cases);
    expect(ids).toHaveLength(cases.length);
    for (const l of [first, second, optedOut, quiz]) expect((await progressOf(l.id, DEMO_STUDENT_ID))?.completed ?? false, l.id).toBe(false);
    expect(await progressOf(first.id, DEMO_SIBLING_ID)).toBeNull();
    // once the first lesson is complete the second unlocks, and the same statement then completes it
    await post(t, cred.authorization, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(first.id) }));
    await post(t, cred.authorization, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(second.id) }));
    expect((await progressOf(second.id, DEMO_STUDENT_ID))?.completed).toBe(true);
  });

  it('the per-lesson setting is part of the lesson API (default true)', async () => {
    const course = await createCourse(t, { ownerId: DEMO_ADMIN_ID });
    const admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    const lesson = expectOk(await t.request('POST', `/api/courses/${course.id}/lessons`, { token: admin, body: { title: 'Package', type: 'TEXT' } }), 201);
    expect(lesson.xapiCompletion).toBe(true);
    const changed = expectOk(await t.request('PATCH', `/api/lessons/${lesson.id}`, { token: admin, body: { xapiCompletion: false } }));
    expect(changed.xapiCompletion).toBe(false);
    await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
    await post(t, cred.authorization, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(lesson.id) }));
    expect(await progressOf(lesson.id, DEMO_STUDENT_ID)).toBeNull();
    // a voiding statement does not undo a completion (completion is sticky)
    const { lessons } = await setup(1);
    const [done] = await post(t, cred.authorization, statement({ actor: learner(DEMO_STUDENT_ID), verb: COMPLETED, object: lessonActivity(lessons[0]!.id) }));
    await post(t, cred.authorization, statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: done } }));
    expect((await progressOf(lessons[0]!.id, DEMO_STUDENT_ID))?.completed).toBe(true);
    expect((await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { voidedStatementId: done! } })).status).toBe(200);
  });
});
