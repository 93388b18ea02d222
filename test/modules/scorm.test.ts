/**
 * SCORM packages (issue 15) through HTTP, with two packages built in the tests (SCORM 1.2 and
 * SCORM 2004 4th edition): upload and import, the zip safety limits, launch, the content route,
 * tracking against each version's data model, resume, completion into lesson and course
 * progress, the launch page's run-time API adapter, and who may do what.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { MANIFEST_12, patchBytes, patchDeclaredSize, scorm12Package, scorm2004Package, zipOf } from '../helpers/scorm-packages.js';
import { scormAttempts, scormPackageFiles, scormPackages } from '../../src/modules/scorm/scorm.tables.js';
import { enrollments, lessonProgress } from '../../src/modules/enrollments/enrollments.tables.js';
import { auditLog } from '../../src/modules/audit/audit.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { crmCompletions } from '../../src/modules/sync/sync.tables.js';
import { LocalStorage } from '../../src/platform/storage/index.js';
import {
  DEMO_ADMIN_ID,
  DEMO_SIBLING_ID,
  DEMO_STUDENT_ID,
  DEMO_TEACHER2_ID,
  DEMO_TEACHER_ID,
  DEMO_UNRELATED_STUDENT_ID,
  NORTH_ADMIN_ID,
  NORTH_STUDENT_ID,
  SECOND_INSTITUTION,
} from '../../src/dev/crm-sim/fixtures.js';

const MiB = 1024 * 1024;

let t: TestApp;
let admin: string;
let teacher: string;
let student: string;

beforeAll(async () => {
  t = await createTestApp({
    env: {
      // Small bounds so the bombs stay small: 4 MiB an entry, 6 MiB in all, 40 entries, ratio 100.
      SCORM_MAX_PACKAGE_BYTES: String(16 * MiB),
      SCORM_MAX_ENTRY_BYTES: String(4 * MiB),
      SCORM_MAX_UNCOMPRESSED_BYTES: String(6 * MiB),
      SCORM_MAX_ENTRIES: '40',
      SCORM_MAX_COMPRESSION_RATIO: '100',
    },
  });
  admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
  teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
  student = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
});

afterAll(async () => {
  await t?.close();
});

/** A published course of the teacher with a SCORM lesson (and a TEXT lesson, so one lesson is not the whole course), the student enrolled. */
async function scormCourse(opts: { textLesson?: boolean } = {}) {
  const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID });
  const lesson = await createLesson(t, { courseId: course.id, type: 'SCORM', title: 'Virtual microscope lab', order: 1 });
  const text = opts.textLesson ? await createLesson(t, { courseId: course.id, type: 'TEXT', title: 'Reading', order: 2 }) : null;
  const enrollment = await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
  return { course, lesson, text, enrollment };
}

async function upload(token: string, lessonId: string, zip: Buffer, contentType = 'application/zip') {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/api/scorm/${lessonId}/package`,
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload: zip,
  });
  return { status: res.statusCode, body: res.json(), raw: res.body };
}

const launch = (token: string, lessonId: string, scoId?: string) => t.request('GET', `/api/scorm/${lessonId}/launch`, { token, query: scoId ? { scoId } : undefined });
const track = (token: string, lessonId: string, body: unknown) => t.request('POST', `/api/scorm/${lessonId}/track`, { token, body });

/** GET a content URL (absolute, from a launch) with a token. */
async function fetchContent(url: string, token?: string) {
  const u = new URL(url);
  return t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

async function storedScormObjects(): Promise<string[]> {
  const root = (t.deps.storage as LocalStorage).root;
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else out.push(path.relative(root, full));
    }
  };
  await walk(root);
  return out.filter((f) => f.split(path.sep).includes('scorm') && !f.startsWith('.'));
}

describe('SCORM 1.2 package: import, launch, content', () => {
  let lessonId: string;
  let pkg: any;

  beforeAll(async () => {
    const { lesson } = await scormCourse();
    lessonId = lesson.id;
    const res = await upload(teacher, lessonId, await scorm12Package());
    pkg = expectOk(res, 201);
  });

  it('imports the manifest: version, organization, the SCO with its launch, mastery score and LMS data', async () => {
    expect(pkg).toMatchObject({
      lessonId,
      version: '1.2',
      schemaVersion: '1.2',
      manifestIdentifier: 'com.example.microscope12',
      title: 'Virtual microscope lab (SCORM 1.2)',
      organizationIdentifier: 'org_microscope',
      fileCount: 4,
      replacedPackageId: null,
    });
    expect(pkg.organization).toEqual([{ identifier: 'item_lab', title: 'The lab', launchable: true, isVisible: true, children: [] }]);
    expect(pkg.scos).toHaveLength(1);
    expect(pkg.scos[0]).toMatchObject({
      identifier: 'item_lab',
      resourceIdentifier: 'res_lab',
      scormType: 'sco',
      launchPath: 'lab/index.html',
      launchQuery: '?mode=lab',
      masteryScore: 80,
      launchData: 'slide=3',
      maxTimeAllowed: '00:30:00',
      timeLimitAction: 'continue,no message',
    });
    const files = await t.db.select().from(scormPackageFiles).where(eq(scormPackageFiles.packageId, pkg.id));
    expect(files.map((f) => f.path).sort()).toEqual(['imsmanifest.xml', 'lab/img/cell.svg', 'lab/index.html', 'shared/style.css']);
    const [row] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'scorm.upload'), eq(auditLog.targetId, lessonId)));
    expect(row?.actorId).toBe(DEMO_TEACHER_ID);
  });

  it('a first launch is ab-initio with the learner, credit, mode and LMS data in the CMI state; write-only elements are not readable', async () => {
    const l = expectOk(await launch(student, lessonId));
    expect(l).toMatchObject({ lessonId, packageId: pkg.id, version: '1.2', attempt: null });
    expect(l.state).toEqual({
      entry: 'ab-initio',
      mode: 'normal',
      credit: 'credit',
      location: '',
      suspendData: '',
      completionStatus: 'not attempted',
      successStatus: 'unknown',
      scorePercent: null,
      totalTime: '0000:00:00.00',
    });
    expect(l.cmi).toMatchObject({
      'cmi.core.student_id': DEMO_STUDENT_ID,
      'cmi.core.entry': 'ab-initio',
      'cmi.core.credit': 'credit',
      'cmi.core.lesson_mode': 'normal',
      'cmi.core.lesson_status': 'not attempted',
      'cmi.launch_data': 'slide=3',
      'cmi.student_data.mastery_score': '80',
      'cmi.interactions._count': '0',
      'cmi.core._children': expect.stringContaining('lesson_status'),
    });
    // SCORM 1.2: "Last, First", from the learner's CRM record.
    const { firstName, lastName } = t.crmSim.data.inst_demo!.students.find((s) => s.contact.id === DEMO_STUDENT_ID)!.contact;
    expect(l.cmi['cmi.core.student_name']).toBe(`${lastName}, ${firstName}`);
    // Staff previewing (browse) too: their CRM user record.
    const staff = t.crmSim.data.inst_demo!.staff.find((u) => u.id === DEMO_TEACHER_ID)!;
    expect(expectOk(await launch(teacher, lessonId)).cmi['cmi.core.student_name']).toBe(`${staff.lastName}, ${staff.firstName}`);
    expect(l.cmi).not.toHaveProperty('cmi.core.exit');
    expect(l.cmi).not.toHaveProperty('cmi.core.session_time');
    expect(l.launchUrl).toMatch(new RegExp(`^http://lms\\.test/api/scorm/${lessonId}/content/\\d+-[0-9a-f]{64}/lab/index\\.html\\?mode=lab$`));
    expect(l.launchUrl.startsWith(l.contentBaseUrl)).toBe(true);
  });

  it('serves the package files under the launch grant with their content types; relative links resolve under it', async () => {
    const l = expectOk(await launch(student, lessonId));
    const page = await fetchContent(l.launchUrl, student);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<h1>The lab</h1>');
    // The SCO's relative links: ../shared/style.css and img/cell.svg from lab/index.html.
    const css = await fetchContent(new URL('../shared/style.css', l.launchUrl).toString(), student);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const svg = await fetchContent(new URL('img/cell.svg', l.launchUrl).toString(), student);
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expectError(
      {
        status: (await fetchContent(`${l.contentBaseUrl}lab/missing.html`, student)).statusCode,
        body: (await fetchContent(`${l.contentBaseUrl}lab/missing.html`, student)).json(),
      },
      404,
      'NOT_FOUND',
    );
  });

  it('content needs the session of the person the grant was issued to: none 401, another person 404, a forged grant 404, an expired one 403', async () => {
    const l = expectOk(await launch(student, lessonId));
    expect((await fetchContent(l.launchUrl)).statusCode).toBe(401);
    const sibling = await t.token({ role: 'STUDENT', id: DEMO_SIBLING_ID });
    expect((await fetchContent(l.launchUrl, sibling)).statusCode).toBe(404);
    const north = await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: SECOND_INSTITUTION.id });
    expect((await fetchContent(l.launchUrl, north)).statusCode).toBe(404);
    const forged = l.launchUrl.replace(/-([0-9a-f])/, (_m: string, c: string) => `-${c === 'a' ? 'b' : 'a'}`);
    expect((await fetchContent(forged, student)).statusCode).toBe(404);
    t.clock.advance(9 * 3600 * 1000);
    try {
      const expired = await fetchContent(l.launchUrl, await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID }));
      expectError({ status: expired.statusCode, body: expired.json() }, 403, 'FORBIDDEN');
    } finally {
      t.clock.advance(-9 * 3600 * 1000);
    }
  });
});

