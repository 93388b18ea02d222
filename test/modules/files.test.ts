import { access, rename, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson } from '../helpers/factories.js';
import type { LocalStorage } from '../../src/platform/storage/index.js';
import { files } from '../../src/modules/files/files.tables.js';
import { acceptSignedUpload } from '../../src/modules/files/files.service.js';

const OTHER_INST = 'inst_north';

let t: TestApp;
let teacher: string;
let student: string;
let student2: string;
let otherTeacher: string;

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_teacher' });
  student = await t.token({ role: 'STUDENT', id: 'c_stu_1' });
  student2 = await t.token({ role: 'STUDENT', id: 'c_stu_2' });
  otherTeacher = await t.token({ role: 'TEACHER', id: 'u_north', institutionId: OTHER_INST });
}, 180_000);
afterAll(() => t?.close());

/** Path and query of an absolute URL the service issued (inject takes paths). */
const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

function withQuery(url: string, change: (q: URLSearchParams) => void) {
  const u = new URL(url);
  change(u.searchParams);
  return `${u.pathname}?${u.searchParams.toString()}`;
}

async function presign(token: string, body: Record<string, unknown>) {
  return t.request('POST', '/api/upload', { token, body });
}

function put(path: string, body: Buffer | string, contentType?: string) {
  return t.app.inject({
    method: 'PUT',
    url: path,
    payload: body,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
  });
}

/** Presign, PUT and register a file; returns the registered row. */
async function uploadFile(token: string, name: string, bytes: string, contentType = 'text/plain', extra: Record<string, unknown> = {}) {
  const p = await presign(token, { fileName: name, contentType, size: Buffer.byteLength(bytes) });
  expect(p.status, p.raw).toBe(200);
  const up = await put(pathOf(p.body.data.uploadUrl), bytes, p.body.data.headers['Content-Type']);
  expect(up.statusCode, up.body).toBe(201);
  const reg = await t.request('POST', '/api/files', { token, body: { key: p.body.data.key, name, contentType, ...extra } });
  expect(reg.status, reg.raw).toBe(201);
  return reg.body.data;
}

describe('POST /api/upload', () => {
  it('returns a presigned PUT for a server-generated key of the caller institution', async () => {
    const res = await presign(teacher, { fileName: '../../Week 1 Notes.PDF', contentType: 'application/pdf', size: 1234 });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.method).toBe('PUT');
    expect(d.key).toMatch(/^inst_demo\/uploads\/[0-9a-f-]{36}\.pdf$/);
    expect(d.key).not.toMatch(/week|notes/i);
    expect(d.uploadUrl.startsWith(`http://lms.test/api/upload/${d.key}?`)).toBe(true);
    expect(d.headers).toEqual({ 'Content-Type': 'application/pdf' });
    expect(d.contentType).toBe('application/pdf');
    expect(d.maxBytes).toBe(1234);
    expect(d.expiresAt).toBe('2026-03-02T09:15:00.000Z');
  });

  it('normalises the content type and refuses disallowed types and sizes with 400', async () => {
    const ok = await presign(student, { fileName: 'a.png', contentType: 'Image/PNG', size: 10 });
    expect(ok.status).toBe(200);
    expect(ok.body.data.contentType).toBe('image/png');
    for (const body of [
      { fileName: 'a.html', contentType: 'text/html', size: 10 },
      { fileName: 'a.svg', contentType: 'image/svg+xml', size: 10 },
      { fileName: 'a.exe', contentType: 'application/x-msdownload', size: 10 },
      { fileName: 'a.mp4', contentType: 'video/mp4', size: 100 * 1024 * 1024 + 1 },
      { fileName: 'a.png', contentType: 'image/png', size: 10 * 1024 * 1024 + 1 },
      { fileName: 'a.vtt', contentType: 'text/vtt', size: 1024 * 1024 + 1 },
      { fileName: 'a.png', contentType: 'image/png', size: 0 },
      { fileName: '', contentType: 'image/png', size: 1 },
    ]) {
      const res = await presign(teacher, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await presign(teacher, { fileName: 'a.mp4', contentType: 'video/mp4', size: 100 * 1024 * 1024 })).status).toBe(200);
  });

  it('requires a session', async () => {
    const res = await t.request('POST', '/api/upload', { body: { fileName: 'a.pdf', contentType: 'application/pdf', size: 1 } });
    expect(res.status).toBe(401);
  });
});

