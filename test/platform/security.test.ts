/**
 * Security items at the HTTP boundary: no dev routes in production, no person ids on the
 * public certificate page, no CRM host or path in error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { certificates } from '../../src/modules/certificates/certificates.tables.js';
import { eq } from 'drizzle-orm';
import { createHmac, hkdfSync } from 'node:crypto';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    extraRoutes: (app) => {
      app.post('/api/test/tenant-echo', async () => ({ data: { ok: true }, error: null }));
      app.get('/api/test/crm-fee', async () => ({ data: await t.deps.crm.getFeeStatus('demo', 'c_demo_stu_01'), error: null }));
    },
  });
});
afterAll(() => t.close());

describe('dev module', () => {
  it('is registered outside production', async () => {
    const admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
    expect((await t.request('POST', '/api/dev/seed', { token: admin })).status).not.toBe(404);
  });

  it('in production POST /api/dev/seed is refused with 403 (issue 4) and the other dev routes are unknown', async () => {
    const prod = await createTestApp({ env: { NODE_ENV: 'production', DATABASE_URL: 'postgres://unused@127.0.0.1/unused' } });
    try {
      const admin = await prod.token({ role: 'ADMIN', id: 'u_demo_admin' });
      expectError(await prod.request('POST', '/api/dev/seed', { token: admin }), 403, 'FORBIDDEN');
      const res = await prod.request('GET', '/api/dev/people');
      expectError(res, 404, 'NOT_FOUND');
      expect(res.body.error.message).toMatch(/Route GET \/api\/dev\/people not found/);
    } finally {
      await prod.close();
    }
  });
});

describe('public certificate verification', () => {
  it("never shows the holder's id when the CRM does not know the holder", async () => {
    const ghost = 'c_ghost_student_404';
    const course = await createCourse(t, { title: 'Ghost course', certificateEnabled: true });
    const lesson = await createLesson(t, { courseId: course.id });
    await enroll(t, { courseId: course.id, studentId: ghost });
    const token = await t.token({ role: 'STUDENT', id: ghost });
    const { certificateId } = expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { completed: true } }));
    const [c] = await t.db.select().from(certificates).where(eq(certificates.id, certificateId));
    const res = await t.request('GET', '/api/certificates/verify', { query: { code: c!.verificationCode } });
    const data = expectOk(res);
    expect(data.holderName).toBeNull();
    expect(res.raw).not.toContain(ghost);
  });
});

describe('CRM failures', () => {
  it.each(['down', 'error500'] as const)('answer with a generic message, never the CRM host or path (CRM %s)', async (fault) => {
    t.crmSim.setFault(fault, { pathPrefix: '/api/lms/' });
    try {
      const token = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
      const res = await t.request('GET', '/api/test/crm-fee', { token });
      expectError(res, 502, 'BAD_GATEWAY');
      expect(res.body.error.message).toBe('The CRM is unavailable');
      expect(res.raw).not.toContain(t.crmSim.baseDomain);
      expect(res.raw).not.toContain('/api/lms');
      expect(res.raw).not.toMatch(/crm\.localhost|127\.0\.0\.1/);
    } finally {
      t.crmSim.setFault(null);
    }
  });
});

describe('signed storage URLs', () => {
  it('are keyed by an HKDF-derived purpose key, not by AUTH_SECRET itself', async () => {
    const key = `${'inst_demo'}/files/${'0'.repeat(8)}-sigtest.txt`;
    await t.deps.storage.put(key, Buffer.from('hello'), 'text/plain');
    const url = new URL(await t.deps.storage.urlFor(key, 600));
    const expires = url.searchParams.get('expires')!;
    const fields = JSON.stringify(['GET', key, Number(expires)]);
    const hkdfKey = Buffer.from(hkdfSync('sha256', t.config.AUTH_SECRET, Buffer.alloc(0), 'lms:storage-signed-url:v1', 32));
    expect(url.searchParams.get('sig')).toBe(createHmac('sha256', hkdfKey).update(fields).digest('hex'));
    const ok = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(ok.statusCode).toBe(200);
    // A signature made with the raw secret (or the old HMAC-derived key) is refused.
    for (const k of [t.config.AUTH_SECRET, createHmac('sha256', t.config.AUTH_SECRET).update('lms:storage-signed-url:v1').digest('hex')]) {
      url.searchParams.set('sig', createHmac('sha256', k).update(fields).digest('hex'));
      expect((await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })).statusCode).toBe(403);
    }
  });
});

describe('wrong method on a known path', () => {
  it('is 405 METHOD_NOT_ALLOWED with an Allow header; an unknown path stays 404', async () => {
    const token = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
    for (const url of ['/api/certificates/verify', '/api/v1/certificates/verify']) {
      const res = await t.request('DELETE', url, { token });
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('GET, HEAD');
      // The message names the path as the client sent it, /api/v1 included.
      expect(res.body.error.message).toBe(`Method DELETE is not allowed on ${url}`);
    }
    const seed = await t.request('GET', '/api/dev/seed', { token });
    expectError(seed, 405, 'METHOD_NOT_ALLOWED');
    expect(seed.headers.allow).toBe('POST');
    // Parametric paths too.
    const lesson = await t.request('PUT', '/api/lessons/some-lesson/progress', { token, body: {} });
    expectError(lesson, 405, 'METHOD_NOT_ALLOWED');
    expect(lesson.headers.allow).toContain('POST');
    expectError(await t.request('GET', '/api/no/such/path', { token }), 404, 'NOT_FOUND');
    const unknown = await t.request('DELETE', '/api/v1/no-such-thing?x=1', { token });
    expectError(unknown, 404, 'NOT_FOUND');
    expect(unknown.body.error.message).toBe('Route DELETE /api/v1/no-such-thing not found');
    // HEAD of a GET route is served.
    expect((await t.app.inject({ method: 'HEAD', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('TENANT_MISMATCH everywhere an institutionId can be supplied', () => {
  it('in nested JSON bodies at any depth, in arrays, and in the query string', async () => {
    const token = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
    const post = (body: unknown, query?: Record<string, string>) => t.request('POST', '/api/test/tenant-echo', { token, body, query });
    expectError(await post({ course: { meta: { institutionId: 'inst_north' } } }), 403, 'TENANT_MISMATCH');
    expectError(await post({ items: [{ a: 1 }, { deeper: [{ institutionId: 'inst_north' }] }] }), 403, 'TENANT_MISMATCH');
    expectError(await post([{ institutionId: 'inst_north' }]), 403, 'TENANT_MISMATCH');
    expectError(await post({}, { institutionId: 'inst_north' }), 403, 'TENANT_MISMATCH');
    expectOk(await post({ course: { meta: { institutionId: 'inst_demo' } } }, { institutionId: 'inst_demo' }));
  });

  it('in multipart form fields', async () => {
    const teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
    const course = await createCourse(t, { title: 'Captions tenancy' });
    const lesson = await createLesson(t, { courseId: course.id, type: 'VIDEO' });
    const boundary = '----lmsTenantBoundary';
    const body = Buffer.from(
      [
        `--${boundary}\r\nContent-Disposition: form-data; name="institutionId"\r\n\r\ninst_north\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.vtt"\r\nContent-Type: text/vtt\r\n\r\nWEBVTT\n\n00:00.000 --> 00:01.000\nHi\n\r\n`,
        `--${boundary}--\r\n`,
      ].join(''),
    );
    const res = await t.request('POST', `/api/lessons/${lesson.id}/captions`, {
      token: teacher,
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expectError(res, 403, 'TENANT_MISMATCH');
  });
});