describe('SCORM 1.2 tracking', () => {
  it('suspend then relaunch resumes with suspend_data and location; session times add up', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const first = expectOk(await launch(student, lesson.id));
    const scoId = first.sco.id;
    const saved = expectOk(
      await track(student, lesson.id, {
        scoId,
        values: {
          'cmi.core.lesson_status': 'incomplete',
          'cmi.core.lesson_location': 'page-3',
          'cmi.suspend_data': 'A1B2;visited=1,2,3',
          'cmi.core.exit': 'suspend',
          'cmi.core.session_time': '0000:10:30.50',
        },
        terminate: true,
      }),
    );
    expect(saved.attempts[0]).toMatchObject({ attemptNumber: 1, status: 'SUSPENDED', completionStatus: 'incomplete', completed: false, totalTime: '0000:10:30.50' });
    expect(saved.lesson).toMatchObject({ completed: false, scos: 1, completedScos: 0 });
    expect(saved.progress).toMatchObject({ lessonId: lesson.id, completed: false });

    const again = expectOk(await launch(student, lesson.id));
    expect(again.attempt).toMatchObject({ id: saved.attempts[0].attemptId, number: 1, status: 'SUSPENDED' });
    expect(again.state).toMatchObject({ entry: 'resume', location: 'page-3', suspendData: 'A1B2;visited=1,2,3', completionStatus: 'incomplete', totalTime: '0000:10:30.50' });
    expect(again.cmi).toMatchObject({
      'cmi.core.entry': 'resume',
      'cmi.suspend_data': 'A1B2;visited=1,2,3',
      'cmi.core.lesson_location': 'page-3',
      'cmi.core.lesson_status': 'incomplete',
    });
    // The session's exit is not carried over as a value.
    expect(again.cmi).not.toHaveProperty('cmi.core.exit');

    // A second session of the same attempt; a commit without terminate keeps it open.
    const committed = expectOk(await track(student, lesson.id, { scoId, attemptId: again.attempt.id, values: { 'cmi.core.lesson_location': 'page-4' } }));
    expect(committed.attempts[0]).toMatchObject({ attemptId: again.attempt.id, status: 'IN_PROGRESS' });
    const third = expectOk(await launch(student, lesson.id));
    expect(third.state.entry).toBe('');
    expect(third.state.location).toBe('page-4');
  });

  it('mastery score: a raw score at or above it passes and completes the lesson and the course; the score is recorded on progress', async () => {
    const { course, lesson, enrollment } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const { sco } = expectOk(await launch(student, lesson.id));
    // Below the mastery score (80): failed, whatever the SCO says.
    const low = expectOk(await track(student, lesson.id, { scoId: sco.id, values: { 'cmi.core.lesson_status': 'completed', 'cmi.core.score.raw': '60' } }));
    expect(low.attempts[0]).toMatchObject({
      completionStatus: 'completed',
      successStatus: 'failed',
      completed: false,
      scorePercent: 60,
      lmsValues: { 'cmi.core.lesson_status': 'failed' },
    });
    expect(low.progress.completed).toBe(false);
    const high = expectOk(
      await track(student, lesson.id, {
        scoId: sco.id,
        values: { 'cmi.core.score.min': '0', 'cmi.core.score.max': '100', 'cmi.core.score.raw': '85.5', 'cmi.core.session_time': '00:05:00' },
        terminate: true,
      }),
    );
    expect(high.attempts[0]).toMatchObject({ status: 'ENDED', successStatus: 'passed', completed: true, scorePercent: 85.5, lmsValues: { 'cmi.core.lesson_status': 'passed' } });
    expect(high.lesson).toMatchObject({ completed: true, scorePercent: 85.5, progressPercent: 100 });
    expect(high.progress).toMatchObject({ completed: true, progress: 100, status: 'COMPLETED', courseCompleted: true, completedNow: true });
    const [progress] = await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.enrollmentId, enrollment.id), eq(lessonProgress.lessonId, lesson.id)));
    expect(progress).toMatchObject({ completed: true, score: 85.5, progressPercent: 100 });
    const [e] = await t.db.select().from(enrollments).where(eq(enrollments.id, enrollment.id));
    expect(e).toMatchObject({ status: 'COMPLETED', finalScore: 85.5 });
    // The CRM completion push is recorded with the course (outbox row in the same transaction).
    const [outbox] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, enrollment.id));
    expect(outbox?.payload).toMatchObject({ courseId: course.id, studentContactId: DEMO_STUDENT_ID, finalScore: 85.5 });

    // The attempt ended (terminated once passed): the next launch starts a new attempt.
    const next = expectOk(await launch(student, lesson.id));
    expect(next.attempt).toBeNull();
    expect(next.state.entry).toBe('ab-initio');
    expect(next.scos[0].completed).toBe(true);
    const second = expectOk(await track(student, lesson.id, { scoId: sco.id, values: { 'cmi.core.lesson_location': 'x' } }));
    expect(second.attempts[0].attemptNumber).toBe(2);
    // Completion is sticky.
    expect(second.progress.completed).toBe(true);
    // Without scoId the item is for the first SCO, as a launch without one is: the same open attempt.
    const implicit = expectOk(await track(student, lesson.id, { values: { 'cmi.core.lesson_location': 'y' } }));
    expect(implicit.attempts[0]).toMatchObject({ scoId: sco.id, attemptNumber: 2 });
  });

  it('the lesson cannot be completed by a plain progress call', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const res = await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { completed: true } });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('tracking');
    const pct = await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token: student, body: { progressPercent: 100 } });
    expectError(pct, 409, 'CONFLICT');
  });

  it('refuses, with SCORM 1.2 error codes, unknown and keyword elements, read-only writes, bad vocabularies, timespans, scores and lengths; nothing is stored', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const { sco } = expectOk(await launch(student, lesson.id));
    const res = await track(student, lesson.id, {
      scoId: sco.id,
      values: {
        'cmi.core.lesson_location': 'kept?',
        'cmi.core.nonsense': 'x',
        'cmi.core._children': 'x',
        'cmi.core.student_id': 'me',
        'cmi.core.credit': 'no-credit',
        'cmi.core.lesson_status': 'not attempted',
        'cmi.core.exit': 'normal',
        'cmi.core.session_time': 'PT10M',
        'cmi.core.score.raw': '101',
        'cmi.core.score.min': 'abc',
        'cmi.suspend_data': 'x'.repeat(4097),
        'cmi.objectives.1.id': 'skips-0',
        'cmi.interactions.0.type': 'essay',
        'cmi.interactions.0.latency': '1:2:3',
        'cmi.student_preference.audio': '101',
      },
    });
    expectError(res, 400, 'VALIDATION_ERROR');
    const codes = Object.fromEntries(res.body.error.details.errors.map((e: { element: string; code: number }) => [e.element, e.code]));
    expect(codes).toEqual({
      'cmi.core.nonsense': 201,
      'cmi.core._children': 402,
      'cmi.core.student_id': 403,
      'cmi.core.credit': 403,
      'cmi.core.lesson_status': 405,
      'cmi.core.exit': 405,
      'cmi.core.session_time': 405,
      'cmi.core.score.raw': 405,
      'cmi.core.score.min': 405,
      'cmi.suspend_data': 405,
      'cmi.objectives.1.id': 201,
      'cmi.interactions.0.type': 405,
      'cmi.interactions.0.latency': 405,
      'cmi.student_preference.audio': 405,
    });
    expect(res.body.error.details.version).toBe('1.2');
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.lessonId, lesson.id))).toEqual([]);
  });

  it('accepts the whole 1.2 data model a SCO writes: objectives and interactions in index order, preferences, comments', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const { sco } = expectOk(await launch(student, lesson.id));
    const res = await track(student, lesson.id, {
      scoId: sco.id,
      values: {
        'cmi.objectives.0.id': 'obj_focus',
        'cmi.objectives.0.score.raw': '70',
        'cmi.objectives.0.status': 'not attempted',
        'cmi.objectives.1.id': 'obj_stain',
        'cmi.interactions.0.id': 'q1',
        'cmi.interactions.0.type': 'choice',
        'cmi.interactions.0.objectives.0.id': 'obj_focus',
        'cmi.interactions.0.time': '14:05:10',
        'cmi.interactions.0.correct_responses.0.pattern': 'b',
        'cmi.interactions.0.student_response': 'b',
        'cmi.interactions.0.result': 'correct',
        'cmi.interactions.0.weighting': '1',
        'cmi.interactions.0.latency': '0000:00:12.5',
        'cmi.interactions.1.id': 'q2',
        'cmi.interactions.1.result': '0.5',
        'cmi.student_preference.language': 'en',
        'cmi.student_preference.speed': '-20',
        'cmi.student_preference.text': '1',
        'cmi.comments': 'Nice lab',
        'cmi.core.score.raw': '',
      },
    });
    expectOk(res);
    const l = expectOk(await launch(student, lesson.id));
    expect(l.cmi).toMatchObject({ 'cmi.objectives._count': '2', 'cmi.interactions._count': '2', 'cmi.objectives.0.id': 'obj_focus', 'cmi.comments': 'Nice lab' });
    // Interactions are write-only in 1.2: counted, not readable.
    expect(l.cmi).not.toHaveProperty('cmi.interactions.0.id');
  });
});

