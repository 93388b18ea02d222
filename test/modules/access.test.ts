/**
 * The access module: every "who may" rule is an action of `requireAccess`, and the README's
 * "Access rules" table lists every action. The rules that moved here from the services (course
 * self-enrollment, learning paths, compliance) answer as they did there.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectOk } from '../helpers/expect.js';
import { createCourse } from '../helpers/factories.js';
import { ACCESS_ACTIONS, requireAccess } from '../../src/modules/access/access.service.js';
import { serviceContext, type ServiceContext } from '../../src/platform/context.js';
import type { Role, Session } from '../../src/platform/auth/tokens.js';
import type { AppError } from '../../src/platform/http/errors.js';
import { DEMO_ADMIN_ID, DEMO_STUDENT_ID, DEMO_TEACHER2_ID, DEMO_TEACHER_ID } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

const ctxOf = (role: Role, id: string): ServiceContext => {
  const contact = role === 'STUDENT' || role === 'PARENT';
  const actor: Session = {
    userId: id,
    personId: id,
    institutionId: 'inst_demo',
    role,
    contactId: contact ? id : null,
    isContact: contact,
    contactType: contact ? `CONTACT_${role}` : null,
    permissions: [],
    email: null,
    name: null,
    expiresAt: null,
  };
  return serviceContext(t.deps, actor, t.deps.log as never, null);
};
const student = () => ctxOf('STUDENT', DEMO_STUDENT_ID);
const teacher = () => ctxOf('TEACHER', DEMO_TEACHER_ID);
const otherTeacher = () => ctxOf('TEACHER', DEMO_TEACHER2_ID);
const admin = () => ctxOf('ADMIN', DEMO_ADMIN_ID);

/** The error a rule throws: [status, code, message]. */
async function refusal(p: Promise<unknown>): Promise<[number, string, string]> {
  const err = (await p.then(
    () => null,
    (e: unknown) => e,
  )) as AppError | null;
  if (!err) throw new Error('the rule let the caller in');
  return [err.status, err.code, err.message];
}

describe('the README "Access rules" table', () => {
  it('lists every action of the access module, and no other', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Access rules'), readme.indexOf('\n## ', readme.indexOf('\n## Access rules') + 1));
    const listed = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!));
    expect([...listed].sort()).toEqual([...ACCESS_ACTIONS].sort());
  });
});

describe('course.selfEnroll', () => {
  it('lets a student into a PUBLISHED course while the institution allows self-enrollment', async () => {
    const published = await createCourse(t, { title: 'Open course' });
    const draft = await createCourse(t, { title: 'Draft course', status: 'DRAFT', publishedAt: null });
    expect(await requireAccess(student(), 'course.selfEnroll', published.id)).toMatchObject({ id: published.id });
    expect(await refusal(requireAccess(teacher(), 'course.selfEnroll', published.id))).toEqual([403, 'FORBIDDEN', 'Only students can self-enroll']);
    expect(await refusal(requireAccess(student(), 'course.selfEnroll', draft.id))).toEqual([404, 'NOT_FOUND', 'Course not found']);
    expect(await refusal(requireAccess(student(), 'course.selfEnroll', 'no-such-course'))).toEqual([404, 'NOT_FOUND', 'Course not found']);
    const adminToken = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    expectOk(await t.request('PATCH', '/api/settings', { token: adminToken, body: { allowSelfEnrollment: false } }));
    try {
      expect(await refusal(requireAccess(student(), 'course.selfEnroll', published.id))).toEqual([403, 'FORBIDDEN', 'Self-enrollment is turned off for this institution']);
      expect(await refusal(requireAccess(student(), 'learningPath.selfEnroll', null))).toEqual([403, 'FORBIDDEN', 'Self-enrollment is turned off for this institution']);
    } finally {
      expectOk(await t.request('PATCH', '/api/settings', { token: adminToken, body: { allowSelfEnrollment: true } }));
    }
  });
});

describe('learning paths', () => {
  it('view: managers any path, learners the PUBLISHED ones; edit: the creator or ADMIN; self-enroll: students', async () => {
    const teacherToken = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    const draft = expectOk(await t.request('POST', '/api/learning-paths', { token: teacherToken, body: { title: 'Draft path', status: 'DRAFT' } }), 201);
    const open = expectOk(await t.request('POST', '/api/learning-paths', { token: teacherToken, body: { title: 'Open path', status: 'PUBLISHED' } }), 201);

    expect(await requireAccess(student(), 'learningPath.view', open.id)).toMatchObject({ id: open.id });
    expect(await refusal(requireAccess(student(), 'learningPath.view', draft.id))).toEqual([404, 'NOT_FOUND', 'Learning path not found']);
    expect(await requireAccess(otherTeacher(), 'learningPath.view', draft.id)).toMatchObject({ id: draft.id });

    expect(await requireAccess(teacher(), 'learningPath.edit', draft.id)).toMatchObject({ id: draft.id });
    expect(await requireAccess(admin(), 'learningPath.edit', draft.id)).toMatchObject({ id: draft.id });
    expect(await refusal(requireAccess(otherTeacher(), 'learningPath.edit', draft.id))).toEqual([
      403,
      'FORBIDDEN',
      'Only the creator of this path or an administrator may change it',
    ]);
    expect(await refusal(requireAccess(student(), 'learningPath.edit', open.id))).toEqual([403, 'FORBIDDEN', 'Course authoring requires canManageCourses']);
    expect(await refusal(requireAccess(teacher(), 'learningPath.edit', 'no-such-path'))).toEqual([404, 'NOT_FOUND', 'Learning path not found']);

    expect(await requireAccess(student(), 'learningPath.selfEnroll', null)).toBeNull();
    expect(await refusal(requireAccess(teacher(), 'learningPath.selfEnroll', null))).toEqual([403, 'FORBIDDEN', 'Only students enroll themselves; staff pass studentIds']);
  });
});