describe('PUT to the signed upload URL', () => {
  it('stores the bytes once, with the signed type and size limit', async () => {
    const p = (await presign(student, { fileName: 'essay.txt', contentType: 'text/plain', size: 11 })).body.data;
    const path = pathOf(p.uploadUrl);

    const wrongType = await put(path, 'hello world', 'application/pdf');
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await put(path, 'hello world')).statusCode).toBe(415);

    const tooBig = await put(path, 'hello world!', 'text/plain');
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await t.deps.storage.exists(p.key)).toBe(false);

    const ok = await put(path, 'hello world', 'text/plain; charset=utf-8');
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toEqual({ data: { key: p.key, size: 11, contentType: 'text/plain' }, error: null });
    expect((await t.deps.storage.get(p.key)).toString()).toBe('hello world');

    // Never overwrites.
    const again = await put(path, 'HELLO WORLD', 'text/plain');
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('CONFLICT');
    expect((await t.deps.storage.get(p.key)).toString()).toBe('hello world');

    // Also reachable under /api/v1.
    const p2 = (await presign(student, { fileName: 'b.txt', contentType: 'text/plain', size: 3 })).body.data;
    expect((await put(pathOf(p2.uploadUrl).replace('/api/', '/api/v1/'), 'abc', 'text/plain')).statusCode).toBe(201);
  });

  it('refuses an empty body with 400 and stores nothing, so the real file can still be sent', async () => {
    const p = (await presign(student, { fileName: 'empty.txt', contentType: 'text/plain', size: 5 })).body.data;
    for (const empty of [
      () => put(pathOf(p.uploadUrl), '', 'text/plain'),
      // Chunked, without a Content-Length: found empty only at its end.
      () => t.app.inject({ method: 'PUT', url: pathOf(p.uploadUrl), payload: Readable.from([]), headers: { 'content-type': 'text/plain' } }),
    ]) {
      const res = await empty();
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'body', message: 'the upload has 0 bytes; size must be at least 1' }] } });
      expect(await t.deps.storage.exists(p.key)).toBe(false);
    }
    expect((await put(pathOf(p.uploadUrl), 'hello', 'text/plain')).statusCode).toBe(201);
    expect((await t.request('POST', '/api/files', { token: student, body: { key: p.key, name: 'Not empty', contentType: 'text/plain' } })).status).toBe(201);
  });

  it('refuses an expired URL with 403 FORBIDDEN', async () => {
    const p = (await presign(teacher, { fileName: 'a.txt', contentType: 'text/plain', size: 3 })).body.data;
    t.clock.advance(16 * 60 * 1000);
    try {
      const res = await put(pathOf(p.uploadUrl), 'abc', 'text/plain');
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
      expect(res.json().error.message).toMatch(/expired/);
    } finally {
      t.clock.advance(-16 * 60 * 1000);
    }
  });

  it('refuses tampered URLs with 403 FORBIDDEN', async () => {
    const p = (await presign(teacher, { fileName: 'a.txt', contentType: 'text/plain', size: 3 })).body.data;
    const other = (await presign(teacher, { fileName: 'b.txt', contentType: 'text/plain', size: 3 })).body.data;
    const flip = (sig: string) => sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    const tampered = [
      withQuery(p.uploadUrl, (q) => q.set('sig', flip(q.get('sig')!))),
      withQuery(p.uploadUrl, (q) => q.set('max', '1000000')),
      withQuery(p.uploadUrl, (q) => q.set('ct', 'application/pdf')),
      withQuery(p.uploadUrl, (q) => q.set('expires', String(Number(q.get('expires')) + 3600))),
      withQuery(p.uploadUrl, (q) => q.delete('sig')),
      // The signature of one key does not open another.
      `/api/upload/${other.key}?${new URL(p.uploadUrl).searchParams.toString()}`,
    ];
    for (const path of tampered) {
      const res = await put(path, 'abc', path.includes('ct=application') ? 'application/pdf' : 'text/plain');
      expect(res.statusCode, path).toBe(403);
      expect(res.json().error.code).toBe('FORBIDDEN');
    }
    expect(await t.deps.storage.exists(p.key)).toBe(false);
    expect(await t.deps.storage.exists(other.key)).toBe(false);
  });

  it('refuses keys that climb out of the storage root', async () => {
    const p = (await presign(teacher, { fileName: 'a.txt', contentType: 'text/plain', size: 3 })).body.data;
    const query = new URL(p.uploadUrl).searchParams.toString();
    const root = (t.deps.storage as LocalStorage).root;
    for (const key of ['..%2F..%2Fescaped.txt', '%2e%2e/%2e%2e/escaped.txt', 'inst_demo/uploads/..%2F..%2F..%2Fescaped.txt', '.meta/x']) {
      const res = await put(`/api/upload/${key}?${query}`, 'abc', 'text/plain');
      expect([403, 404], key).toContain(res.statusCode);
    }
    await expect(access(join(root, '..', 'escaped.txt'))).rejects.toThrow();
    await expect(access(join(root, '..', '..', 'escaped.txt'))).rejects.toThrow();
  });
});