describe('SCORM 2004 4th edition package', () => {
  let lessonId: string;
  let pkg: any;

  beforeAll(async () => {
    const { lesson } = await scormCourse();
    lessonId = lesson.id;
    pkg = expectOk(await upload(teacher, lessonId, await scorm2004Package()), 201);
  });

  it('imports with namespaces resolved whatever the prefixes: xml:base, parameters, scormType, passing score, completion threshold, sequencing', () => {
    expect(pkg).toMatchObject({
      version: '2004',
      schemaVersion: '2004 4th Edition',
      manifestIdentifier: 'com.example.microscope2004',
      title: 'Virtual microscope lab (SCORM 2004)',
    });
    expect(pkg.scos.map((s: any) => [s.identifier, s.scormType, s.launchPath, s.launchQuery])).toEqual([
      ['item_intro', 'sco', 'content/intro/index.html', ''],
      ['item_check', 'sco', 'content/check/index.html', '?lang=en#start'],
    ]);
    expect(pkg.scos[0]).toMatchObject({ launchData: 'intro-data', scaledPassingScore: null, completionThreshold: null, sequencing: null });
    expect(pkg.scos[1]).toMatchObject({ scaledPassingScore: 0.6, completionThreshold: 0.8, maxTimeAllowed: 'PT1H' });
    expect(JSON.stringify(pkg.scos[1].sequencing)).toContain('"primaryObjective"');
    expect(JSON.stringify(pkg.scos[1].sequencing)).toContain('"deliveryControls"');
    expect(pkg.sequencing[0]).toMatchObject({ name: 'sequencing', children: [{ name: 'controlMode', attributes: { choice: 'true', flow: 'true' } }] });
  });

  it('launches the first SCO by default and another by id or identifier, with the 2004 CMI state', async () => {
    const first = expectOk(await launch(student, lessonId));
    expect(first.sco.identifier).toBe('item_intro');
    expect(first.cmi).toMatchObject({
      'cmi._version': '1.0',
      'cmi.learner_id': DEMO_STUDENT_ID,
      'cmi.entry': 'ab-initio',
      'cmi.mode': 'normal',
      'cmi.credit': 'credit',
      'cmi.completion_status': 'unknown',
      'cmi.success_status': 'unknown',
      'cmi.launch_data': 'intro-data',
      'cmi.total_time': 'PT0H0M0S',
      'cmi.score._children': 'scaled,raw,min,max',
    });
    // 2004's learner_name has no "Last, First" rule: the display name.
    const { firstName, lastName } = t.crmSim.data.inst_demo!.students.find((s) => s.contact.id === DEMO_STUDENT_ID)!.contact;
    expect(first.cmi['cmi.learner_name']).toBe(`${firstName} ${lastName}`);
    expect(first.cmi).not.toHaveProperty('cmi.scaled_passing_score');
    const check = expectOk(await launch(student, lessonId, 'item_check'));
    expect(check.sco.identifier).toBe('item_check');
    expect(check.cmi).toMatchObject({ 'cmi.scaled_passing_score': '0.6', 'cmi.completion_threshold': '0.8', 'cmi.max_time_allowed': 'PT1H' });
    expect(check.launchUrl.endsWith('/content/check/index.html?lang=en#start')).toBe(true);
    const byId = expectOk(await launch(student, lessonId, check.sco.id));
    expect(byId.sco.identifier).toBe('item_check');
    expectError(await launch(student, lessonId, 'no_such_item'), 404, 'NOT_FOUND');
    const css = await fetchContent(`${check.contentBaseUrl}content/shared/style.css`, student);
    expect(css.statusCode).toBe(200);
  });

  it('suspend and resume (cmi.exit suspend, cmi.entry resume, cmi.location, suspend_data)', async () => {
    const { sco } = expectOk(await launch(student, lessonId));
    const big = 'S'.repeat(64000);
    expectOk(
      await track(student, lessonId, {
        scoId: sco.identifier,
        values: { 'cmi.location': 'slide-7', 'cmi.suspend_data': big, 'cmi.completion_status': 'incomplete', 'cmi.exit': 'suspend', 'cmi.session_time': 'PT2M30.5S' },
        terminate: true,
      }),
    );
    const again = expectOk(await launch(student, lessonId));
    expect(again.state).toMatchObject({ entry: 'resume', location: 'slide-7', suspendData: big, completionStatus: 'incomplete', totalTime: 'PT0H2M30.5S' });
    expect(again.cmi['cmi.entry']).toBe('resume');
    expect(again.cmi).not.toHaveProperty('cmi.exit');
  });

  it('refuses, with SCORM 2004 error codes, each bad element; nothing is stored', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm2004Package());
    const values: Record<string, string> = {
      'cmi.location': 'ok',
      'cmi.unknown_thing': 'x',
      'cmi._version': '2.0',
      'cmi.learner_id': 'me',
      'cmi.completion_status': 'done',
      'cmi.success_status': 'maybe',
      'cmi.exit': 'quit',
      'cmi.session_time': '00:10:00',
      'cmi.score.scaled': '1.5',
      'cmi.progress_measure': '-0.1',
      'cmi.suspend_data': 'x'.repeat(64001),
      'cmi.objectives.0.score.raw': '3',
      'cmi.interactions.0.id': 'q1',
      'cmi.interactions.0.learner_response': 'a',
      'cmi.interactions.0.result': 'wrong',
      'cmi.interactions.0.latency': 'PT',
      'cmi.interactions.0.timestamp': 'yesterday',
      'cmi.interactions.2.id': 'q3',
      'cmi.comments_from_learner.0.timestamp': '1969-12-31',
      'cmi.learner_preference.audio_captioning': '2',
      'adl.nav.request': 'jump-around',
    };
    const res = await track(student, lesson.id, { scoId: 'item_intro', values });
    expectError(res, 400, 'VALIDATION_ERROR');
    const codes = Object.fromEntries(res.body.error.details.errors.map((e: { element: string; code: number }) => [e.element, e.code]));
    expect(codes).toEqual({
      'cmi.unknown_thing': 401,
      'cmi._version': 404,
      'cmi.learner_id': 404,
      'cmi.completion_status': 406,
      'cmi.success_status': 406,
      'cmi.exit': 406,
      'cmi.session_time': 406,
      'cmi.score.scaled': 407,
      'cmi.progress_measure': 407,
      'cmi.suspend_data': 407,
      'cmi.objectives.0.score.raw': 408,
      'cmi.interactions.0.learner_response': 408,
      'cmi.interactions.0.result': 406,
      'cmi.interactions.0.latency': 406,
      'cmi.interactions.0.timestamp': 406,
      'cmi.interactions.2.id': 351,
      'cmi.comments_from_learner.0.timestamp': 407,
      'cmi.learner_preference.audio_captioning': 406,
      'adl.nav.request': 406,
    });
    expect(res.body.error.details.fields).toContainEqual(expect.objectContaining({ field: 'body.values.cmi.score.scaled' }));
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.lessonId, lesson.id))).toEqual([]);
    // An identifier is unique among objectives and does not change once set.
    expectOk(await track(student, lesson.id, { scoId: 'item_intro', values: { 'cmi.objectives.0.id': 'urn:lab:focus' } }));
    const dup = await track(student, lesson.id, { scoId: 'item_intro', values: { 'cmi.objectives.1.id': 'urn:lab:focus', 'cmi.objectives.0.id': 'urn:lab:other' } });
    expect(dup.body.error.details.errors.map((e: any) => [e.element, e.code])).toEqual([
      ['cmi.objectives.1.id', 351],
      ['cmi.objectives.0.id', 351],
    ]);
  });

  it('accepts interactions of each kind, objectives, comments and navigation requests', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm2004Package());
    const res = await track(student, lesson.id, {
      scoId: 'item_check',
      values: {
        'cmi.interactions.0.id': 'urn:lab:q1',
        'cmi.interactions.0.type': 'choice',
        'cmi.interactions.0.learner_response': 'a[,]c',
        'cmi.interactions.0.correct_responses.0.pattern': 'a[,]c',
        'cmi.interactions.0.result': 'correct',
        'cmi.interactions.0.latency': 'PT5.25S',
        'cmi.interactions.0.timestamp': '2026-03-02T10:00:00Z',
        'cmi.interactions.0.description': '{lang=en}Which stains?',
        'cmi.interactions.0.objectives.0.id': 'urn:lab:stain',
        'cmi.interactions.1.id': 'q2',
        'cmi.interactions.1.type': 'numeric',
        'cmi.interactions.1.correct_responses.0.pattern': '1.5[:]2',
        'cmi.interactions.1.learner_response': '1.75',
        'cmi.interactions.1.result': '0.9',
        'cmi.interactions.2.id': 'q3',
        'cmi.interactions.2.type': 'true-false',
        'cmi.interactions.2.learner_response': 'true',
        'cmi.objectives.0.id': 'urn:lab:stain',
        'cmi.objectives.0.score.scaled': '-0.5',
        'cmi.objectives.0.success_status': 'failed',
        'cmi.objectives.0.progress_measure': '0.25',
        'cmi.comments_from_learner.0.comment': 'Blurry slide',
        'cmi.comments_from_learner.0.timestamp': '2026-03-02',
        'cmi.learner_preference.language': 'fr-CA',
        'cmi.learner_preference.audio_level': '1.5',
        'adl.nav.request': 'continue',
      },
    });
    expectOk(res);
    const l = expectOk(await launch(student, lesson.id, 'item_check'));
    expect(l.cmi).toMatchObject({
      'cmi.interactions._count': '3',
      'cmi.objectives._count': '1',
      'cmi.comments_from_learner._count': '1',
      'cmi.interactions.0.learner_response': 'a[,]c',
      'cmi.objectives.0.score.scaled': '-0.5',
    });
    // A true-false interaction has one correct response; a choice response names a choice once.
    const more = await track(student, lesson.id, {
      scoId: 'item_check',
      values: {
        'cmi.interactions.2.correct_responses.0.pattern': 'true',
        'cmi.interactions.2.correct_responses.1.pattern': 'false',
        'cmi.interactions.0.learner_response': 'a[,]a',
      },
    });
    expect(more.body.error.details.errors.map((e: any) => [e.element, e.code])).toEqual([
      ['cmi.interactions.2.correct_responses.1.pattern', 351],
      ['cmi.interactions.0.learner_response', 406],
    ]);
  });

  it('completion: every SCO completed and not failed; the passing score applies to score.scaled and the threshold to progress_measure; lesson and course complete', async () => {
    const { lesson, text, enrollment } = await scormCourse({ textLesson: true });
    await upload(teacher, lesson.id, await scorm2004Package());
    const intro = expectOk(await track(student, lesson.id, { scoId: 'item_intro', values: { 'cmi.completion_status': 'completed' }, terminate: true }));
    expect(intro.attempts[0]).toMatchObject({ completed: true, status: 'ENDED', scorePercent: null });
    expect(intro.lesson).toMatchObject({ completed: false, scos: 2, completedScos: 1, progressPercent: 50 });
    expect(intro.progress).toMatchObject({ completed: false, progressPercent: 50 });

    // With a passing score and a threshold, statuses the SCO writes without the measures are unknown (RTE 4.2.4.1, 4.2.22.1).
    const unmeasured = expectOk(await track(student, lesson.id, { scoId: 'item_check', values: { 'cmi.completion_status': 'completed', 'cmi.success_status': 'passed' } }));
    expect(unmeasured.attempts[0]).toMatchObject({
      completionStatus: 'unknown',
      successStatus: 'unknown',
      completed: false,
      lmsValues: { 'cmi.completion_status': 'unknown', 'cmi.success_status': 'unknown' },
    });
    expect(unmeasured.lesson).toMatchObject({ completed: false, completedScos: 1 });

    // Below the passing score (0.6): failed, though the SCO says passed; under the threshold (0.8): incomplete.
    const low = expectOk(
      await track(student, lesson.id, {
        scoId: 'item_check',
        values: { 'cmi.completion_status': 'completed', 'cmi.success_status': 'passed', 'cmi.score.scaled': '0.5', 'cmi.progress_measure': '0.5' },
      }),
    );
    expect(low.attempts[0]).toMatchObject({
      completionStatus: 'incomplete',
      successStatus: 'failed',
      completed: false,
      scorePercent: 50,
      lmsValues: { 'cmi.completion_status': 'incomplete', 'cmi.success_status': 'failed' },
    });
    const high = expectOk(
      await track(student, lesson.id, [
        { scoId: 'item_check', values: { 'cmi.score.scaled': '0.75', 'cmi.progress_measure': '0.9', 'cmi.exit': 'normal', 'cmi.session_time': 'PT1M' }, terminate: true },
      ]),
    );
    expect(high.attempts[0]).toMatchObject({ completionStatus: 'completed', successStatus: 'passed', completed: true, scorePercent: 75, status: 'ENDED', totalTime: 'PT0H1M0S' });
    expect(high.lesson).toMatchObject({ completed: true, scorePercent: 75, completedScos: 2, progressPercent: 100 });
    // The course has a TEXT lesson still to do.
    expect(high.progress).toMatchObject({ completed: true, progress: 50, status: 'ACTIVE', courseCompleted: false });
    expectOk(await t.request('POST', `/api/lessons/${text!.id}/progress`, { token: student, body: { completed: true } }));
    const [e] = await t.db.select().from(enrollments).where(eq(enrollments.id, enrollment.id));
    expect(e).toMatchObject({ status: 'COMPLETED', progress: 100, finalScore: 75 });
    // An ended attempt cannot be written to.
    expectError(await track(student, lesson.id, { scoId: 'item_check', attemptId: high.attempts[0].attemptId, values: {} }), 409, 'CONFLICT');
  });

  it('a list body tracks several SCOs in one transaction: one refused element refuses all', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm2004Package());
    const refused = await track(student, lesson.id, [
      { scoId: 'item_intro', values: { 'cmi.location': 'a' } },
      { scoId: 'item_check', values: { 'cmi.score.scaled': '2' } },
    ]);
    expectError(refused, 400, 'VALIDATION_ERROR');
    expect(refused.body.error.details.errors).toEqual([expect.objectContaining({ element: 'cmi.score.scaled', code: 407, item: 1 })]);
    expect(refused.body.error.details.fields[0].field).toBe('body.1.values.cmi.score.scaled');
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.lessonId, lesson.id))).toEqual([]);
    const both = expectOk(
      await track(student, lesson.id, [
        { scoId: 'item_intro', values: { 'cmi.location': 'a' } },
        { scoId: 'item_check', values: { 'cmi.location': 'b' } },
      ]),
    );
    expect(both.attempts.map((a: any) => a.attemptNumber)).toEqual([1, 1]);
    expectError(await track(student, lesson.id, { scoId: 'nope', values: {} }), 400, 'VALIDATION_ERROR');
  });
});

