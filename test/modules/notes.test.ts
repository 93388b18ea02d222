import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError } from '../helpers/expect.js';
import { lessonBookmarks, lessonNotes } from '../../src/modules/notes/notes.tables.js';
import type { Course, Lesson } from '../../src/modules/courses/courses.tables.js';
import { enrollments, type Enrollment } from '../../src/modules/enrollments/enrollments.tables.js';

const INST = 'inst_demo';
const OTHER_INST = 'inst_north';
const MINUTE = 60_000;

let t: TestApp;
let courseA: Course;
let courseB: Course;
let videoA: Lesson;
let textA: Lesson;
let videoB: Lesson;
let otherInstLesson: Lesson;

// Students (person ids) and their tokens.
const S1 = 'c_demo_stu_01'; // ACTIVE in A and B
const S2 = 'c_demo_stu_02'; // ACTIVE in A: "another student"
const S3 = 'c_demo_stu_03'; // DROPPED in A
const S4 = 'c_demo_stu_04'; // COMPLETED in A
const S5 = 'c_demo_stu_05'; // no enrollment
let s1: string;
let s2: string;
let s3: string;
let s4: string;
let s5: string;
/** Same person id as S1, but a session of another institution. */
let s1Elsewhere: string;
let teacher: string;
let enrollS1A: Enrollment;

beforeAll(async () => {
  t = await createTestApp();
  courseA = await createCourse(t, { institutionId: INST, ownerId: 'u_demo_teacher', title: 'Algebra' });
  courseB = await createCourse(t, { institutionId: INST, ownerId: 'u_demo_teacher', title: 'Biology' });
  videoA = await createLesson(t, { courseId: courseA.id, type: 'VIDEO', title: 'Intro video', order: 1 });
  textA = await createLesson(t, { courseId: courseA.id, type: 'TEXT', title: 'Reading', order: 2 });
  videoB = await createLesson(t, { courseId: courseB.id, type: 'VIDEO', title: 'Cells', order: 1 });
  const otherCourse = await createCourse(t, { institutionId: OTHER_INST, ownerId: 'u_northside_teacher', title: 'North' });
  otherInstLesson = await createLesson(t, { courseId: otherCourse.id, type: 'VIDEO' });

  enrollS1A = await enroll(t, { courseId: courseA.id, studentId: S1 });
  await enroll(t, { courseId: courseB.id, studentId: S1 });
  await enroll(t, { courseId: courseA.id, studentId: S2 });
  await enroll(t, { courseId: courseA.id, studentId: S3, status: 'DROPPED' });
  await enroll(t, { courseId: courseA.id, studentId: S4, status: 'COMPLETED' });
  // S1's person id is also enrolled in the other institution's course, under that institution.
  await enroll(t, { courseId: otherCourse.id, studentId: S1 });

  [s1, s2, s3, s4, s5] = await Promise.all([S1, S2, S3, S4, S5].map((id) => t.token({ role: 'STUDENT', id })));
  s1Elsewhere = await t.token({ role: 'STUDENT', id: S1, institutionId: OTHER_INST });
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
}, 180_000);
afterAll(() => t?.close());

const notesUrl = (lessonId: string) => `/api/lessons/${lessonId}/notes`;
const bookmarksUrl = (lessonId: string) => `/api/lessons/${lessonId}/bookmarks`;

