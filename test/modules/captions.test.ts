import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { multipart, type Part } from '../helpers/multipart.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { Db } from '../../src/platform/db/client.js';
import { ManualClock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { LocalStorage } from '../../src/platform/storage/index.js';
import type { LessonBlock } from '../../src/modules/courses/courses.tables.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { captionTracks } from '../../src/modules/captions/captions.tables.js';
import { SUPPORTED_CAPTION_LANGUAGES } from '../../src/modules/captions/captions.schemas.js';

const INST = 'inst_demo';
const OTHER_INST = 'inst_north';
const TEST_SECRET = 'test-secret-0123456789abcdef0123456789';

// ── rows through the shared factories (thin wrappers: institution and blocks up front) ──

async function insertCourse(db: Db, institutionId = INST, ownerId = 'u_teacher') {
  return (await createCourse({ db, clock: t.clock }, { institutionId, ownerId })).id;
}

async function insertLesson(db: Db, courseId: string, blocks: LessonBlock[] = [], institutionId = INST) {
  return (await createLesson({ db, clock: t.clock }, { courseId, institutionId, type: 'VIDEO', blocks })).id;
}

const VTT = 'WEBVTT\n\n00:00.000 --> 00:02.500\n<v Ana>Hello &amp; welcome</v>\n\n00:02.500 --> 00:05.000\nSecond line\n';

interface UploadOptions {
  file?: { filename?: string; contentType?: string | null; data?: string | Buffer } | null;
  language?: string | null;
  label?: string | null;
  blockId?: string;
  isDefault?: string;
  token: string;
  prefix?: string;
  headers?: Record<string, string>;
}

function upload(t: TestApp, lessonId: string, o: UploadOptions) {
  const parts: Part[] = [];
  if (o.language !== null) parts.push({ name: 'language', value: o.language ?? 'en' });
  if (o.label !== null) parts.push({ name: 'label', value: o.label ?? 'English' });
  if (o.blockId !== undefined) parts.push({ name: 'blockId', value: o.blockId });
  if (o.isDefault !== undefined) parts.push({ name: 'isDefault', value: o.isDefault });
  if (o.file !== null) {
    const f = o.file ?? {};
    parts.push({
      name: 'file',
      filename: f.filename ?? 'captions.vtt',
      contentType: f.contentType === undefined ? 'text/vtt' : f.contentType,
      data: f.data ?? VTT,
    });
  }
  const { body, headers } = multipart(parts);
  return t.request('POST', `${o.prefix ?? '/api'}/lessons/${lessonId}/captions`, { token: o.token, body, headers: { ...headers, ...o.headers } });
}

/** A valid WebVTT file of exactly `size` bytes. */
function vttOfSize(size: number): string {
  const head = 'WEBVTT\n\n00:00.000 --> 00:01.000\n';
  return head + 'a'.repeat(size - Buffer.byteLength(head));
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

let t: TestApp;
let teacher: string;
let admin: string;
let student: string;
let outsider: string;
let dropped: string;
let otherTeacher: string;
let courseId: string;
let lessonId: string;

const BLOCKS: LessonBlock[] = [
  { id: 'v1', type: 'video' },
  { id: 'v2', type: 'VIDEO' },
  { id: 't1', type: 'text' },
];

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_teacher' });
  admin = await t.token({ role: 'ADMIN', id: 'u_admin' });
  student = await t.token({ role: 'STUDENT', id: 'c_stu_in' });
  outsider = await t.token({ role: 'STUDENT', id: 'c_stu_out' });
  dropped = await t.token({ role: 'STUDENT', id: 'c_stu_dropped' });
  otherTeacher = await t.token({ role: 'TEACHER', id: 'u_north', institutionId: OTHER_INST });
  courseId = await insertCourse(t.db);
  lessonId = await insertLesson(t.db, courseId, BLOCKS);
  await enroll(t, { courseId, studentId: 'c_stu_in' });
  await enroll(t, { courseId, studentId: 'c_stu_dropped', status: 'DROPPED' });
}, 180_000);
afterAll(() => t?.close());

async function freshLesson(blocks: LessonBlock[] = BLOCKS) {
  return insertLesson(t.db, courseId, blocks);
}