describe('zip safety: refused packages store nothing', () => {
  let lessonId: string;
  const minimalManifest = MANIFEST_12;
  const withManifest = (files: Array<{ name: string; data: string | Buffer; compress?: boolean; mode?: number }>) =>
    zipOf([{ name: 'imsmanifest.xml', data: minimalManifest }, { name: 'lab/index.html', data: '<p>lab</p>' }, ...files]);

  beforeAll(async () => {
    lessonId = (await scormCourse()).lesson.id;
  });

  async function refused(zip: Buffer, problem: string, contentType?: string) {
    const before = await storedScormObjects();
    const res = await upload(teacher, lessonId, zip, contentType);
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(res.body.error.details.problem, res.raw).toBe(problem);
    expect(await t.db.select().from(scormPackages).where(eq(scormPackages.lessonId, lessonId))).toEqual([]);
    expect(await storedScormObjects()).toEqual(before);
    return res.body.error;
  }

  it('path traversal, absolute paths, backslashes and symbolic links', async () => {
    const traversal = patchBytes(await withManifest([{ name: 'xx/evil.txt', data: 'x' }]), 'xx/evil.txt', '../evil.txt');
    expect((await refused(traversal, 'path_traversal')).message).toContain('../evil.txt');
    const nested = patchBytes(await withManifest([{ name: 'lab/xx/xx/evil.txt', data: 'x' }]), 'lab/xx/xx/evil.txt', 'lab/../../evil.txt');
    await refused(nested, 'path_traversal');
    await refused(patchBytes(await withManifest([{ name: 'xetc/passwd', data: 'x' }]), 'xetc/passwd', '/etc/passwd'), 'absolute_path');
    await refused(patchBytes(await withManifest([{ name: 'C_/win.ini', data: 'x' }]), 'C_/win.ini', 'C:/win.ini'), 'absolute_path');
    await refused(patchBytes(await withManifest([{ name: 'lab_x.html', data: 'x' }]), 'lab_x.html', 'lab\\x.html'), 'backslash');
    const link = await refused(await withManifest([{ name: 'lab/link', data: '/etc/passwd', mode: 0o120777 }]), 'symlink');
    expect(link.details.entry).toBe('lab/link');
  });

  it('zip bombs: a highly compressed entry, an entry or a total over the bounds, too many entries, a lying size', async () => {
    // 3 MiB of zeros deflate to a few KiB: far beyond 100:1.
    const ratio = await refused(await withManifest([{ name: 'lab/zeros.bin', data: Buffer.alloc(3 * MiB) }]), 'compression_ratio');
    expect(ratio.details).toMatchObject({ entry: 'lab/zeros.bin', size: 3 * MiB, limit: 100 });
    // Over the 4 MiB entry bound (stored, so the ratio is 1).
    await refused(await withManifest([{ name: 'lab/big.bin', data: Buffer.alloc(5 * MiB), compress: false }]), 'entry_too_large');
    // 4 × 1.75 MiB of random bytes: each within bounds, 7 MiB in all over the 6 MiB total.
    const parts = Array.from({ length: 4 }, (_, i) => ({ name: `lab/noise${i}.bin`, data: randomBytes(1.75 * MiB), compress: false }));
    await refused(await withManifest(parts), 'total_too_large');
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `lab/f${i}.txt`, data: `${i}` }));
    expect((await refused(await withManifest(many), 'too_many_entries')).details).toMatchObject({ entries: 42, limit: 40 });
    // A central directory that declares 100 bytes for 1 MiB of data: caught while extracting, after other
    // files were stored, and those are removed again.
    const lying = patchDeclaredSize(
      await withManifest([
        { name: 'lab/a.css', data: 'a{}' },
        { name: 'lab/zz-liar.bin', data: Buffer.alloc(MiB) },
      ]),
      'lab/zz-liar.bin',
      100,
    );
    expect((await refused(lying, 'size_mismatch')).details.entry).toBe('lab/zz-liar.bin');
  });

  it('duplicates, a missing or malformed manifest, a missing launch file, not a zip', async () => {
    await refused(patchBytes(await withManifest([{ name: 'lab/index.htmX', data: 'x' }]), 'lab/index.htmX', 'lab/index.html'), 'duplicate_entry');
    await refused(await zipOf([{ name: 'index.html', data: 'x' }]), 'no_manifest');
    await refused(await zipOf([{ name: 'sub/imsmanifest.xml', data: MANIFEST_12 }]), 'no_manifest');
    const malformed = await refused(await zipOf([{ name: 'imsmanifest.xml', data: '<manifest identifier="m"><organizations></manifest>' }]), 'bad_manifest');
    expect(malformed.message).toContain('malformed XML');
    await refused(await zipOf([{ name: 'imsmanifest.xml', data: '<?xml version="1.0"?><html/>' }]), 'bad_manifest');
    const noVersion = MANIFEST_12.replace('<schemaversion>1.2</schemaversion>', '').replace(/ xmlns(:\w+)?="[^"]*"/g, '');
    expect(
      (
        await refused(
          await zipOf([
            { name: 'imsmanifest.xml', data: noVersion },
            { name: 'lab/index.html', data: 'x' },
          ]),
          'bad_manifest',
        )
      ).message,
    ).toContain('version');
    const badRef = MANIFEST_12.replace('identifierref="res_lab"', 'identifierref="res_missing"');
    expect((await refused(await zipOf([{ name: 'imsmanifest.xml', data: badRef }]), 'bad_manifest')).message).toContain('res_missing');
    const entity = MANIFEST_12.replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]>');
    await refused(await zipOf([{ name: 'imsmanifest.xml', data: entity }]), 'bad_manifest');
    const outside = MANIFEST_12.replace('href="lab/index.html"', 'href="../index.html"');
    await refused(await zipOf([{ name: 'imsmanifest.xml', data: outside }]), 'bad_manifest');
    const external = MANIFEST_12.replace('href="lab/index.html"', 'href="https://evil.example/x.html"');
    await refused(await zipOf([{ name: 'imsmanifest.xml', data: external }]), 'bad_manifest');
    const missing = await refused(await zipOf([{ name: 'imsmanifest.xml', data: MANIFEST_12 }]), 'missing_file');
    expect(missing.details.entry).toBe('lab/index.html');
    await refused(randomBytes(4096), 'not_a_zip');
    await refused(Buffer.alloc(0), 'not_a_zip');
  });

  it('a body that is not a zip type is 415, one over SCORM_MAX_PACKAGE_BYTES 413', async () => {
    const zip = await scorm12Package();
    expectError(await upload(teacher, lessonId, zip, 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const big = await upload(teacher, lessonId, Buffer.alloc(16 * MiB + 1));
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
    expect(await t.db.select().from(scormPackages).where(eq(scormPackages.lessonId, lessonId))).toEqual([]);
  });
});