describe('compliance', () => {
  it('trainings: managers only; records: managers see everyone, others themselves', async () => {
    expect(await requireAccess(teacher(), 'compliance.trainings', null)).toBeNull();
    expect(await refusal(requireAccess(student(), 'compliance.trainings', null))).toEqual([403, 'FORBIDDEN', 'Compliance trainings are for staff']);
    expect(await requireAccess(teacher(), 'compliance.records', null)).toEqual({ staff: true });
    expect(await requireAccess(student(), 'compliance.records', null)).toEqual({ staff: false });
    expect(await requireAccess(ctxOf('PARENT', 'c_demo_par_01'), 'compliance.records', null)).toEqual({ staff: false });
  });
});

describe('a course the caller may not know', () => {
  it('a draft or archived course and each of its lessons is 404 on every route for a learner who never enrolled, as an unknown id; a published one stays 403 ENROLLMENT_REQUIRED', async () => {
    const { createLesson, enroll } = await import('../helpers/factories.js');
    const stu = await t.token({ role: 'STUDENT', id: 'c_demo_stu_11' });
    const lessonRoutes = (text: string, quiz: string, assignment: string): Array<[string, string, Record<string, unknown>?]> => [
      ['GET', `/api/lessons/${text}`],
      ['GET', `/api/lessons/${text}/captions`],
      ['GET', `/api/lessons/${text}/notes`],
      ['GET', `/api/lessons/${text}/bookmarks`],
      ['POST', `/api/lessons/${text}/notes`, { content: 'x' }],
      ['POST', `/api/lessons/${text}/progress`, { progressPercent: 10 }],
      ['GET', `/api/lessons/${text}/blocks/intro/answer`],
      ['GET', `/api/lessons/${text}/discussions`],
      ['GET', `/api/quiz/${quiz}`],
      ['GET', `/api/quiz/${quiz}/attempts`],
      ['GET', `/api/assignments/${assignment}`],
    ];
    const make = async (status: 'DRAFT' | 'ARCHIVED' | 'PUBLISHED') => {
      const course = await createCourse(t, { title: `${status} course`, status, ...(status === 'DRAFT' ? { publishedAt: null } : {}) });
      const text = await createLesson(t, { courseId: course.id, type: 'TEXT', title: 'Reading' });
      const quiz = await createLesson(t, { courseId: course.id, type: 'QUIZ', title: 'Quiz' });
      const assignment = await createLesson(t, { courseId: course.id, type: 'ASSIGNMENT', title: 'Essay' });
      return {
        course,
        routes: [
          ['GET', `/api/learn/${course.id}`] as [string, string],
          ['GET', `/api/learn/${course.id}/${text.id}`] as [string, string],
          ...lessonRoutes(text.id, quiz.id, assignment.id),
        ],
      };
    };
    const statusOf = async ([method, url, body]: [string, string, Record<string, unknown>?]) => {
      const res = await t.request(method as 'GET', url, { token: stu, body });
      return `${method} ${url.replace(/\/[^/]*-[^/]*(?=\/|$)/g, '/:id')} ${res.status} ${res.body?.error?.code ?? ''}`;
    };
    for (const status of ['DRAFT', 'ARCHIVED'] as const) {
      const { routes } = await make(status);
      for (const route of routes) expect(await statusOf(route)).toMatch(/ 404 NOT_FOUND$/);
    }
    // A published course: the learner may know it, and is told to enroll.
    const published = await make('PUBLISHED');
    expect(await statusOf(published.routes[0]!)).toMatch(/ 403 ENROLLMENT_REQUIRED$/);
    expect(await statusOf(published.routes[2]!)).toMatch(/ 403 ENROLLMENT_REQUIRED$/);
    // A draft course the learner had an enrollment in (dropped since) is known: 403, and their own notes list answers.
    const known = await make('DRAFT');
    await enroll(t, { courseId: known.course.id, studentId: 'c_demo_stu_11', status: 'DROPPED' });
    expect(await statusOf(known.routes[0]!)).toMatch(/ 403 ENROLLMENT_REQUIRED$/);
    expect(await statusOf(known.routes[4]!)).toMatch(/ 200 $/);
  });
});
