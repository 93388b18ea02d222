/**
 * Uploads: the signed PUT streams to storage (bytes reach the disk while the client sends), quotas
 * per person and per institution, unregistered uploads removed after a day, and registration
 * bound to the person who presigned and to the exact institution.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';
import { files, uploads } from '../../src/modules/files/files.tables.js';
import type { LocalStorage } from '../../src/platform/storage/local.js';

const MB = 1024 * 1024;
const DAY = 86_400_000;

let t: TestApp;
let base: string;
let teacher: string;
let teacher2: string;

beforeAll(async () => {
  t = await createTestApp({ env: { UPLOAD_QUOTA_USER_BYTES: String(300 * MB), UPLOAD_QUOTA_INSTITUTION_BYTES: String(400 * MB) } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
  teacher = await t.token({ role: 'TEACHER', id: 'u_up_1' });
  teacher2 = await t.token({ role: 'TEACHER', id: 'u_up_2' });
});
afterAll(async () => t.close());

const presign = (token: string, size: number, contentType = 'video/mp4') => t.request('POST', '/api/upload', { token, body: { fileName: 'clip.mp4', contentType, size } });

/**
 * `size` deterministic bytes, produced on the fly in 64 KiB chunks, and their sha256. With
 * `pauseAt`, the stream stops producing there until `resume()`.
 */
function generated(size: number, pauseAt = Infinity) {
  const hash = createHash('sha256');
  let sent = 0;
  let paused = true;
  let stalled = false;
  const produce = () => {
    if (sent >= size) return readable.push(null);
    if (paused && sent >= pauseAt) {
      stalled = true;
      return;
    }
    const n = Math.min(64 * 1024, size - sent);
    const chunk = Buffer.alloc(n, sent % 251);
    sent += n;
    hash.update(chunk);
    readable.push(chunk);
  };
  const readable = new Readable({ read: produce });
  const resume = () => {
    paused = false;
    if (stalled) {
      stalled = false;
      produce();
    }
  };
  return { stream: { readable, resume }, digest: () => hash.digest('hex') };
}