describe('replacing a package', () => {
  it('a new upload replaces the current package: its files go (a job removes the objects), attempts stay, old grants stop working', async () => {
    const { lesson } = await scormCourse();
    const first = expectOk(await upload(teacher, lesson.id, await scorm12Package()), 201);
    const l = expectOk(await launch(student, lesson.id));
    expectOk(await track(student, lesson.id, { scoId: l.sco.id, values: { 'cmi.core.lesson_location': 'p1' } }));
    const oldKeys = (await t.db.select().from(scormPackageFiles).where(eq(scormPackageFiles.packageId, first.id))).map((f) => f.storageKey);
    expect(oldKeys).toHaveLength(4);
    // The objects really are in storage (so the checks that nothing was stored look at the right place).
    expect(await storedScormObjects()).toEqual(expect.arrayContaining(oldKeys.map((k) => k.split('/').join(path.sep))));

    const second = expectOk(await upload(admin, lesson.id, await scorm2004Package()), 201);
    expect(second).toMatchObject({ version: '2004', replacedPackageId: first.id });
    const pkgs = await t.db.select().from(scormPackages).where(eq(scormPackages.lessonId, lesson.id));
    expect(pkgs.map((p) => [p.id, p.status]).sort()).toEqual(
      [
        [first.id, 'REPLACED'],
        [second.id, 'CURRENT'],
      ].sort(),
    );
    expect(await t.db.select().from(scormPackageFiles).where(eq(scormPackageFiles.packageId, first.id))).toEqual([]);
    const cleanup = (await t.db.select().from(jobs).where(eq(jobs.name, 'storage.deleteObjects'))).filter((j) => JSON.stringify(j.payload).includes(oldKeys[0]!));
    expect(cleanup).toHaveLength(1);
    expect((cleanup[0]!.payload as { keys: string[] }).keys.sort()).toEqual([...oldKeys].sort());
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.packageId, first.id))).toHaveLength(1);
    expect((await fetchContent(l.launchUrl, student)).statusCode).toBe(404);
    const fresh = expectOk(await launch(student, lesson.id));
    expect(fresh).toMatchObject({ packageId: second.id, version: '2004', attempt: null });
    expect(fresh.state.entry).toBe('ab-initio');
  });

  it('deleting the lesson queues the removal of its package files', async () => {
    const { lesson } = await scormCourse();
    const pkg = expectOk(await upload(teacher, lesson.id, await scorm12Package()), 201);
    const keys = (await t.db.select().from(scormPackageFiles).where(eq(scormPackageFiles.packageId, pkg.id))).map((f) => f.storageKey);
    expectOk(await t.request('DELETE', `/api/lessons/${lesson.id}`, { token: teacher }));
    const cleanup = (await t.db.select().from(jobs).where(eq(jobs.name, 'storage.deleteObjects'))).filter((j) => JSON.stringify(j.payload).includes(keys[0]!));
    expect((cleanup[0]!.payload as { keys: string[] }).keys.sort()).toEqual([...keys].sort());
    expect(await t.db.select().from(scormPackages).where(eq(scormPackages.lessonId, lesson.id))).toEqual([]);
  });
});