async function defaultsOf(lesson: string, blockId: string | null) {
  const rows = await t.db
    .select()
    .from(captionTracks)
    .where(and(eq(captionTracks.lessonId, lesson), eq(captionTracks.isDefault, true)));
  return rows.filter((r) => r.blockId === blockId);
}

describe('POST /api/lessons/:id/captions: file rules (spec 4.2 rules 2 and 3)', () => {
  it('accepts text/vtt and returns 201 with the track', async () => {
    const res = await upload(t, lessonId, { token: teacher, label: '  English  ' });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.error).toBeNull();
    expect(res.body.data).toMatchObject({ lessonId, blockId: null, language: 'en', label: 'English', isDefault: false });
    expect(typeof res.body.data.id).toBe('string');
    expect(res.body.data.createdAt).toBe('2026-03-02T09:00:00.000Z');
    expect(res.body.data.vttUrl).toMatch(/^http:\/\/lms\.test\/api\/files\/raw\//);
    expect(Object.keys(res.body.data).sort()).toEqual(['blockId', 'createdAt', 'id', 'isDefault', 'label', 'language', 'lessonId', 'vttUrl']);
  });

  it('stores the file under a server-generated key and serves it at vttUrl', async () => {
    const res = await upload(t, lessonId, { token: teacher, file: { filename: '../../evil name.vtt' } });
    expect(res.status).toBe(201);
    const [row] = await t.db.select().from(captionTracks).where(eq(captionTracks.id, res.body.data.id));
    expect(row!.storageKey).toMatch(/^inst_demo\/captions\/[0-9a-f-]{36}\.vtt$/);
    expect(row!.storageKey).not.toContain('evil');
    const file = await t.app.inject({ method: 'GET', url: pathOf(res.body.data.vttUrl) });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toMatch(/^text\/vtt/);
    expect(file.body).toBe(VTT);
  });

  it.each([
    ['text/plain with a .txt name', { filename: 'captions.txt', contentType: 'text/plain' }],
    ['text/vtt with parameters', { filename: 'captions', contentType: 'text/vtt; charset=utf-8' }],
    ['no type with a .vtt name', { filename: 'captions.vtt', contentType: null }],
    ['an empty type with a .vtt name', { filename: 'captions.vtt', contentType: '' }],
    ['another type with a .VTT name', { filename: 'CAPTIONS.VTT', contentType: 'application/octet-stream' }],
  ])('accepts %s', async (_name, file) => {
    const res = await upload(t, lessonId, { token: teacher, file });
    expect(res.status, res.raw).toBe(201);
  });

  it.each([
    ['another type without a .vtt name', { filename: 'captions.srt', contentType: 'application/x-subrip' }],
    ['an octet stream named .txt', { filename: 'captions.txt', contentType: 'application/octet-stream' }],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_name, file) => {
    const res = await upload(t, lessonId, { token: teacher, file });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'file' })]));
  });

  it('refuses content without the WEBVTT header', async () => {
    const res = await upload(t, lessonId, { token: teacher, file: { data: '00:00.000 --> 00:01.000\nHello\n' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body.error.details)).toContain('WEBVTT');
    const srt = await upload(t, lessonId, { token: teacher, file: { data: '1\n00:00:00,000 --> 00:00:01,000\nHi\n' } });
    expect(srt.status).toBe(400);
  });

  it('accepts a UTF-8 BOM before the header', async () => {
    const res = await upload(t, lessonId, { token: teacher, file: { data: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(VTT)]) } });
    expect(res.status, res.raw).toBe(201);
  });

  it('refuses a file the WebVTT parser reports errors for', async () => {
    const bad = 'WEBVTT\n\n00:00.000 -> 00:01.000\nbroken arrow\n';
    const res = await upload(t, lessonId, { token: teacher, file: { data: bad } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const headerNoBlank = await upload(t, lessonId, { token: teacher, file: { data: 'WEBVTTX\n\n' } });
    expect(headerNoBlank.status).toBe(400);
  });

  it('refuses a missing file with 400', async () => {
    const res = await upload(t, lessonId, { token: teacher, file: null });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(expect.arrayContaining([{ field: 'file', message: 'file is required' }]));
  });

  it('accepts exactly 1 MB and refuses one byte more with 413 PAYLOAD_TOO_LARGE', async () => {
    const exact = vttOfSize(1_048_576);
    expect(Buffer.byteLength(exact)).toBe(1_048_576);
    const ok = await upload(t, lessonId, { token: teacher, file: { data: exact } });
    expect(ok.status, ok.raw.slice(0, 300)).toBe(201);
    const over = await upload(t, lessonId, { token: teacher, file: { data: vttOfSize(1_048_577) } });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses a form with two file parts with 400, not 413', async () => {
    const file = { name: 'file', filename: 'a.vtt', contentType: 'text/vtt', data: VTT };
    const { body, headers } = multipart([{ name: 'language', value: 'en' }, { name: 'label', value: 'Two' }, file, file]);
    const res = await t.request('POST', `/api/lessons/${lessonId}/captions`, { token: teacher, body, headers });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual([{ field: 'file', message: 'only one file may be sent' }]);
  });

  it('refuses a body that is not multipart with 415', async () => {
    const res = await t.request('POST', `/api/lessons/${lessonId}/captions`, { token: teacher, body: { language: 'en', label: 'x' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('writes nothing when validation fails (no row, no stored object)', async () => {
    const lesson = await freshLesson();
    const storage = t.deps.storage as LocalStorage;
    const before = await listObjects(storage.root);
    for (const o of [
      { file: { data: 'nope' } },
      { language: 'xx' },
      { label: '' },
      { blockId: 't1' },
      { file: { filename: 'a.srt', contentType: 'application/x-subrip' } },
    ] satisfies Array<Partial<UploadOptions>>) {
      const res = await upload(t, lesson, { token: teacher, ...o });
      expect(res.status).toBe(400);
    }
    expect(await t.db.select().from(captionTracks).where(eq(captionTracks.lessonId, lesson))).toHaveLength(0);
    expect(await listObjects(storage.root)).toEqual(before);
  });
});

describe('POST with the file storage failing', () => {
  it('answers 503 SERVICE_UNAVAILABLE, writes no row and logs the cause; the transcript keeps its 502 (rule 8)', async () => {
    const lines: Array<Record<string, any>> = [];
    const app = await createTestApp({ logger: { level: 'warn', stream: { write: (l: string) => void lines.push(JSON.parse(l)) } } });
    const root = (app.deps.storage as LocalStorage).root;
    try {
      const token = await app.token({ role: 'TEACHER', id: 'u_teacher' });
      const lesson = await insertLesson(app.db, await insertCourse(app.db));
      const stored = await upload(app, lesson, { token });
      expect(stored.status).toBe(201);
      // DATA_DIR/files replaced by a regular file: every write below it fails with ENOTDIR.
      await rename(root, `${root}.away`);
      await writeFile(root, 'not a directory');

      const res = await upload(app, lesson, { token, label: 'Second', headers: { 'x-request-id': 'req-broken-storage' } });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ data: null, error: { code: 'SERVICE_UNAVAILABLE', message: 'File storage is unavailable; retry shortly' } });
      expect(res.raw).not.toContain(root);
      expect((await app.db.select().from(captionTracks).where(eq(captionTracks.lessonId, lesson))).map((r) => r.label)).toEqual(['English']);
      const logged = lines.find((l) => l.reqId === 'req-broken-storage' && l.level >= 50);
      expect(logged).toMatchObject({ msg: 'file storage unavailable', err: { message: expect.stringContaining('ENOTDIR') } });

      const transcript = await app.request('GET', `/api/lessons/${lesson}/captions/${stored.body.data.id}/transcript`, { token });
      expect(transcript.status).toBe(502);
      expect(transcript.body.error.code).toBe('INTERNAL_ERROR');
    } finally {
      await rm(root, { force: true });
      await rename(`${root}.away`, root).catch(() => undefined);
      await app.close();
    }
  }, 180_000);
});

async function listObjects(root: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  try {
    const entries = await readdir(join(root, 'inst_demo', 'captions'));
    return entries.sort();
  } catch {
    return [];
  }
}

describe('POST: fields (spec 4.2 rules 3 and 5, part 8)', () => {
  it('accepts a label of 80 characters and refuses 81 or an empty one', async () => {
    const ok = await upload(t, lessonId, { token: teacher, label: 'L'.repeat(80) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.label).toBe('L'.repeat(80));
    // Characters are code points (spec 8): 80 emoji are 160 UTF-16 units and still 80 characters.
    const emoji = await upload(t, lessonId, { token: teacher, label: '🎬'.repeat(80), language: 'fr' });
    expect(emoji.status, JSON.stringify(emoji.body)).toBe(201);
    expect(emoji.body.data.label).toBe('🎬'.repeat(80));
    for (const label of ['L'.repeat(81), '🎬'.repeat(81), '', '   ', null]) {
      const res = await upload(t, lessonId, { token: teacher, label });
      expect(res.status, String(label)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('label');
    }
    // An empty label is one failing rule, not also "too long".
    const empty = await upload(t, lessonId, { token: teacher, label: '  ' });
    expect(empty.body.error.details.fields).toEqual([{ field: 'label', message: 'label must not be empty' }]);
  });

  it('requires a language from the supported list', async () => {
    expect(SUPPORTED_CAPTION_LANGUAGES.length).toBeGreaterThanOrEqual(20);
    for (const language of ['xx', 'english', 'pt-BR', '', null]) {
      const res = await upload(t, lessonId, { token: teacher, language });
      expect(res.status, String(language)).toBe(400);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('language');
    }
    for (const language of ['fr', 'sw', 'hi', 'zh']) {
      const res = await upload(t, lessonId, { token: teacher, language });
      expect(res.status).toBe(201);
      expect(res.body.data.language).toBe(language);
    }
  });

  it('documents the supported languages in OpenAPI', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const post = doc.paths['/api/lessons/{id}/captions'].post;
    expect(post.description).toContain('SUPPORTED_CAPTION_LANGUAGES');
    expect(post.description).toContain('sw');
    expect(post.requestBody.content['multipart/form-data']).toBeDefined();
    expect(post.responses['201']).toBeDefined();
    expect(post.responses['413']).toBeDefined();
    expect(doc.paths['/api/lessons/{id}/captions/{captionId}/transcript'].get.responses['502']).toBeDefined();
  });

  it('accepts a blockId naming a video block (any case) and refuses other blocks', async () => {
    const v1 = await upload(t, lessonId, { token: teacher, blockId: 'v1' });
    expect(v1.status).toBe(201);
    expect(v1.body.data.blockId).toBe('v1');
    const v2 = await upload(t, lessonId, { token: teacher, blockId: 'v2' });
    expect(v2.status).toBe(201);
    for (const blockId of ['t1', 'missing']) {
      const res = await upload(t, lessonId, { token: teacher, blockId });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('blockId');
    }
  });

  it('a lesson without blocks takes any blockId, and keeps one default per (lesson, blockId)', async () => {
    const lesson = await freshLesson([]);
    const a = await upload(t, lesson, { token: teacher, blockId: 'intro-video', isDefault: 'true', label: 'A' });
    expect(a.status, a.raw).toBe(201);
    expect(a.body.data).toMatchObject({ blockId: 'intro-video', isDefault: true });
    const b = await upload(t, lesson, { token: teacher, blockId: 'intro-video', isDefault: 'true', label: 'B' });
    const other = await upload(t, lesson, { token: teacher, blockId: 'outro-video', isDefault: 'true', label: 'C' });
    expect([b.status, other.status]).toEqual([201, 201]);
    expect((await defaultsOf(lesson, 'intro-video')).map((r) => r.label)).toEqual(['B']);
    expect((await defaultsOf(lesson, 'outro-video')).map((r) => r.label)).toEqual(['C']);
  });

  it('reads isDefault as true for "true", "1" and "on", and false otherwise', async () => {
    const lesson = await freshLesson();
    const results: Record<string, boolean> = {};
    for (const value of ['true', '1', 'on', 'false', '0', 'off']) {
      const res = await upload(t, lesson, { token: teacher, isDefault: value, label: value });
      expect(res.status).toBe(201);
      results[value] = res.body.data.isDefault;
    }
    expect(results).toEqual({ true: true, 1: true, on: true, false: false, 0: false, off: false });
    const absent = await upload(t, lesson, { token: teacher });
    expect(absent.body.data.isDefault).toBe(false);
  });
});

describe('defaults and ordering', () => {
  it('demotes the previous default of the same (lesson, blockId) on create, and lists default first', async () => {
    const lesson = await freshLesson();
    const a = await upload(t, lesson, { token: teacher, label: 'A', isDefault: 'true' });
    t.clock.advance(1000);
    const b = await upload(t, lesson, { token: teacher, label: 'B' });
    t.clock.advance(1000);
    const c = await upload(t, lesson, { token: teacher, label: 'C', isDefault: 'on' });
    t.clock.advance(1000);
    const blockDefault = await upload(t, lesson, { token: teacher, label: 'V1', blockId: 'v1', isDefault: '1' });
    t.clock.advance(1000);
    const d = await upload(t, lesson, { token: teacher, label: 'D' });
    for (const r of [a, b, c, blockDefault, d]) expect(r.status).toBe(201);

    const list = await t.request('GET', `/api/lessons/${lesson}/captions`, { token: teacher });
    expect(list.status).toBe(200);
    const labels = list.body.data.map((x: { label: string; isDefault: boolean }) => `${x.label}:${x.isDefault}`);
    // Defaults first (C for the lesson-level video, V1 for block v1, both untouched by each other), then by creation.
    expect(labels).toEqual(['C:true', 'V1:true', 'A:false', 'B:false', 'D:false']);
    expect(await defaultsOf(lesson, null)).toHaveLength(1);
    expect(await defaultsOf(lesson, 'v1')).toHaveLength(1);
  });

  it('PATCH changes label and language, and isDefault true demotes the others', async () => {
    const lesson = await freshLesson();
    const a = await upload(t, lesson, { token: teacher, label: 'A', isDefault: 'true', blockId: 'v2' });
    const b = await upload(t, lesson, { token: teacher, label: 'B', blockId: 'v2' });
    const lessonLevel = await upload(t, lesson, { token: teacher, label: 'L', isDefault: 'true' });

    const patched = await t.request('PATCH', `/api/lessons/${lesson}/captions/${b.body.data.id}`, {
      token: teacher,
      body: { isDefault: true, label: '  Bee ', language: 'fr' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: b.body.data.id, isDefault: true, label: 'Bee', language: 'fr', blockId: 'v2' });

    const list = (await t.request('GET', `/api/lessons/${lesson}/captions`, { token: teacher })).body.data;
    const byId = Object.fromEntries(list.map((x: { id: string; isDefault: boolean }) => [x.id, x.isDefault]));
    expect(byId[a.body.data.id]).toBe(false);
    expect(byId[b.body.data.id]).toBe(true);
    expect(byId[lessonLevel.body.data.id]).toBe(true); // another video: untouched

    const unset = await t.request('PATCH', `/api/lessons/${lesson}/captions/${b.body.data.id}`, { token: teacher, body: { isDefault: false } });
    expect(unset.body.data.isDefault).toBe(false);
    expect(await defaultsOf(lesson, 'v2')).toHaveLength(0);

    const empty = await t.request('PATCH', `/api/lessons/${lesson}/captions/${a.body.data.id}`, { token: teacher, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data.label).toBe('A');

    // The upload's form values mean the same here.
    for (const [value, expected] of [
      ['on', true],
      [0, false],
      ['1', true],
      ['off', false],
      [1, true],
      ['false', false],
    ] as const) {
      const res = await t.request('PATCH', `/api/lessons/${lesson}/captions/${a.body.data.id}`, { token: teacher, body: { isDefault: value } });
      expect(res.status, String(value)).toBe(200);
      expect(res.body.data.isDefault, String(value)).toBe(expected);
    }
    expect(await defaultsOf(lesson, 'v2')).toHaveLength(0);
  });

  it('PATCH validates label (1 to 80) and language', async () => {
    const created = await upload(t, lessonId, { token: teacher });
    const url = `/api/lessons/${lessonId}/captions/${created.body.data.id}`;
    expect((await t.request('PATCH', url, { token: teacher, body: { label: 'L'.repeat(80) } })).status).toBe(200);
    for (const body of [{ label: 'L'.repeat(81) }, { label: ' ' }, { language: 'xx' }, { isDefault: 'yes' }]) {
      const res = await t.request('PATCH', url, { token: teacher, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await t.request('PATCH', `/api/lessons/${lessonId}/captions/nope`, { token: teacher, body: { label: 'x' } })).status).toBe(404);
  });

  it('leaves exactly one default when several default changes race', async () => {
    const lesson = await freshLesson();
    const existing = await Promise.all([1, 2, 3].map((i) => upload(t, lesson, { token: teacher, label: `E${i}`, blockId: 'v1' })));
    const results = await Promise.all([
      ...[1, 2, 3, 4, 5, 6].map((i) => upload(t, lesson, { token: teacher, label: `R${i}`, blockId: 'v1', isDefault: 'true' })),
      ...existing.map((e) => t.request('PATCH', `/api/lessons/${lesson}/captions/${e.body.data.id}`, { token: teacher, body: { isDefault: true } })),
    ]);
    for (const r of results) expect([200, 201, 409], r.raw).toContain(r.status);
    expect(results.filter((r) => r.status < 300).length).toBeGreaterThan(0);
    expect(await defaultsOf(lesson, 'v1')).toHaveLength(1);

    // The same on the lesson-level video (block_id null has its own partial index).
    const lessonLevel = await Promise.all([1, 2, 3, 4, 5].map((i) => upload(t, lesson, { token: admin, label: `N${i}`, isDefault: '1' })));
    for (const r of lessonLevel) expect([201, 409]).toContain(r.status);
    expect(await defaultsOf(lesson, null)).toHaveLength(1);
    expect(await defaultsOf(lesson, 'v1')).toHaveLength(1);
  });

  it('enforces one default per (lesson, blockId) in the database itself', async () => {
    const lesson = await freshLesson();
    const row = (blockId: string | null) => ({
      id: newId(),
      institutionId: INST,
      lessonId: lesson,
      blockId,
      language: 'en',
      label: 'x',
      storageKey: `inst_demo/captions/${newId()}.vtt`,
      isDefault: true,
      createdAt: new Date(),
      createdBy: 'u',
    });
    await t.db.insert(captionTracks).values(row(null));
    await expect(t.db.insert(captionTracks).values(row(null))).rejects.toThrow();
    await t.db.insert(captionTracks).values(row('v1'));
    await expect(t.db.insert(captionTracks).values(row('v1'))).rejects.toThrow();
    await t.db.insert(captionTracks).values(row('v2'));
    await t.db.insert(captionTracks).values({ ...row(null), isDefault: false });
  });
});

describe('DELETE', () => {
  it('removes the row and the stored file', async () => {
    const created = await upload(t, lessonId, { token: teacher });
    const [row] = await t.db.select().from(captionTracks).where(eq(captionTracks.id, created.body.data.id));
    expect(await t.deps.storage.exists(row!.storageKey)).toBe(true);
    const res = await t.request('DELETE', `/api/lessons/${lessonId}/captions/${created.body.data.id}`, { token: teacher });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: created.body.data.id, deleted: true }, error: null });
    expect(await t.db.select().from(captionTracks).where(eq(captionTracks.id, created.body.data.id))).toHaveLength(0);
    expect(await t.deps.storage.exists(row!.storageKey)).toBe(false);
    const again = await t.request('DELETE', `/api/lessons/${lessonId}/captions/${created.body.data.id}`, { token: teacher });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
  });

  it('still removes the row when the storage delete throws, and logs a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lms-flaky-'));
    const clock = new ManualClock('2026-03-02T09:00:00.000Z');
    class FlakyStorage extends LocalStorage {
      override async delete(): Promise<void> {
        throw new Error('storage is down');
      }
    }
    const storage = new FlakyStorage({ root: dir, publicBaseUrl: 'http://lms.test', authSecret: TEST_SECRET, clock });
    // Services log through the request's logger: capture its lines.
    const lines: string[] = [];
    const flaky = await createTestApp({ storage, clock, logger: { level: 'warn', stream: { write: (l: string) => void lines.push(l) } } });
    try {
      const token = await flaky.token({ role: 'TEACHER', id: 'u_teacher' });
      const course = await insertCourse(flaky.db);
      const lesson = await insertLesson(flaky.db, course);
      const created = await upload(flaky, lesson, { token });
      expect(created.status).toBe(201);
      const [row] = await flaky.db.select().from(captionTracks).where(eq(captionTracks.id, created.body.data.id));

      const res = await flaky.request('DELETE', `/api/lessons/${lesson}/captions/${created.body.data.id}`, {
        token,
        headers: { 'x-request-id': 'req-flaky-delete' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: created.body.data.id, deleted: true });
      expect(await flaky.db.select().from(captionTracks).where(eq(captionTracks.id, created.body.data.id))).toHaveLength(0);
      expect(await storage.exists(row!.storageKey)).toBe(true);
      const warning = lines.map((l) => JSON.parse(l)).find((l) => String(l.msg).includes(row!.storageKey));
      expect(warning).toMatchObject({ level: 40, reqId: 'req-flaky-delete' });
    } finally {
      await flaky.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('GET transcript', () => {
  it('returns the cues, with Cache-Control, and serves a second read from the cache', async () => {
    const created = await upload(t, lessonId, { token: teacher, label: 'Transcript', language: 'es' });
    const id = created.body.data.id;
    const url = `/api/lessons/${lessonId}/captions/${id}/transcript`;
    const res = await t.request('GET', url, { token: student });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, max-age=3600');
    expect(res.body.data).toEqual({
      captionId: id,
      language: 'es',
      label: 'Transcript',
      cues: [
        { start: 0, end: 2.5, text: 'Hello & welcome' },
        { start: 2.5, end: 5, text: 'Second line' },
      ],
    });

    // Stored files are immutable, so the cached transcript stays valid while the file is gone.
    const [row] = await t.db.select().from(captionTracks).where(eq(captionTracks.id, id));
    await t.deps.storage.delete(row!.storageKey);
    t.clock.advance(3599 * 1000);
    const cached = await t.request('GET', url, { token: teacher });
    expect(cached.status).toBe(200);
    expect(cached.body.data.cues).toHaveLength(2);
    expect(cached.headers['cache-control']).toBe('private, max-age=3600');

    // A label change shows at once (only the cues are cached).
    await t.request('PATCH', `/api/lessons/${lessonId}/captions/${id}`, { token: teacher, body: { label: 'Renamed' } });
    expect((await t.request('GET', url, { token: teacher })).body.data.label).toBe('Renamed');

    // After 3600 s the cache entry expires and the missing file shows.
    t.clock.advance(2000);
    const expired = await t.request('GET', url, { token: teacher });
    expect(expired.status).toBe(502);
    expect(expired.body).toMatchObject({ data: null, error: { code: 'INTERNAL_ERROR' } });
  });

  it('answers 502 INTERNAL_ERROR when the stored file is missing on first read', async () => {
    const created = await upload(t, lessonId, { token: teacher });
    const [row] = await t.db.select().from(captionTracks).where(eq(captionTracks.id, created.body.data.id));
    await t.deps.storage.delete(row!.storageKey);
    const res = await t.request('GET', `/api/lessons/${lessonId}/captions/${created.body.data.id}/transcript`, { token: teacher });
    expect(res.status).toBe(502);
    expect(res.body.data).toBeNull();
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect(res.headers['cache-control']).toBeUndefined();
  });

  it('answers 404 NOT_FOUND for an unknown track or a track of another lesson', async () => {
    const unknown = await t.request('GET', `/api/lessons/${lessonId}/captions/${newId()}/transcript`, { token: teacher });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    const created = await upload(t, lessonId, { token: teacher });
    const other = await freshLesson();
    const wrongLesson = await t.request('GET', `/api/lessons/${other}/captions/${created.body.data.id}/transcript`, { token: teacher });
    expect(wrongLesson.status).toBe(404);
    const wrongPatch = await t.request('PATCH', `/api/lessons/${other}/captions/${created.body.data.id}`, { token: teacher, body: { label: 'x' } });
    expect(wrongPatch.status).toBe(404);
    const wrongDelete = await t.request('DELETE', `/api/lessons/${other}/captions/${created.body.data.id}`, { token: teacher });
    expect(wrongDelete.status).toBe(404);
    const unknownLesson = await t.request('GET', `/api/lessons/${newId()}/captions`, { token: teacher });
    expect(unknownLesson.status).toBe(404);
  });
});

describe('access', () => {
  let trackId: string;
  beforeAll(async () => {
    trackId = (await upload(t, lessonId, { token: teacher })).body.data.id;
  });

  it('lets an enrolled student read, and refuses a student not enrolled (or dropped) with 403 ENROLLMENT_REQUIRED', async () => {
    expect((await t.request('GET', `/api/lessons/${lessonId}/captions`, { token: student })).status).toBe(200);
    for (const token of [outsider, dropped]) {
      for (const url of [`/api/lessons/${lessonId}/captions`, `/api/lessons/${lessonId}/captions/${trackId}/transcript`]) {
        const res = await t.request('GET', url, { token });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('ENROLLMENT_REQUIRED');
      }
    }
  });

  it('refuses writes without canManageCourses with 403 FORBIDDEN', async () => {
    const post = await upload(t, lessonId, { token: student });
    expect(post.status).toBe(403);
    expect(post.body.error.code).toBe('FORBIDDEN');
    const patch = await t.request('PATCH', `/api/lessons/${lessonId}/captions/${trackId}`, { token: student, body: { label: 'x' } });
    expect(patch.status).toBe(403);
    expect(patch.body.error.code).toBe('FORBIDDEN');
    const del = await t.request('DELETE', `/api/lessons/${lessonId}/captions/${trackId}`, { token: student });
    expect(del.status).toBe(403);
    const permitted = await t.token({ role: 'STUDENT', id: 'c_stu_ta', permissions: ['canManageCourses'] });
    expect((await upload(t, lessonId, { token: permitted })).status).toBe(201);
  });

  it('requires a session', async () => {
    const res = await t.request('GET', `/api/lessons/${lessonId}/captions`);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('AUTH_REQUIRED');
  });

  it('answers 404 to another institution and shows it nothing', async () => {
    const list = await t.request('GET', `/api/lessons/${lessonId}/captions`, { token: otherTeacher });
    expect(list.status).toBe(404);
    expect(list.body.data).toBeNull();
    expect((await upload(t, lessonId, { token: otherTeacher })).status).toBe(404);
    const base = `/api/lessons/${lessonId}/captions/${trackId}`;
    expect((await t.request('PATCH', base, { token: otherTeacher, body: { label: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', base, { token: otherTeacher })).status).toBe(404);
    expect((await t.request('GET', `${base}/transcript`, { token: otherTeacher })).status).toBe(404);
    // Its own lesson does not reach this institution's tracks either.
    const northCourse = await insertCourse(t.db, OTHER_INST, 'u_north');
    const northLesson = await insertLesson(t.db, northCourse, [], OTHER_INST);
    expect((await t.request('GET', `/api/lessons/${northLesson}/captions/${trackId}/transcript`, { token: otherTeacher })).status).toBe(404);
    expect((await t.request('GET', `/api/lessons/${northLesson}/captions`, { token: otherTeacher })).body.data).toEqual([]);
    // The track is intact.
    expect(await t.db.select().from(captionTracks).where(eq(captionTracks.id, trackId))).toHaveLength(1);
  });
});

describe('/api/v1', () => {
  it('serves the same routes and payloads under /api/v1', async () => {
    const lesson = await freshLesson();
    const created = await upload(t, lesson, { token: teacher, prefix: '/api/v1', isDefault: 'true' });
    expect(created.status).toBe(201);
    const v0 = await t.request('GET', `/api/lessons/${lesson}/captions`, { token: student });
    const v1 = await t.request('GET', `/api/v1/lessons/${lesson}/captions`, { token: student });
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual(v0.body);
    const id = created.body.data.id;
    const tr0 = await t.request('GET', `/api/lessons/${lesson}/captions/${id}/transcript`, { token: student });
    const tr1 = await t.request('GET', `/api/v1/lessons/${lesson}/captions/${id}/transcript`, { token: student });
    expect(tr1.body).toEqual(tr0.body);
    expect(tr1.headers['cache-control']).toBe('private, max-age=3600');
    const patched = await t.request('PATCH', `/api/v1/lessons/${lesson}/captions/${id}`, { token: teacher, body: { label: 'v1' } });
    expect(patched.body.data.label).toBe('v1');
    const del = await t.request('DELETE', `/api/v1/lessons/${lesson}/captions/${id}`, { token: teacher });
    expect(del.body).toEqual({ data: { id, deleted: true }, error: null });
  });
});