describe('storage failures on the signed upload', () => {
  /** Runs `run` with the storage root replaced by a regular file: every write below it fails (ENOTDIR). */
  async function withBrokenStorage<T>(run: () => Promise<T>): Promise<T> {
    const root = (t.deps.storage as LocalStorage).root;
    await rename(root, `${root}.away`);
    await writeFile(root, 'not a directory');
    try {
      return await run();
    } finally {
      await rm(root);
      await rename(`${root}.away`, root);
    }
  }

  it('answers 503 SERVICE_UNAVAILABLE, naming no server path, and stores nothing; the retry succeeds', async () => {
    const p = (await presign(student, { fileName: 'retry.txt', contentType: 'text/plain', size: 11 })).body.data;
    const res = await withBrokenStorage(() => put(pathOf(p.uploadUrl), 'hello world', 'text/plain'));
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ data: null, error: { code: 'SERVICE_UNAVAILABLE', message: 'File storage is unavailable; retry shortly' } });
    expect(res.body).not.toContain((t.deps.storage as LocalStorage).root);
    expect(await t.deps.storage.exists(p.key)).toBe(false);

    const retry = await put(pathOf(p.uploadUrl), 'hello world', 'text/plain');
    expect(retry.statusCode).toBe(201);
    expect((await t.deps.storage.get(p.key)).toString()).toBe('hello world');
  });

  it("a body that breaks off mid-way is still the client's 400, with nothing stored", async () => {
    const p = (await presign(student, { fileName: 'cut.txt', contentType: 'text/plain', size: 100 })).body.data;
    const u = new URL(p.uploadUrl);
    // Some bytes, then the connection's end (Node's error for a request body cut off).
    let reads = 0;
    const body = new Readable({
      read() {
        if (reads++ === 0) this.push('the first half');
        else this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
    await expect(
      acceptSignedUpload(t.deps, {
        key: p.key,
        query: Object.fromEntries(u.searchParams),
        contentType: 'text/plain',
        contentLength: 100,
        body,
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400, message: 'Upload interrupted: the request body was not received completely' });
    expect(await t.deps.storage.exists(p.key)).toBe(false);
  });
});

describe('POST /api/files and downloads', () => {
  it('registers an uploaded object with the size read from storage, and serves it at url', async () => {
    const body = 'The quick brown fox';
    const p = (await presign(teacher, { fileName: 'fox.txt', contentType: 'text/plain', size: body.length })).body.data;
    expect((await put(pathOf(p.uploadUrl), body, 'text/plain')).statusCode).toBe(201);
    const res = await t.request('POST', '/api/files', { token: teacher, body: { key: p.key, name: 'Fox notes', contentType: 'text/plain' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      key: p.key,
      name: 'Fox notes',
      contentType: 'text/plain',
      size: body.length,
      courseId: null,
      lessonId: null,
      uploadedBy: 'u_teacher',
      createdAt: '2026-03-02T09:00:00.000Z',
    });
    expect(res.body.data.url).toMatch(/^http:\/\/lms\.test\/api\/files\/raw\//);

    // Streamed from storage (not read into memory whole), with its length.
    const whole = vi.spyOn(t.deps.storage, 'get');
    const dl = await t.app.inject({ method: 'GET', url: pathOf(res.body.data.url) });
    expect(whole).not.toHaveBeenCalled();
    whole.mockRestore();
    expect(dl.statusCode).toBe(200);
    expect(dl.body).toBe(body);
    expect(dl.headers['content-length']).toBe(String(body.length));
    expect(dl.headers['content-type']).toBe('text/plain');
    expect(dl.headers['cache-control']).toBe('private, max-age=3600');
    expect((await t.app.inject({ method: 'GET', url: pathOf(res.body.data.url).replace('/api/', '/api/v1/') })).body).toBe(body);

    const dup = await t.request('POST', '/api/files', { token: teacher, body: { key: p.key, name: 'again', contentType: 'text/plain' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
  });

  it('refuses expired or tampered download URLs with 403', async () => {
    const row = await uploadFile(teacher, 'dl.txt', 'download me');
    const flip = (sig: string) => sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    const tampered = await t.app.inject({ method: 'GET', url: withQuery(row.url, (q) => q.set('sig', flip(q.get('sig')!))) });
    expect(tampered.statusCode).toBe(403);
    expect(tampered.json().error.code).toBe('FORBIDDEN');
    const longer = await t.app.inject({ method: 'GET', url: withQuery(row.url, (q) => q.set('expires', String(Number(q.get('expires')) + 60))) });
    expect(longer.statusCode).toBe(403);
    const otherKey = await t.app.inject({ method: 'GET', url: pathOf(row.url).replace(row.key, row.key.replace(/\.txt$/, '.pdf')) });
    expect(otherKey.statusCode).toBe(403);
    t.clock.advance(3601 * 1000);
    try {
      const expired = await t.app.inject({ method: 'GET', url: pathOf(row.url) });
      expect(expired.statusCode).toBe(403);
      expect(expired.json().error.message).toMatch(/expired/);
    } finally {
      t.clock.advance(-3601 * 1000);
    }
    // Unsigned access to another object is refused too.
    expect((await t.app.inject({ method: 'GET', url: `/api/files/raw/${row.key}` })).statusCode).toBe(403);
  });

  it('refuses keys that are not uploads, missing objects and mismatches with 400; another institution’s upload with 404', async () => {
    const own = (await presign(teacher, { fileName: 'x.txt', contentType: 'text/plain', size: 3 })).body.data;
    const north = (await presign(otherTeacher, { fileName: 'x.txt', contentType: 'text/plain', size: 3 })).body.data;
    expect((await put(pathOf(north.uploadUrl), 'abc', 'text/plain')).statusCode).toBe(201);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['traversal', { key: '../../etc/passwd', name: 'x', contentType: 'text/plain' }],
      ['absolute', { key: '/etc/passwd', name: 'x', contentType: 'text/plain' }],
      ['not an upload key', { key: own.key.replace('/uploads/', '/captions/'), name: 'x', contentType: 'text/plain' }],
      ['never uploaded', { key: own.key, name: 'x', contentType: 'text/plain' }],
      ['disallowed type', { key: own.key, name: 'x', contentType: 'text/html' }],
    ];
    for (const [what, body] of cases) {
      const res = await t.request('POST', '/api/files', { token: teacher, body });
      expect(res.status, what).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    // Another institution's upload is 404, as another person's is: nothing says it exists.
    const theirs = await t.request('POST', '/api/files', { token: teacher, body: { key: north.key, name: 'x', contentType: 'text/plain' } });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toEqual({ code: 'NOT_FOUND', message: 'Upload not found' });
    expect((await put(pathOf(own.uploadUrl), 'abc', 'text/plain')).statusCode).toBe(201);
    const wrongType = await t.request('POST', '/api/files', { token: teacher, body: { key: own.key, name: 'x', contentType: 'application/pdf' } });
    expect(wrongType.status).toBe(400);
    const wrongSize = await t.request('POST', '/api/files', { token: teacher, body: { key: own.key, name: 'x', contentType: 'text/plain', size: 4 } });
    expect(wrongSize.status).toBe(400);
    expect(await t.db.select().from(files).where(eq(files.key, own.key))).toHaveLength(0);
    const ok = await t.request('POST', '/api/files', { token: teacher, body: { key: own.key, name: 'x', contentType: 'text/plain', size: 3 } });
    expect(ok.status).toBe(201);
  });

  it('refuses to register an empty object (an empty S3 PUT) with 400 and removes it', async () => {
    const p = (await presign(teacher, { fileName: 'blank.txt', contentType: 'text/plain', size: 5 })).body.data;
    // What an empty PUT to S3's own presigned URL leaves (the local PUT refuses it).
    await t.deps.storage.put(p.key, Buffer.alloc(0), 'text/plain');
    const res = await t.request('POST', '/api/files', { token: teacher, body: { key: p.key, name: 'Blank', contentType: 'text/plain' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'body.key', message: 'the upload has 0 bytes; size must be at least 1' }] } });
    expect(await t.deps.storage.exists(p.key)).toBe(false);
    expect(await t.db.select().from(files).where(eq(files.key, p.key))).toHaveLength(0);
  });

  it('links a course or lesson of the caller institution only', async () => {
    const course = await createCourse(t);
    const lesson = await createLesson(t, { courseId: course.id });
    const otherCourse = await createCourse(t);
    const northCourse = await createCourse(t, { institutionId: OTHER_INST });

    const withLesson = await uploadFile(teacher, 'l.txt', 'abc', 'text/plain', { lessonId: lesson.id });
    expect(withLesson).toMatchObject({ courseId: course.id, lessonId: lesson.id });

    for (const [extra, status] of [
      [{ courseId: northCourse.id }, 404],
      [{ courseId: 'nope' }, 404],
      [{ courseId: otherCourse.id, lessonId: lesson.id }, 400],
    ] as const) {
      const p = (await presign(teacher, { fileName: 'x.txt', contentType: 'text/plain', size: 3 })).body.data;
      await put(pathOf(p.uploadUrl), 'abc', 'text/plain');
      const res = await t.request('POST', '/api/files', { token: teacher, body: { key: p.key, name: 'x', contentType: 'text/plain', ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(status);
    }

    // A learner links only courses they may see: a draft course (or its lesson) is 404 as
    // everywhere else, so the answer does not tell that it exists.
    const draft = await createCourse(t, { status: 'DRAFT', publishedAt: null });
    const draftLesson = await createLesson(t, { courseId: draft.id });
    for (const [extra, status] of [
      [{ courseId: draft.id }, 404],
      [{ lessonId: draftLesson.id }, 404],
      [{ courseId: course.id, lessonId: lesson.id }, 201],
    ] as const) {
      const p = (await presign(student, { fileName: 'x.txt', contentType: 'text/plain', size: 3 })).body.data;
      await put(pathOf(p.uploadUrl), 'abc', 'text/plain');
      const res = await t.request('POST', '/api/files', { token: student, body: { key: p.key, name: 'x', contentType: 'text/plain', ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(status);
    }
    expect((await uploadFile(teacher, 'd.txt', 'abc', 'text/plain', { courseId: draft.id })).courseId).toBe(draft.id);
  });
});

describe('GET /api/files', () => {
  it('lists the institution files newest first, paginated, with search; learners see their own', async () => {
    const names: string[] = [];
    for (let i = 1; i <= 5; i++) {
      t.clock.advance(60_000);
      names.push(`List report ${i}.txt`);
      await uploadFile(i % 2 ? student : student2, names[names.length - 1]!, `file ${i}`);
    }
    const all = await t.request('GET', '/api/files', { token: teacher, query: { search: 'list report', perPage: 2 } });
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: 5, page: 1, perPage: 2, totalPages: 3 });
    expect(all.body.data.map((f: { name: string }) => f.name)).toEqual(['List report 5.txt', 'List report 4.txt']);
    const page3 = await t.request('GET', '/api/files', { token: teacher, query: { search: 'list report', limit: 2, page: 3 } });
    expect(page3.body.data.map((f: { name: string }) => f.name)).toEqual(['List report 1.txt']);
    expect(page3.body.data[0].url).toMatch(/\/api\/files\/raw\//);

    const mine = await t.request('GET', '/api/files', { token: student, query: { search: 'list report' } });
    expect(mine.body.data.map((f: { name: string }) => f.name)).toEqual(['List report 5.txt', 'List report 3.txt', 'List report 1.txt']);
    expect(mine.body.data.every((f: { uploadedBy: string }) => f.uploadedBy === 'c_stu_1')).toBe(true);

    // LIKE wildcards in the search are literal.
    expect((await t.request('GET', '/api/files', { token: teacher, query: { search: '%' } })).body.meta.total).toBe(0);

    const v1 = await t.request('GET', '/api/v1/files', { token: teacher, query: { search: 'list report', perPage: 2 } });
    expect(v1.body.data.map((f: { id: string }) => f.id)).toEqual(all.body.data.map((f: { id: string }) => f.id));

    expect((await t.request('GET', '/api/files', { token: teacher, query: { perPage: 101 } })).status).toBe(400);
  });

  it('shows another institution none of these files', async () => {
    const res = await t.request('GET', '/api/files', { token: otherTeacher, query: { search: 'list report' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.total).toBe(0);
  });
});

describe('docs', () => {
  it('documents the file routes', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    expect(doc.paths['/api/upload'].post.operationId).toBe('createUploadUrl');
    expect(doc.paths['/api/files'].get.responses['200']).toBeDefined();
    expect(doc.paths['/api/files'].post.responses['201']).toBeDefined();
    expect(doc.paths['/api/upload/{tenant}/{kind}/{object}'].put.responses['403']).toBeDefined();
    expect(doc.paths['/api/files/raw/{tenant}/{kind}/{object}'].get.security).toEqual([]);
    // Every documented route of this module is in the document (as the platform docs test checks).
    const mine = t.app.registeredRoutes.filter((r) => /^\/api\/(upload|files)/.test(r.url));
    expect(mine).toHaveLength(5);
    for (const r of mine) expect(doc.paths[r.url.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()], r.url).toBeDefined();
  });

  it('serves signed keys of any depth through the undocumented wildcard twin', async () => {
    await t.deps.storage.put('inst_demo/flat.txt', Buffer.from('flat'), 'text/plain');
    const res = await t.app.inject({ method: 'GET', url: pathOf(await t.deps.storage.urlFor('inst_demo/flat.txt')) });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('flat');
    const up = await t.deps.storage.presignUpload('inst_demo/a/b/c.txt', 'text/plain', 10, 60);
    expect((await put(pathOf(up.url), 'deep', 'text/plain')).statusCode).toBe(201);
    expect((await t.deps.storage.get('inst_demo/a/b/c.txt')).toString()).toBe('deep');
  });
});