describe('who may upload, launch, track and read content', () => {
  let lessonId: string;
  let courseId: string;

  beforeAll(async () => {
    const { lesson, course } = await scormCourse();
    lessonId = lesson.id;
    courseId = course.id;
    expectOk(await upload(teacher, lessonId, await scorm12Package()), 201);
  });

  it('upload: the course owner or an ADMIN; other staff and learners 403; another institution 404; a lesson of another type 400', async () => {
    const zip = await scorm12Package();
    expectError(await upload(student, lessonId, zip), 403, 'FORBIDDEN');
    expectError(await upload(await t.token({ role: 'TEACHER', id: DEMO_TEACHER2_ID }), lessonId, zip), 403, 'FORBIDDEN');
    expectError(await upload(await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: SECOND_INSTITUTION.id }), lessonId, zip), 404, 'NOT_FOUND');
    const text = await createLesson(t, { courseId, type: 'TEXT', order: 5 });
    const wrongType = await upload(teacher, text.id, zip);
    expectError(wrongType, 400, 'VALIDATION_ERROR');
    expect(wrongType.body.error.details.fields[0].field).toBe('params.id');
  });

  it('launch and track: an enrolled learner; not enrolled 403 ENROLLMENT_REQUIRED; another institution 404; no package or another lesson type 404', async () => {
    const stranger = await t.token({ role: 'STUDENT', id: DEMO_UNRELATED_STUDENT_ID });
    expectError(await launch(stranger, lessonId), 403, 'ENROLLMENT_REQUIRED');
    expectError(await track(stranger, lessonId, { scoId: 'item_lab', values: {} }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('GET', `/api/scorm/${lessonId}/player`, { token: stranger }), 403, 'ENROLLMENT_REQUIRED');
    const north = await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: SECOND_INSTITUTION.id });
    expectError(await launch(north, lessonId), 404, 'NOT_FOUND');
    expectError(await track(north, lessonId, { scoId: 'item_lab', values: {} }), 404, 'NOT_FOUND');
    const empty = await createLesson(t, { courseId, type: 'SCORM', order: 6 });
    expectError(await launch(student, empty.id), 404, 'NOT_FOUND');
    const text = await createLesson(t, { courseId, type: 'TEXT', order: 7 });
    expectError(await launch(student, text.id), 404, 'NOT_FOUND');
    expectError(await track(student, text.id, { scoId: 'x', values: {} }), 404, 'NOT_FOUND');
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.lessonId, lessonId))).toEqual([]);
  });

  it('a manager without an enrollment launches in browse mode, untracked; tracking needs an enrollment', async () => {
    const l = expectOk(await launch(admin, lessonId));
    expect(l.state).toMatchObject({ mode: 'browse', credit: 'no-credit', entry: 'ab-initio' });
    expect(l.cmi['cmi.core.lesson_mode']).toBe('browse');
    const page = await fetchContent(l.launchUrl, admin);
    expect(page.statusCode).toBe(200);
    expectError(await track(admin, lessonId, { scoId: 'item_lab', values: {} }), 403, 'ENROLLMENT_REQUIRED');
  });

  it('a drip-locked lesson is 403 LESSON_LOCKED for launch and track', async () => {
    const course = await createCourse(t, { ownerId: DEMO_TEACHER_ID, dripMode: 'SEQUENTIAL' });
    await createLesson(t, { courseId: course.id, type: 'TEXT', order: 1 });
    const locked = await createLesson(t, { courseId: course.id, type: 'SCORM', order: 2 });
    await enroll(t, { courseId: course.id, studentId: DEMO_STUDENT_ID });
    expectOk(await upload(teacher, locked.id, await scorm12Package()), 201);
    expectError(await launch(student, locked.id), 403, 'LESSON_LOCKED');
    expectError(await track(student, locked.id, { scoId: 'item_lab', values: {} }), 403, 'LESSON_LOCKED');
  });
});

