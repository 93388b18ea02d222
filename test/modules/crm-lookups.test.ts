/**
 * Names in enrollment lists come from the CRM: one lookup per distinct person, cached, and an
 * id the CRM does not know is remembered briefly instead of being asked again on every list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, enroll } from '../helpers/factories.js';
import { expectOk } from '../helpers/expect.js';

let t: TestApp;
let teacher: string;
beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
});
afterAll(async () => t.close());

const lookups = () => t.crmSim.requests.filter((r) => r.path.startsWith('/api/lms/contact/') || r.path.startsWith('/api/lms/user/'));

describe('enrollment list names', () => {
  it('asks the CRM once per person, and remembers unknown people for a minute', async () => {
    const course = await createCourse(t);
    for (const id of ['c_demo_stu_01', 'c_demo_stu_02', 'c_gone_1', 'c_gone_2']) await enroll(t, { courseId: course.id, studentId: id });
    const list = async () => expectOk(await t.request('GET', `/api/courses/${course.id}/enrollments`, { token: teacher }));

    t.crmSim.resetRecords();
    const rows = await list();
    expect(Object.fromEntries(rows.map((r: any) => [r.studentId, r.studentName]))).toMatchObject({
      c_demo_stu_01: expect.not.stringMatching(/^Student /),
      c_gone_1: 'Student c_gone_1',
    });
    // Known contacts: one lookup each; unknown ids: the contact and then the staff-user lookup.
    expect(lookups()).toHaveLength(2 + 2 * 2);

    t.crmSim.resetRecords();
    await list();
    expect(lookups()).toHaveLength(0);

    // Past the not-found window the unknown ids are asked again (names are still cached).
    t.clock.advance(61_000);
    t.crmSim.resetRecords();
    await list();
    expect(
      lookups()
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/api/lms/contact/c_gone_1', '/api/lms/contact/c_gone_2', '/api/lms/user/c_gone_1', '/api/lms/user/c_gone_2']);
  });
});