/** PUT a stream to a signed URL over a real socket (chunked: no Content-Length). */
function putStream(url: string, contentType: string, body: Readable): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${new URL(url).pathname}${new URL(url).search}`, { method: 'PUT', headers: { 'content-type': contentType } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    body.pipe(req);
  });
}

const tmpEntries = async () => readdir(join((t.deps.storage as LocalStorage).root, '.tmp')).catch(() => [] as string[]);

describe('PUT /api/upload/{key}', () => {
  it('streams the body to storage: bytes reach the disk while the client is still sending, and arrive whole', async () => {
    const size = 64 * MB;
    const half = 32 * MB;
    const signed = expectOk(await presign(teacher, size));
    const { stream, digest } = generated(size, half);
    const response = putStream(signed.uploadUrl, 'video/mp4', stream.readable);
    // The client has sent half and waits: a buffering server would have written nothing yet.
    const staged = async () => {
      const dir = join((t.deps.storage as LocalStorage).root, '.tmp');
      const sizes = await Promise.all((await tmpEntries()).map(async (f) => (await stat(join(dir, f)).catch(() => ({ size: 0 }))).size));
      return Math.max(0, ...sizes);
    };
    const deadline = Date.now() + 10_000;
    while ((await staged()) < 16 * MB && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await staged()).toBeGreaterThanOrEqual(16 * MB);
    stream.resume();
    const res = await response;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ key: signed.key, size });
    const stored = await t.deps.storage.get(signed.key);
    expect(createHash('sha256').update(stored).digest('hex')).toBe(digest());
  });

  it('refuses a body past the signed size while it streams (413), storing nothing', async () => {
    const signed = expectOk(await presign(teacher, 1 * MB));
    const res = await putStream(signed.uploadUrl, 'video/mp4', generated(3 * MB).stream.readable);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await t.deps.storage.exists(signed.key)).toBe(false);
    expect(await tmpEntries()).toEqual([]);
  });
});

describe('upload quotas', () => {
  it('count registered files and pending uploads, per person and per institution (413)', async () => {
    const q = await createTestApp({ env: { UPLOAD_QUOTA_USER_BYTES: '1000', UPLOAD_QUOTA_INSTITUTION_BYTES: '1500' } });
    try {
      const a = await q.token({ role: 'TEACHER', id: 'u_q_a' });
      const b = await q.token({ role: 'TEACHER', id: 'u_q_b' });
      const c = await q.token({ role: 'TEACHER', id: 'u_q_c' });
      const ask = (token: string, size: number) => q.request('POST', '/api/upload', { token, body: { fileName: 'a.txt', contentType: 'text/plain', size } });
      expectOk(await ask(a, 600));
      let res = await ask(a, 500);
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(res.body.error.details).toMatchObject({ scope: 'user', quota: 1000, used: 600, requested: 500 });
      expectOk(await ask(b, 500));
      res = await ask(c, 500);
      expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(res.body.error.details).toMatchObject({ scope: 'institution', quota: 1500, used: 1100 });
      // A day later the unregistered uploads are removed, and their bytes are free again.
      q.clock.advance(DAY + 1000);
      await q.worker.drain();
      expectOk(await ask(c, 500));
    } finally {
      await q.close();
    }
  });
});

describe('unregistered uploads', () => {
  it('are removed from storage a day after the presign; registered ones stay', async () => {
    const kept = expectOk(await presign(teacher2, 10, 'text/plain'));
    const dropped = expectOk(await presign(teacher2, 10, 'text/plain'));
    for (const s of [kept, dropped]) expect((await putStream(s.uploadUrl, 'text/plain', Readable.from([Buffer.from('0123456789')]))).status).toBe(201);
    expectOk(await t.request('POST', '/api/files', { token: teacher2, body: { key: kept.key, name: 'kept.txt', contentType: 'text/plain' } }), 201);

    await t.worker.drain();
    expect(await t.deps.storage.exists(dropped.key)).toBe(true);
    t.clock.advance(DAY + 1000);
    await t.worker.drain();
    expect(await t.deps.storage.exists(dropped.key)).toBe(false);
    expect(await t.deps.storage.exists(kept.key)).toBe(true);
    const rows = await t.db.select().from(uploads).where(eq(uploads.presignedBy, 'u_up_2'));
    expect(Object.fromEntries(rows.map((r) => [r.key, r.status]))).toMatchObject({ [kept.key]: 'REGISTERED', [dropped.key]: 'REMOVED' });
    // Too late to register the removed one.
    expectError(await t.request('POST', '/api/files', { token: teacher2, body: { key: dropped.key, name: 'late.txt', contentType: 'text/plain' } }), 404, 'NOT_FOUND');
  });
});

describe('registration is bound to the presigner and the exact institution', () => {
  it('refuses another person of the same institution and a look-alike institution id (404 both)', async () => {
    const signed = expectOk(await presign(teacher, 5, 'text/plain'));
    expect((await putStream(signed.uploadUrl, 'text/plain', Readable.from([Buffer.from('hello')]))).status).toBe(201);
    const body = { key: signed.key, name: 'mine.txt', contentType: 'text/plain' };

    expectError(await t.request('POST', '/api/files', { token: teacher2, body }), 404, 'NOT_FOUND');
    const lookalike = await t.token({ role: 'ADMIN', id: 'u_up_1', institutionId: 'INST_DEMO' });
    expectError(await t.request('POST', '/api/files', { token: lookalike, body }), 404, 'NOT_FOUND');
    expect(await t.db.select().from(files).where(eq(files.key, signed.key))).toHaveLength(0);

    // The look-alike institution's own uploads get a prefix of their own.
    const theirs = expectOk(await t.request('POST', '/api/upload', { token: lookalike, body: { fileName: 'a.txt', contentType: 'text/plain', size: 5 } }));
    expect(theirs.key.split('/')[0]).toMatch(/^inst_demo-[0-9a-f]{8}$/);

    const registered = expectOk(await t.request('POST', '/api/files', { token: teacher, body }), 201);
    expect(registered).toMatchObject({ key: signed.key, uploadedBy: 'u_up_1', size: 5 });
  });
});