describe('the launch page and its run-time API adapter', () => {
  /** Runs the page's adapter script in a sandbox whose XMLHttpRequest answers with `respond`. */
  function runAdapter(html: string, respond: (body: any) => { status: number; json: unknown }) {
    const script = /<script id="lms-scorm-runtime">([\s\S]*?)<\/script>/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const sent: Array<{ method: string; url: string; body: any }> = [];
    class FakeXhr {
      status = 0;
      responseText = '';
      private method = '';
      private url = '';
      open(method: string, url: string, async: boolean) {
        expect(async).toBe(false);
        this.method = method;
        this.url = url;
      }
      setRequestHeader() {}
      send(body: string) {
        const parsed = JSON.parse(body);
        sent.push({ method: this.method, url: this.url, body: parsed });
        const r = respond(parsed);
        this.status = r.status;
        this.responseText = JSON.stringify(r.json);
      }
    }
    const window: Record<string, any> = { XMLHttpRequest: FakeXhr };
    vm.runInNewContext(script!, { window, JSON, String, Number, Object, RegExp });
    return { window, sent };
  }

  it('SCORM 1.2: window.API answers reads from the launch state, refuses read-only writes at once, and commits writes to /track', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const res = await t.app.inject({ method: 'GET', url: `/api/scorm/${lesson.id}/player`, headers: { authorization: `Bearer ${student}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toMatch(new RegExp(`<iframe id="lms-scorm-sco"[^>]+src="/api/scorm/${lesson.id}/content/\\d+-[0-9a-f]{64}/lab/index\\.html\\?mode=lab"`));

    // The sandbox answers the adapter's requests; the first one is then sent through the real track route below.
    const { window, sent } = runAdapter(res.body, () => ({
      status: 200,
      json: { data: { attempts: [{ attemptId: 'att-1', lmsValues: { 'cmi.core.lesson_status': 'passed' } }] }, error: null },
    }));
    const api = window.API;
    expect(window.API_1484_11).toBeUndefined();
    expect(api.LMSGetValue('cmi.core.entry')).toBe('');
    expect(api.LMSGetLastError()).toBe('301');
    expect(api.LMSInitialize('')).toBe('true');
    expect(api.LMSGetValue('cmi.core.entry')).toBe('ab-initio');
    expect(api.LMSGetValue('cmi.core.student_id')).toBe(DEMO_STUDENT_ID);
    expect(api.LMSGetValue('cmi.core.score._children')).toBe('raw,min,max');
    expect(api.LMSGetValue('cmi.core.session_time')).toBe('');
    expect(api.LMSGetLastError()).toBe('404');
    expect(api.LMSSetValue('cmi.core.student_id', 'x')).toBe('false');
    expect(api.LMSGetLastError()).toBe('403');
    expect(api.LMSGetErrorString('403')).toBe('Element is read only');
    expect(api.LMSSetValue('cmi.core._children', 'x')).toBe('false');
    expect(api.LMSGetLastError()).toBe('402');
    expect(api.LMSSetValue('cmi.bogus', 'x')).toBe('false');
    expect(api.LMSGetLastError()).toBe('201');
    expect(api.LMSSetValue('cmi.core.lesson_status', 'completed')).toBe('true');
    expect(api.LMSSetValue('cmi.core.score.raw', '90')).toBe('true');
    expect(api.LMSSetValue('cmi.suspend_data', 'state-1')).toBe('true');
    expect(api.LMSGetValue('cmi.suspend_data')).toBe('state-1');
    expect(api.LMSCommit('')).toBe('true');
    expect(api.LMSGetValue('cmi.core.lesson_status')).toBe('passed');
    expect(api.LMSSetValue('cmi.core.exit', '')).toBe('true');
    expect(api.LMSFinish('')).toBe('true');
    expect(api.LMSGetValue('cmi.core.entry')).toBe('');
    expect(api.LMSGetLastError()).toBe('101');

    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      url: `/api/scorm/${lesson.id}/track`,
      body: { values: { 'cmi.core.lesson_status': 'completed', 'cmi.core.score.raw': '90', 'cmi.suspend_data': 'state-1' }, terminate: false },
    });
    expect(sent[1].body).toMatchObject({ attemptId: 'att-1', values: { 'cmi.core.exit': '' }, terminate: true });
    // What the adapter sent is what the route takes.
    const real = expectOk(await track(student, lesson.id, sent[0]!.body));
    expect(real.attempts[0]).toMatchObject({ successStatus: 'passed', lmsValues: { 'cmi.core.lesson_status': 'passed' } });
  });

  it('browse mode (a manager previewing): Commit and Finish succeed and nothing is sent, so a package does not report a failed save', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm12Package());
    const res = await t.app.inject({ method: 'GET', url: `/api/scorm/${lesson.id}/player`, headers: { authorization: `Bearer ${admin}` } });
    expect(res.statusCode).toBe(200);
    const { window, sent } = runAdapter(res.body, () => ({ status: 403, json: { data: null, error: { code: 'ENROLLMENT_REQUIRED', message: 'x' } } }));
    const api = window.API;
    expect(api.LMSInitialize('')).toBe('true');
    expect(api.LMSGetValue('cmi.core.lesson_mode')).toBe('browse');
    expect(api.LMSSetValue('cmi.core.lesson_status', 'completed')).toBe('true');
    expect(api.LMSCommit('')).toBe('true');
    expect(api.LMSGetLastError()).toBe('0');
    expect(api.LMSFinish('')).toBe('true');
    expect(sent).toEqual([]);
    expect(await t.db.select().from(scormAttempts).where(eq(scormAttempts.lessonId, lesson.id))).toEqual([]);
  });

  it('SCORM 2004: window.API_1484_11 with its error codes; a refused value fails Commit with the server’s code and the rest is sent again', async () => {
    const { lesson } = await scormCourse();
    await upload(teacher, lesson.id, await scorm2004Package());
    const res = await t.app.inject({ method: 'GET', url: `/api/scorm/${lesson.id}/player?scoId=item_check`, headers: { authorization: `Bearer ${student}` } });
    expect(res.statusCode).toBe(200);
    // The adapter's XHR is synchronous, so the sandbox answers it as the route would: cmi.score.scaled refused (407), the rest taken.
    const { window, sent } = runAdapter(res.body, (body) =>
      body.values['cmi.score.scaled'] !== undefined
        ? {
            status: 400,
            json: {
              data: null,
              error: { code: 'VALIDATION_ERROR', message: 'refused', details: { errors: [{ element: 'cmi.score.scaled', code: 407, message: 'out of range' }] } },
            },
          }
        : { status: 200, json: { data: { attempts: [{ attemptId: 'att-9', lmsValues: {} }] }, error: null } },
    );
    const api = window.API_1484_11;
    expect(window.API).toBeUndefined();
    expect(api.Initialize('')).toBe('true');
    expect(api.Initialize('')).toBe('false');
    expect(api.GetLastError()).toBe('103');
    expect(api.GetValue('cmi.scaled_passing_score')).toBe('0.6');
    expect(api.GetValue('cmi.location')).toBe('');
    expect(api.GetLastError()).toBe('403');
    expect(api.GetValue('cmi.exit')).toBe('');
    expect(api.GetLastError()).toBe('405');
    expect(api.SetValue('cmi.learner_id', 'x')).toBe('false');
    expect(api.GetLastError()).toBe('404');
    expect(api.SetValue('cmi.nope', 'x')).toBe('false');
    expect(api.GetLastError()).toBe('401');
    expect(api.SetValue('cmi.location', 'p2')).toBe('true');
    expect(api.SetValue('cmi.score.scaled', '9')).toBe('true');
    expect(api.Commit('')).toBe('false');
    expect(api.GetLastError()).toBe('407');
    expect(sent.map((s) => Object.keys(s.body.values))).toEqual([['cmi.location', 'cmi.score.scaled'], ['cmi.location']]);
    expect(api.Terminate('')).toBe('true');
    expect(api.Terminate('')).toBe('false');
    expect(api.GetLastError()).toBe('113');
    expect(sent[2].body).toMatchObject({ attemptId: 'att-9', values: {}, terminate: true });
  });
});
