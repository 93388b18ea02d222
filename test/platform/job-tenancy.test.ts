/**
 * Tenancy in the worker: the jobs that name one record (`crm.pushCompletion`,
 * `certificates.renderPdf`, `files.removeUnregistered`) carry the record's institution, and
 * their handlers look the record up within it. A job naming another institution touches
 * nothing; a job queued before payloads carried the institution still runs (the job row's
 * institution, else the id alone).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, inArray } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectOk } from '../helpers/expect.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { crmCompletions } from '../../src/modules/sync/sync.tables.js';
import { uploads } from '../../src/modules/files/files.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { enqueue } from '../../src/platform/queue/queue.js';
import { SECOND_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';

let t: TestApp;
const DEMO = 'inst_demo';
const OTHER = SECOND_INSTITUTION.id;
let n = 0;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** A completed course: its certificate and CRM outbox row, and the two jobs the completion queued. */
async function completion() {
  const studentId = `c_demo_stu_${String(40 + ++n).padStart(2, '0')}`;
  const course = await createCourse(t, { title: `Job tenancy ${n}`, certificateEnabled: true });
  const lesson = await createLesson(t, { courseId: course.id });
  const enrollment = await enroll(t, { courseId: course.id, studentId });
  const token = await t.token({ role: 'STUDENT', id: studentId });
  expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { completed: true } }));
  const [certificate] = await t.db.select().from(certificates).where(eq(certificates.enrollmentId, enrollment.id));
  const [outbox] = await t.db.select().from(crmCompletions).where(eq(crmCompletions.enrollmentId, enrollment.id));
  const queued = await t.db
    .select()
    .from(jobs)
    .where(and(inArray(jobs.name, ['certificates.renderPdf', 'crm.pushCompletion']), eq(jobs.status, 'queued')));
  return { course, certificate: certificate!, outbox: outbox!, queued };
}

/** Runs only the given jobs: every other queued job of these names is set aside first. */
async function runOnly(names: string[], enqueueThem: () => Promise<unknown>) {
  await t.db.delete(jobs).where(and(inArray(jobs.name, names), eq(jobs.status, 'queued')));
  await enqueueThem();
  await t.worker.drain();
}

describe('certificates.renderPdf', () => {
  it('names the institution and renders only within it; an old job without it still renders', async () => {
    const { certificate, queued } = await completion();
    const job = queued.find((j) => j.payload.certificateId === certificate.id);
    expect(job?.payload).toEqual({ certificateId: certificate.id, institutionId: DEMO });

    const pdfKey = async () => (await t.db.select().from(certificates).where(eq(certificates.id, certificate.id)))[0]!.pdfKey;
    // A job naming another institution does not find the certificate.
    await runOnly(['certificates.renderPdf'], () =>
      enqueue(t.db, t.clock, 'certificates.renderPdf', { certificateId: certificate.id, institutionId: OTHER }, { institutionId: OTHER }),
    );
    expect(await pdfKey()).toBeNull();
    // An old payload (no institutionId) falls back to the job row's institution: another one finds nothing…
    await runOnly(['certificates.renderPdf'], () => enqueue(t.db, t.clock, 'certificates.renderPdf', { certificateId: certificate.id }, { institutionId: OTHER }));
    expect(await pdfKey()).toBeNull();
    // …its own renders the PDF.
    await runOnly(['certificates.renderPdf'], () => enqueue(t.db, t.clock, 'certificates.renderPdf', { certificateId: certificate.id }, { institutionId: DEMO }));
    expect(await pdfKey()).toMatch(/^inst_demo\/certificates\/.+\.pdf$/);
  });

  it('an old job naming no institution at all still renders (by id, as before)', async () => {
    const { certificate } = await completion();
    await runOnly(['certificates.renderPdf'], () => enqueue(t.db, t.clock, 'certificates.renderPdf', { certificateId: certificate.id }));
    const [row] = await t.db.select().from(certificates).where(eq(certificates.id, certificate.id));
    expect(row!.pdfKey).toMatch(/^inst_demo\/certificates\//);
  });
});

describe('crm.pushCompletion', () => {
  it('names the institution and sends only within it; an old job without it still sends', async () => {
    const { course, outbox, queued } = await completion();
    const job = queued.find((j) => j.payload.completionId === outbox.id);
    expect(job?.payload).toEqual({ completionId: outbox.id, institutionId: DEMO });
    const pushes = () => t.crmSim.completions.filter((c) => c.body.courseId === course.id);
    const status = async () => (await t.db.select().from(crmCompletions).where(eq(crmCompletions.id, outbox.id)))[0]!.status;

    await runOnly(['crm.pushCompletion'], () => enqueue(t.db, t.clock, 'crm.pushCompletion', { completionId: outbox.id, institutionId: OTHER }, { institutionId: OTHER }));
    expect(await status()).toBe('PENDING');
    expect(pushes()).toEqual([]);
    await runOnly(['crm.pushCompletion'], () => enqueue(t.db, t.clock, 'crm.pushCompletion', { completionId: outbox.id }, { institutionId: DEMO }));
    expect(await status()).toBe('SENT');
    expect(pushes()).toHaveLength(1);
  });
});

describe('files.removeUnregistered', () => {
  it('names the institution and removes only within it; an old job without it still removes', async () => {
    const teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
    await runOnly(['files.removeUnregistered'], async () => {
      expectOk(await t.request('POST', '/api/upload', { token: teacher, body: { fileName: 'a.txt', contentType: 'text/plain', size: 3 } }));
    });
    const [job] = await t.db
      .select()
      .from(jobs)
      .where(and(eq(jobs.name, 'files.removeUnregistered'), eq(jobs.status, 'queued')));
    const uploadId = String(job!.payload.uploadId);
    expect(job!.payload).toEqual({ uploadId, institutionId: DEMO });
    const status = async () => (await t.db.select().from(uploads).where(eq(uploads.id, uploadId)))[0]!.status;

    await runOnly(['files.removeUnregistered'], () => enqueue(t.db, t.clock, 'files.removeUnregistered', { uploadId, institutionId: OTHER }, { institutionId: OTHER }));
    expect(await status()).toBe('PENDING');
    await runOnly(['files.removeUnregistered'], () => enqueue(t.db, t.clock, 'files.removeUnregistered', { uploadId }, { institutionId: DEMO }));
    expect(await status()).toBe('REMOVED');
  });
});