async function addNote(token: string, lessonId: string, body: Record<string, unknown>) {
  const res = await t.request('POST', notesUrl(lessonId), { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function addBookmark(token: string, lessonId: string, body: Record<string, unknown>) {
  const res = await t.request('POST', bookmarksUrl(lessonId), { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const noteRow = async (id: string) => (await t.db.select().from(lessonNotes).where(eq(lessonNotes.id, id)))[0];
const bookmarkRow = async (id: string) => (await t.db.select().from(lessonBookmarks).where(eq(lessonBookmarks.id, id)))[0];

// ────────────────────────────────────────────────────────────────────────────────
describe('POST /api/lessons/:id/notes', () => {
  it('creates a note with trimmed content, the owner and the enrollment', async () => {
    const res = await t.request('POST', notesUrl(videoA.id), {
      token: s1,
      body: { content: '  \n Remember the quadratic formula \t ', timestampSeconds: 42 },
    });
    expect(res.status).toBe(201);
    expect(res.body.error).toBeNull();
    const now = t.clock.now().toISOString();
    expect(res.body.data).toEqual({
      id: expect.any(String),
      lessonId: videoA.id,
      studentId: S1,
      enrollmentId: enrollS1A.id,
      content: 'Remember the quadratic formula',
      timestampSeconds: 42,
      createdAt: now,
      updatedAt: now,
    });
    const row = await noteRow(res.body.data.id);
    expect(row).toMatchObject({ institutionId: INST, studentId: S1, content: 'Remember the quadratic formula', timestampSeconds: 42 });
  });

  it('defaults timestampSeconds to null and accepts an explicit null', async () => {
    expect((await addNote(s1, videoA.id, { content: 'no time' })).timestampSeconds).toBeNull();
    expect((await addNote(s1, videoA.id, { content: 'null time', timestampSeconds: null })).timestampSeconds).toBeNull();
  });

  it('accepts content of exactly 10,000 characters (after trimming) and refuses 10,001', async () => {
    const ok = await addNote(s1, textA.id, { content: `  ${'x'.repeat(10_000)}  ` });
    expect(ok.content).toHaveLength(10_000);
    const tooLong = await t.request('POST', notesUrl(textA.id), { token: s1, body: { content: 'x'.repeat(10_001) } });
    expectError(tooLong, 400, 'VALIDATION_ERROR');
  });

  it('counts characters, not UTF-16 units: 10,000 emoji are allowed', async () => {
    const note = await addNote(s1, textA.id, { content: '😀'.repeat(10_000) });
    expect([...note.content]).toHaveLength(10_000);
    const res = await t.request('POST', notesUrl(textA.id), { token: s1, body: { content: '😀'.repeat(10_001) } });
    expectError(res, 400, 'VALIDATION_ERROR');
  });

  it('refuses empty, whitespace-only, missing and non-string content', async () => {
    for (const body of [{ content: '' }, { content: '   \n\t ' }, {}, { content: 42 }, { content: null }]) {
      const res = await t.request('POST', notesUrl(videoA.id), { token: s1, body });
      expectError(res, 400, 'VALIDATION_ERROR');
    }
  });

  it('accepts timestampSeconds 0 and 86,400 on a VIDEO lesson', async () => {
    expect((await addNote(s1, videoA.id, { content: 'start', timestampSeconds: 0 })).timestampSeconds).toBe(0);
    expect((await addNote(s1, videoA.id, { content: 'end', timestampSeconds: 86_400 })).timestampSeconds).toBe(86_400);
  });

  it('refuses timestampSeconds -1, 86,401, 1.5 and "10"', async () => {
    for (const timestampSeconds of [-1, 86_401, 1.5, '10']) {
      const res = await t.request('POST', notesUrl(videoA.id), { token: s1, body: { content: 'x', timestampSeconds } });
      expectError(res, 400, 'VALIDATION_ERROR');
    }
  });

  it('refuses a timestamp on a non-VIDEO lesson, but accepts null there', async () => {
    const res = await t.request('POST', notesUrl(textA.id), { token: s1, body: { content: 'x', timestampSeconds: 5 } });
    expectError(res, 400, 'VALIDATION_ERROR');
    const zero = await t.request('POST', notesUrl(textA.id), { token: s1, body: { content: 'x', timestampSeconds: 0 } });
    expectError(zero, 400, 'VALIDATION_ERROR');
    expect((await addNote(s1, textA.id, { content: 'plain', timestampSeconds: null })).timestampSeconds).toBeNull();
  });

  it('requires an ACTIVE enrollment: none, DROPPED, COMPLETED and a teacher get 403 ENROLLMENT_REQUIRED', async () => {
    for (const token of [s5, s3, s4, teacher]) {
      const res = await t.request('POST', notesUrl(videoA.id), { token, body: { content: 'x' } });
      expectError(res, 403, 'ENROLLMENT_REQUIRED');
    }
    const rows = await t.db.select().from(lessonNotes).where(eq(lessonNotes.studentId, S3));
    expect(rows).toHaveLength(0);
  });

  it('answers 404 NOT_FOUND for an unknown lesson and for a lesson of another institution', async () => {
    expectError(await t.request('POST', notesUrl('no-such-lesson'), { token: s1, body: { content: 'x' } }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', notesUrl(otherInstLesson.id), { token: s1, body: { content: 'x' } }), 404, 'NOT_FOUND');
  });

  it('requires authentication', async () => {
    expectError(await t.request('POST', notesUrl(videoA.id), { body: { content: 'x' } }), 401, 'AUTH_REQUIRED');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('GET /api/lessons/:id/notes', () => {
  it("lists only the caller's notes of that lesson, newest first", async () => {
    const S = 'c_demo_stu_10';
    const token = await t.token({ role: 'STUDENT', id: S });
    await enroll(t, { courseId: courseB.id, studentId: S });
    const first = await addNote(token, videoB.id, { content: 'first' });
    t.clock.advance(MINUTE);
    const second = await addNote(token, videoB.id, { content: 'second' });
    t.clock.advance(MINUTE);
    const third = await addNote(token, videoB.id, { content: 'third' });
    // Same createdAt: the later id (UUIDv7) comes first.
    const fourth = await addNote(token, videoB.id, { content: 'fourth' });
    await addNote(s1, videoB.id, { content: 'not yours' });

    const res = await t.request('GET', notesUrl(videoB.id), { token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((n: any) => n.id)).toEqual([fourth.id, third.id, second.id, first.id]);
    expect(res.body.data.every((n: any) => n.studentId === S)).toBe(true);
    expect(res.body.meta).toBeUndefined();
  });

  it('gives an empty list to a student without notes, even without enrollment', async () => {
    const res = await t.request('GET', notesUrl(videoA.id), { token: s5 });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it('answers 404 for an unknown lesson and for a lesson of another institution', async () => {
    expectError(await t.request('GET', notesUrl('no-such-lesson'), { token: s1 }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', notesUrl(otherInstLesson.id), { token: s1 }), 404, 'NOT_FOUND');
  });

  it('lets a student whose enrollment was DROPPED keep and list notes, but not add any', async () => {
    const S = 'c_demo_stu_11';
    const token = await t.token({ role: 'STUDENT', id: S });
    const e = await enroll(t, { courseId: courseB.id, studentId: S });
    const note = await addNote(token, videoB.id, { content: 'written while active' });
    const bookmark = await addBookmark(token, videoB.id, { timestampSeconds: 10 });
    await t.db.update(enrollments).set({ status: 'DROPPED', droppedAt: t.clock.now() }).where(eq(enrollments.id, e.id));

    const list = await t.request('GET', notesUrl(videoB.id), { token });
    expect(list.body.data.map((n: any) => n.id)).toEqual([note.id]);
    const bookmarks = await t.request('GET', bookmarksUrl(videoB.id), { token });
    expect(bookmarks.body.data.map((b: any) => b.id)).toEqual([bookmark.id]);
    const mine = await t.request('GET', '/api/me/notes', { token });
    expect(mine.body.data.map((n: any) => n.id)).toEqual([note.id]);

    expectError(await t.request('POST', notesUrl(videoB.id), { token, body: { content: 'more' } }), 403, 'ENROLLMENT_REQUIRED');
    expectError(await t.request('POST', bookmarksUrl(videoB.id), { token, body: { timestampSeconds: 1 } }), 403, 'ENROLLMENT_REQUIRED');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('PATCH /api/lessons/:id/notes/:noteId', () => {
  it('updates content (trimmed) and timestamp, moves updatedAt, keeps createdAt', async () => {
    const note = await addNote(s1, videoA.id, { content: 'draft', timestampSeconds: 5 });
    t.clock.advance(5 * MINUTE);
    const res = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, {
      token: s1,
      body: { content: '  final  ', timestampSeconds: 86_400 },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: note.id, content: 'final', timestampSeconds: 86_400, createdAt: note.createdAt });
    expect(res.body.data.updatedAt).toBe(t.clock.now().toISOString());
    expect(res.body.data.updatedAt).not.toBe(note.updatedAt);

    const onlyTime = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, { token: s1, body: { timestampSeconds: 0 } });
    expect(onlyTime.body.data).toMatchObject({ content: 'final', timestampSeconds: 0 });
    const cleared = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, { token: s1, body: { timestampSeconds: null } });
    expect(cleared.body.data).toMatchObject({ content: 'final', timestampSeconds: null });
    const onlyContent = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, { token: s1, body: { content: 'again' } });
    expect(onlyContent.body.data).toMatchObject({ content: 'again', timestampSeconds: null });
  });

  it('validates like create: bounds, whitespace-only, timestamp on a non-VIDEO lesson, empty body', async () => {
    const note = await addNote(s1, videoA.id, { content: 'keep me', timestampSeconds: 7 });
    const textNote = await addNote(s1, textA.id, { content: 'text note' });
    const bad: Array<[string, unknown]> = [
      [videoA.id, { content: '   ' }],
      [videoA.id, { content: 'x'.repeat(10_001) }],
      [videoA.id, { timestampSeconds: -1 }],
      [videoA.id, { timestampSeconds: 86_401 }],
      [videoA.id, { timestampSeconds: 1.5 }],
      [videoA.id, { timestampSeconds: '10' }],
      [videoA.id, {}],
    ];
    for (const [lessonId, body] of bad) {
      const res = await t.request('PATCH', `${notesUrl(lessonId)}/${note.id}`, { token: s1, body });
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    expectError(await t.request('PATCH', `${notesUrl(textA.id)}/${textNote.id}`, { token: s1, body: { timestampSeconds: 3 } }), 400, 'VALIDATION_ERROR');
    expect(await noteRow(note.id)).toMatchObject({ content: 'keep me', timestampSeconds: 7 });
    const ok = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, { token: s1, body: { content: 'x'.repeat(10_000) } });
    expect(ok.status).toBe(200);
  });

  it('answers 404 to anyone but the owner and leaves the note unchanged', async () => {
    const note = await addNote(s1, videoA.id, { content: 'mine', timestampSeconds: 1 });
    const before = await noteRow(note.id);
    for (const token of [s2, s5, teacher, s1Elsewhere]) {
      const res = await t.request('PATCH', `${notesUrl(videoA.id)}/${note.id}`, { token, body: { content: 'hijacked' } });
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await noteRow(note.id)).toEqual(before);
  });

  it('answers 404 when the note belongs to another lesson, or does not exist', async () => {
    const note = await addNote(s1, videoA.id, { content: 'on video A' });
    expectError(await t.request('PATCH', `${notesUrl(textA.id)}/${note.id}`, { token: s1, body: { content: 'moved?' } }), 404, 'NOT_FOUND');
    expectError(await t.request('PATCH', `${notesUrl(videoB.id)}/${note.id}`, { token: s1, body: { content: 'moved?' } }), 404, 'NOT_FOUND');
    expectError(await t.request('PATCH', `${notesUrl(videoA.id)}/nope`, { token: s1, body: { content: 'x' } }), 404, 'NOT_FOUND');
    expectError(await t.request('PATCH', `${notesUrl('nope')}/${note.id}`, { token: s1, body: { content: 'x' } }), 404, 'NOT_FOUND');
    expect((await noteRow(note.id))?.content).toBe('on video A');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('DELETE /api/lessons/:id/notes/:noteId', () => {
  it('deletes for the owner only; others get 404 and the row stays', async () => {
    const note = await addNote(s1, videoA.id, { content: 'to delete' });
    for (const token of [s2, teacher, s1Elsewhere]) {
      expectError(await t.request('DELETE', `${notesUrl(videoA.id)}/${note.id}`, { token }), 404, 'NOT_FOUND');
    }
    expectError(await t.request('DELETE', `${notesUrl(textA.id)}/${note.id}`, { token: s1 }), 404, 'NOT_FOUND');
    expect(await noteRow(note.id)).toBeDefined();

    const res = await t.request('DELETE', `${notesUrl(videoA.id)}/${note.id}`, { token: s1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: note.id, deleted: true }, error: null });
    expect(await noteRow(note.id)).toBeUndefined();
    expectError(await t.request('DELETE', `${notesUrl(videoA.id)}/${note.id}`, { token: s1 }), 404, 'NOT_FOUND');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('bookmarks of a lesson', () => {
  it('creates a bookmark; label trimmed; absent, null, empty and whitespace-only labels are stored as null', async () => {
    const res = await t.request('POST', bookmarksUrl(videoA.id), { token: s1, body: { timestampSeconds: 90, label: '  Key idea  ' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      lessonId: videoA.id,
      studentId: S1,
      timestampSeconds: 90,
      label: 'Key idea',
      createdAt: t.clock.now().toISOString(),
    });
    expect((await bookmarkRow(res.body.data.id))?.label).toBe('Key idea');
    for (const body of [{ timestampSeconds: 1 }, { timestampSeconds: 1, label: null }, { timestampSeconds: 1, label: '' }, { timestampSeconds: 1, label: ' \t ' }]) {
      const b = await addBookmark(s1, videoA.id, body);
      expect(b.label, JSON.stringify(body)).toBeNull();
      expect((await bookmarkRow(b.id))?.label).toBeNull();
    }
  });

  it('accepts a label of 120 characters (after trimming) and refuses 121', async () => {
    const b = await addBookmark(s1, videoA.id, { timestampSeconds: 3, label: ` ${'l'.repeat(120)} ` });
    expect(b.label).toHaveLength(120);
    expectError(await t.request('POST', bookmarksUrl(videoA.id), { token: s1, body: { timestampSeconds: 3, label: 'l'.repeat(121) } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', bookmarksUrl(videoA.id), { token: s1, body: { timestampSeconds: 3, label: 12 } }), 400, 'VALIDATION_ERROR');
  });

  it('requires timestampSeconds, an integer from 0 to 86,400', async () => {
    expect((await addBookmark(s1, videoA.id, { timestampSeconds: 0 })).timestampSeconds).toBe(0);
    expect((await addBookmark(s1, videoA.id, { timestampSeconds: 86_400 })).timestampSeconds).toBe(86_400);
    for (const body of [
      {},
      { label: 'x' },
      { timestampSeconds: null },
      { timestampSeconds: -1 },
      { timestampSeconds: 86_401 },
      { timestampSeconds: 1.5 },
      { timestampSeconds: '10' },
    ]) {
      expectError(await t.request('POST', bookmarksUrl(videoA.id), { token: s1, body }), 400, 'VALIDATION_ERROR');
    }
  });

  it('requires an ACTIVE enrollment and a lesson of the institution', async () => {
    for (const token of [s3, s4, s5, teacher]) {
      expectError(await t.request('POST', bookmarksUrl(videoA.id), { token, body: { timestampSeconds: 1 } }), 403, 'ENROLLMENT_REQUIRED');
    }
    expectError(await t.request('POST', bookmarksUrl('nope'), { token: s1, body: { timestampSeconds: 1 } }), 404, 'NOT_FOUND');
    expectError(await t.request('POST', bookmarksUrl(otherInstLesson.id), { token: s1, body: { timestampSeconds: 1 } }), 404, 'NOT_FOUND');
    expectError(await t.request('GET', bookmarksUrl(otherInstLesson.id), { token: s1 }), 404, 'NOT_FOUND');
  });

  it("lists the caller's bookmarks by timestampSeconds ascending, ties by createdAt", async () => {
    const S = 'c_demo_stu_12';
    const token = await t.token({ role: 'STUDENT', id: S });
    await enroll(t, { courseId: courseB.id, studentId: S });
    const at300 = await addBookmark(token, videoB.id, { timestampSeconds: 300 });
    t.clock.advance(MINUTE);
    const at20a = await addBookmark(token, videoB.id, { timestampSeconds: 20, label: 'older' });
    t.clock.advance(MINUTE);
    const at20b = await addBookmark(token, videoB.id, { timestampSeconds: 20, label: 'newer' });
    const at0 = await addBookmark(token, videoB.id, { timestampSeconds: 0 });
    await addBookmark(s1, videoB.id, { timestampSeconds: 1, label: 'not yours' });

    const res = await t.request('GET', bookmarksUrl(videoB.id), { token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((b: any) => b.id)).toEqual([at0.id, at20a.id, at20b.id, at300.id]);
    expect(res.body.data.every((b: any) => b.studentId === S)).toBe(true);
  });

  it('PATCH changes label and timestamp for the owner; empty label becomes null', async () => {
    const b = await addBookmark(s1, videoA.id, { timestampSeconds: 10, label: 'first' });
    const url = `${bookmarksUrl(videoA.id)}/${b.id}`;
    const r1 = await t.request('PATCH', url, { token: s1, body: { label: '  renamed ', timestampSeconds: 86_400 } });
    expect(r1.status).toBe(200);
    expect(r1.body.data).toEqual({ ...b, label: 'renamed', timestampSeconds: 86_400 });
    const r2 = await t.request('PATCH', url, { token: s1, body: { label: '' } });
    expect(r2.body.data).toMatchObject({ label: null, timestampSeconds: 86_400 });
    const r3 = await t.request('PATCH', url, { token: s1, body: { timestampSeconds: 0 } });
    expect(r3.body.data).toMatchObject({ label: null, timestampSeconds: 0 });
    expect(await bookmarkRow(b.id)).toMatchObject({ label: null, timestampSeconds: 0 });

    for (const body of [{}, { label: 'x'.repeat(121) }, { timestampSeconds: -1 }, { timestampSeconds: 86_401 }, { timestampSeconds: 2.5 }, { timestampSeconds: null }]) {
      expectError(await t.request('PATCH', url, { token: s1, body }), 400, 'VALIDATION_ERROR');
    }
    expect((await t.request('PATCH', url, { token: s1, body: { label: 'y'.repeat(120) } })).status).toBe(200);
  });

  it('PATCH and DELETE by anyone but the owner, or through another lesson, answer 404 and change nothing', async () => {
    const b = await addBookmark(s1, videoA.id, { timestampSeconds: 33, label: 'private' });
    const before = await bookmarkRow(b.id);
    for (const token of [s2, s5, teacher, s1Elsewhere]) {
      expectError(await t.request('PATCH', `${bookmarksUrl(videoA.id)}/${b.id}`, { token, body: { label: 'x' } }), 404, 'NOT_FOUND');
      expectError(await t.request('DELETE', `${bookmarksUrl(videoA.id)}/${b.id}`, { token }), 404, 'NOT_FOUND');
    }
    expectError(await t.request('PATCH', `${bookmarksUrl(textA.id)}/${b.id}`, { token: s1, body: { label: 'x' } }), 404, 'NOT_FOUND');
    expectError(await t.request('DELETE', `${bookmarksUrl(textA.id)}/${b.id}`, { token: s1 }), 404, 'NOT_FOUND');
    expect(await bookmarkRow(b.id)).toEqual(before);

    const del = await t.request('DELETE', `${bookmarksUrl(videoA.id)}/${b.id}`, { token: s1 });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ data: { id: b.id, deleted: true }, error: null });
    expect(await bookmarkRow(b.id)).toBeUndefined();
    expectError(await t.request('DELETE', `${bookmarksUrl(videoA.id)}/${b.id}`, { token: s1 }), 404, 'NOT_FOUND');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('GET /api/me/notes', () => {
  const S = 'c_demo_stu_20';
  let token: string;
  /** Note ids in creation order; the clock moves one minute between notes. */
  const created: Array<{ id: string; lessonId: string }> = [];

  beforeAll(async () => {
    token = await t.token({ role: 'STUDENT', id: S });
    await enroll(t, { courseId: courseA.id, studentId: S });
    await enroll(t, { courseId: courseB.id, studentId: S });
    const lessonsInTurn = [videoA, textA, videoB];
    for (let i = 0; i < 25; i++) {
      t.clock.advance(MINUTE);
      const lesson = lessonsInTurn[i % 3]!;
      const n = await addNote(token, lesson.id, { content: `Note number ${String(i).padStart(2, '0')}` });
      created.push({ id: n.id, lessonId: lesson.id });
    }
  });

  it('defaults to page 1 of 20, newest updatedAt first, with meta', async () => {
    const res = await t.request('GET', '/api/me/notes', { token });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    expect(res.body.meta).toEqual({ total: 25, page: 1, perPage: 20, totalPages: 2 });
    const expected = [...created].reverse().map((c) => c.id);
    expect(res.body.data.map((n: any) => n.id)).toEqual(expected.slice(0, 20));
    const p2 = await t.request('GET', '/api/me/notes', { token, query: { page: 2 } });
    expect(p2.body.meta).toEqual({ total: 25, page: 2, perPage: 20, totalPages: 2 });
    expect(p2.body.data.map((n: any) => n.id)).toEqual(expected.slice(20));
    const p3 = await t.request('GET', '/api/me/notes', { token, query: { page: 3 } });
    expect(p3.body.data).toEqual([]);
    expect(p3.body.meta.total).toBe(25);
  });

  it('enriches rows with lesson and course, without enrollmentId and studentId', async () => {
    const res = await t.request('GET', '/api/me/notes', { token, query: { limit: 3 } });
    const byLesson = new Map([videoA, textA, videoB].map((l) => [l.id, l]));
    for (const row of res.body.data) {
      const lesson = byLesson.get(row.lessonId)!;
      const course = lesson.courseId === courseA.id ? courseA : courseB;
      expect(Object.keys(row).sort()).toEqual(
        ['content', 'courseId', 'courseTitle', 'createdAt', 'id', 'lessonId', 'lessonTitle', 'lessonType', 'timestampSeconds', 'updatedAt'].sort(),
      );
      expect(row).toMatchObject({ lessonTitle: lesson.title, lessonType: lesson.type, courseId: course.id, courseTitle: course.title });
      expect(row.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    expect(res.raw).not.toContain('enrollmentId');
    expect(res.raw).not.toContain('studentId');
  });

  it('sorts by updatedAt: an edited old note comes first; ties by id descending', async () => {
    t.clock.advance(MINUTE);
    const oldest = created[0]!;
    const patched = await t.request('PATCH', `${notesUrl(oldest.lessonId)}/${oldest.id}`, { token, body: { content: 'Note number 00 (edited)' } });
    expect(patched.status).toBe(200);
    const res = await t.request('GET', '/api/me/notes', { token, query: { limit: 2 } });
    expect(res.body.data[0].id).toBe(oldest.id);
    expect(res.body.data[1].id).toBe(created[24]!.id);

    // Two notes with the same updatedAt: the larger (later) id first.
    const T = 'c_demo_stu_21';
    const tieToken = await t.token({ role: 'STUDENT', id: T });
    await enroll(t, { courseId: courseA.id, studentId: T });
    const a = await addNote(tieToken, textA.id, { content: 'tie a' });
    const b = await addNote(tieToken, textA.id, { content: 'tie b' });
    expect(a.updatedAt).toBe(b.updatedAt);
    const ties = await t.request('GET', '/api/me/notes', { token: tieToken });
    expect(ties.body.data.map((n: any) => n.id)).toEqual([a.id, b.id].sort().reverse());
  });

  it('accepts limit and perPage up to 100 and refuses 101, 0 and page 0', async () => {
    const l100 = await t.request('GET', '/api/me/notes', { token, query: { limit: 100 } });
    expect(l100.status).toBe(200);
    expect(l100.body.meta).toEqual({ total: 25, page: 1, perPage: 100, totalPages: 1 });
    expect(l100.body.data).toHaveLength(25);
    const pp = await t.request('GET', '/api/me/notes', { token, query: { perPage: 10, page: 3 } });
    expect(pp.body.meta).toEqual({ total: 25, page: 3, perPage: 10, totalPages: 3 });
    expect(pp.body.data).toHaveLength(5);
    const invalid: Array<Record<string, string | number>> = [{ limit: 101 }, { perPage: 101 }, { limit: 0 }, { page: 0 }, { page: 'x' }];
    for (const query of invalid) {
      expectError(await t.request('GET', '/api/me/notes', { token, query }), 400, 'VALIDATION_ERROR');
    }
  });

  it('filters by courseId', async () => {
    const b = await t.request('GET', '/api/me/notes', { token, query: { courseId: courseB.id, limit: 100 } });
    const inB = created.filter((c) => c.lessonId === videoB.id).map((c) => c.id);
    expect(b.body.meta.total).toBe(inB.length);
    expect(b.body.data.map((n: any) => n.id).sort()).toEqual([...inB].sort());
    expect(b.body.data.every((n: any) => n.courseId === courseB.id)).toBe(true);
    const none = await t.request('GET', '/api/me/notes', { token, query: { courseId: 'no-such-course' } });
    expect(none.body).toMatchObject({ data: [], meta: { total: 0, page: 1, perPage: 20, totalPages: 0 } });
  });

  it('searches content case-insensitively, as a substring', async () => {
    const res = await t.request('GET', '/api/me/notes', { token, query: { search: 'nOTE NUMBER 1' } });
    // 10..19
    expect(res.body.meta.total).toBe(10);
    expect(res.body.data.every((n: any) => n.content.startsWith('Note number 1'))).toBe(true);
    const combined = await t.request('GET', '/api/me/notes', { token, query: { search: 'number 1', courseId: courseB.id } });
    expect(combined.body.data.map((n: any) => n.content).sort()).toEqual(['Note number 11', 'Note number 14', 'Note number 17']);
  });

  it('treats %, _ and \\ in the search text literally', async () => {
    const W = 'c_demo_stu_22';
    const w = await t.token({ role: 'STUDENT', id: W });
    await enroll(t, { courseId: courseA.id, studentId: W });
    for (const content of ['100% done', '100 done', '1000 done', 'a_b', 'axb', 'back\\slash', 'backslash']) {
      await addNote(w, textA.id, { content });
    }
    const contents = async (search: string) => (await t.request('GET', '/api/me/notes', { token: w, query: { search } })).body.data.map((n: any) => n.content).sort();
    expect(await contents('100%')).toEqual(['100% done']);
    expect(await contents('%')).toEqual(['100% done']);
    expect(await contents('a_b')).toEqual(['a_b']);
    expect(await contents('_')).toEqual(['a_b']);
    expect(await contents('k\\s')).toEqual(['back\\slash']);
    expect(await contents('DONE')).toEqual(['100 done', '100% done', '1000 done']);
  });

  it('accepts a search of 200 characters, refuses 201 and the empty string', async () => {
    const ok = await t.request('GET', '/api/me/notes', { token, query: { search: 's'.repeat(200) } });
    expect(ok.status).toBe(200);
    expect(ok.body.meta.total).toBe(0);
    expectError(await t.request('GET', '/api/me/notes', { token, query: { search: 's'.repeat(201) } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/me/notes?search=', { token }), 400, 'VALIDATION_ERROR');
  });

  it('shows nothing of this student to another student or to the same id in another institution', async () => {
    for (const other of [s2, s5, s1Elsewhere]) {
      const res = await t.request('GET', '/api/me/notes', { token: other, query: { limit: 100 } });
      expect(res.status).toBe(200);
      const ids = new Set(res.body.data.map((n: any) => n.id));
      expect(created.some((c) => ids.has(c.id))).toBe(false);
    }
    const elsewhere = await t.request('GET', '/api/me/notes', { token: s1Elsewhere });
    expect(elsewhere.body).toEqual({ data: [], error: null, meta: { total: 0, page: 1, perPage: 20, totalPages: 0 } });
  });

  it('requires authentication', async () => {
    expectError(await t.request('GET', '/api/me/notes'), 401, 'AUTH_REQUIRED');
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('GET /api/me/bookmarks', () => {
  const S = 'c_demo_stu_25';
  let token: string;

  beforeAll(async () => {
    token = await t.token({ role: 'STUDENT', id: S });
    await enroll(t, { courseId: courseA.id, studentId: S });
    await enroll(t, { courseId: courseB.id, studentId: S });
  });

  it('formats timestampLabel as m:ss below one hour and h:mm:ss from one hour', async () => {
    const cases: Array<[number, string]> = [
      [0, '0:00'],
      [5, '0:05'],
      [65, '1:05'],
      [599, '9:59'],
      [3599, '59:59'],
      [3600, '1:00:00'],
      [3661, '1:01:01'],
      [36_000, '10:00:00'],
      [86_400, '24:00:00'],
    ];
    for (const [seconds] of cases) {
      t.clock.advance(MINUTE);
      await addBookmark(token, videoA.id, { timestampSeconds: seconds, label: `at ${seconds}` });
    }
    const res = await t.request('GET', '/api/me/bookmarks', { token, query: { limit: 100 } });
    const labels = new Map(res.body.data.map((b: any) => [b.timestampSeconds, b.timestampLabel]));
    for (const [seconds, label] of cases) expect(labels.get(seconds), String(seconds)).toBe(label);
  });

  it('sorts createdAt descending (ties by id descending), paginates, and enriches rows', async () => {
    t.clock.advance(MINUTE);
    const a = await addBookmark(token, videoB.id, { timestampSeconds: 1, label: 'Same time A' });
    const b = await addBookmark(token, videoB.id, { timestampSeconds: 2, label: 'Same time B' });
    const res = await t.request('GET', '/api/me/bookmarks', { token, query: { perPage: 4 } });
    expect(res.body.meta).toEqual({ total: 11, page: 1, perPage: 4, totalPages: 3 });
    expect(res.body.data.slice(0, 2).map((r: any) => r.id)).toEqual([a.id, b.id].sort().reverse());
    expect(res.body.data[2].timestampSeconds).toBe(86_400);
    const times = (await t.request('GET', '/api/me/bookmarks', { token, query: { limit: 100 } })).body.data.map((r: any) => r.createdAt);
    expect(times).toEqual([...times].sort().reverse());

    const row = res.body.data[0];
    expect(row).toMatchObject({
      lessonId: videoB.id,
      lessonTitle: videoB.title,
      lessonType: 'VIDEO',
      courseId: courseB.id,
      courseTitle: courseB.title,
      timestampLabel: expect.any(String),
    });
    expect(row).not.toHaveProperty('enrollmentId');
  });

  it('filters by courseId and searches labels case-insensitively with literal wildcards', async () => {
    const inB = await t.request('GET', '/api/me/bookmarks', { token, query: { courseId: courseB.id } });
    expect(inB.body.meta.total).toBe(2);
    expect(inB.body.data.every((r: any) => r.courseId === courseB.id)).toBe(true);

    await addBookmark(token, textA.id, { timestampSeconds: 1, label: '50% off' });
    await addBookmark(token, textA.id, { timestampSeconds: 1, label: '500 off' });
    await addBookmark(token, textA.id, { timestampSeconds: 1 }); // null label never matches
    const labels = async (search: string) => (await t.request('GET', '/api/me/bookmarks', { token, query: { search } })).body.data.map((r: any) => r.label).sort();
    expect(await labels('SAME TIME')).toEqual(['Same time A', 'Same time B']);
    expect(await labels('0%')).toEqual(['50% off']);
    expect(await labels('5_0')).toEqual([]);
    expect(await labels('off')).toEqual(['50% off', '500 off']);
    expect((await t.request('GET', '/api/me/bookmarks', { token, query: { search: 'x'.repeat(200) } })).status).toBe(200);
    expectError(await t.request('GET', '/api/me/bookmarks', { token, query: { search: 'x'.repeat(201) } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/me/bookmarks?search=', { token }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('GET', '/api/me/bookmarks', { token, query: { limit: 101 } }), 400, 'VALIDATION_ERROR');
    expect((await t.request('GET', '/api/me/bookmarks', { token, query: { limit: 100 } })).body.meta.perPage).toBe(100);
  });

  it('shows nothing to another student or to the same id in another institution', async () => {
    const S1Elsewhere = await t.request('GET', '/api/me/bookmarks', { token: s1Elsewhere });
    expect(S1Elsewhere.body).toEqual({ data: [], error: null, meta: { total: 0, page: 1, perPage: 20, totalPages: 0 } });
    const other = await t.request('GET', '/api/me/bookmarks', { token: s2, query: { limit: 100 } });
    expect(other.body.data.every((r: any) => r.studentId === S2)).toBe(true);
  });
});

// ────────────────────────────────────────────────────────────────────────────────
describe('/api/v1 (mobile, bearer)', () => {
  it('serves the same notes endpoints with identical payloads', async () => {
    const S = 'c_demo_stu_28';
    const token = await t.token({ role: 'STUDENT', id: S });
    await enroll(t, { courseId: courseA.id, studentId: S });
    const created = await t.request('POST', `/api/v1/lessons/${videoA.id}/notes`, { token, body: { content: ' via v1 ', timestampSeconds: 9 } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ content: 'via v1', timestampSeconds: 9, studentId: S });
    await addBookmark(token, videoA.id, { timestampSeconds: 61, label: 'v1' });

    for (const path of [`/lessons/${videoA.id}/notes`, '/me/notes', '/me/bookmarks', `/lessons/${videoA.id}/bookmarks`]) {
      const a = await t.request('GET', `/api${path}`, { token });
      const b = await t.request('GET', `/api/v1${path}`, { token });
      expect(b.status, path).toBe(200);
      expect(b.body, path).toEqual(a.body);
    }
    const v1Invalid = await t.request('POST', `/api/v1/lessons/${videoA.id}/notes`, { token, body: { content: '' } });
    expectError(v1Invalid, 400, 'VALIDATION_ERROR');
    const v1Delete = await t.request('DELETE', `/api/v1/lessons/${videoA.id}/notes/${created.body.data.id}`, { token });
    expect(v1Delete.body).toEqual({ data: { id: created.body.data.id, deleted: true }, error: null });
  });
});

describe('OpenAPI', () => {
  it('documents every notes route with its operationId and error responses', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const ops: Array<[string, string, string]> = [
      ['/api/lessons/{id}/notes', 'get', 'listLessonNotes'],
      ['/api/lessons/{id}/notes', 'post', 'createLessonNote'],
      ['/api/lessons/{id}/notes/{noteId}', 'patch', 'updateLessonNote'],
      ['/api/lessons/{id}/notes/{noteId}', 'delete', 'deleteLessonNote'],
      ['/api/lessons/{id}/bookmarks', 'get', 'listLessonBookmarks'],
      ['/api/lessons/{id}/bookmarks', 'post', 'createLessonBookmark'],
      ['/api/lessons/{id}/bookmarks/{bookmarkId}', 'patch', 'updateLessonBookmark'],
      ['/api/lessons/{id}/bookmarks/{bookmarkId}', 'delete', 'deleteLessonBookmark'],
      ['/api/me/notes', 'get', 'listMyNotes'],
      ['/api/me/bookmarks', 'get', 'listMyBookmarks'],
    ];
    for (const [path, method, operationId] of ops) {
      const op = doc.paths[path]?.[method];
      expect(op?.operationId, `${method} ${path}`).toBe(operationId);
      for (const code of ['400', '401', '403', '404', '429']) expect(op.responses[code], `${method} ${path} ${code}`).toBeDefined();
    }
    const row = doc.paths['/api/me/notes'].get.responses['200'].content['application/json'].schema.properties.data.items;
    expect(Object.keys(row.properties)).not.toContain('enrollmentId');
    expect(Object.keys(row.properties)).not.toContain('studentId');
  });
});
