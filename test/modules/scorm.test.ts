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
    expect(l.cmi['cmi.core.student_name']).toBeTruthy();
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
