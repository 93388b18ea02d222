/**
 * Who may see lesson content, through every route that carries it: the course outline, the
 * lesson itself, its captions and transcripts, block answers and learner events. One rule
 * (enrollment, drip lock, fee gating) applies to all of them; answer keys never reach learners;
 * assessed lessons are not completed by a progress call; deleting a lesson removes its files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCourse, createLesson, enroll } from '../helpers/factories.js';
import { expectError, expectOk, failingFields } from '../helpers/expect.js';
import { multipart } from '../helpers/multipart.js';
import { learnerEvents, lessonProgress, enrollments, blockAnswers } from '../../src/modules/enrollments/enrollments.tables.js';
import { captionTracks } from '../../src/modules/captions/captions.tables.js';
import { jobs } from '../../src/platform/queue/queue.tables.js';
import { assertWebLinks, learnerBlocks } from '../../src/modules/courses/lesson-content.js';

const DAY = 86_400_000;
const QUESTION = {
  id: 'q1',
  type: 'question',
  prompt: 'Which organelle makes energy?',
  options: [
    { id: 'a', text: 'Nucleus', isCorrect: false },
    { id: 'b', text: 'Mitochondrion', isCorrect: true },
  ],
  correctAnswer: 'b',
};
const VTT = 'WEBVTT\n\n00:00.000 --> 00:02.000\nHello\n';

let t: TestApp;
let teacher: string;
let admin: string;
const tokens = new Map<string, string>();
const student = async (n: number) => {
  const id = `c_demo_stu_${String(n).padStart(2, '0')}`;
  if (!tokens.has(id)) tokens.set(id, await t.token({ role: 'STUDENT', id }));
  return tokens.get(id)!;
};
const OVERDUE = 'c_demo_stu_03';

beforeAll(async () => {
  t = await createTestApp();
  teacher = await t.token({ role: 'TEACHER', id: 'u_demo_teacher' });
  admin = await t.token({ role: 'ADMIN', id: 'u_demo_admin' });
});
afterAll(async () => t.close());

/** A published course: an open VIDEO lesson with a caption, a question lesson, and a lesson locked for 7 days. */
async function course() {
  const c = await createCourse(t, { ownerId: 'u_demo_teacher' });
  const mod = expectOk(await t.request('POST', `/api/courses/${c.id}/modules`, { token: teacher, body: { title: 'Week 1' } }), 201);
  const lesson = async (body: Record<string, unknown>) =>
    expectOk(await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { moduleId: mod.id, ...body } }), 201);
  const video = await lesson({
    title: 'Video',
    type: 'VIDEO',
    videoUrl: 'https://cdn.example/v.mp4',
    content: 'Transcript text',
    blocks: [{ id: 'v', type: 'video', url: 'https://cdn.example/v.mp4' }],
  });
  const quiz = await lesson({ title: 'Check', type: 'INTERACTIVE', content: 'Answer this', blocks: [QUESTION] });
  const locked = await lesson({ title: 'Later', type: 'TEXT', content: 'Secret week-2 text', unlockAfterDays: 7, blocks: [QUESTION] });
  const { body, headers } = multipart([
    { name: 'language', value: 'en' },
    { name: 'label', value: 'English' },
    { name: 'file', filename: 'en.vtt', data: VTT },
  ]);
  const caption = expectOk(await t.request('POST', `/api/lessons/${video.id}/captions`, { token: teacher, body, headers }), 201);
  const lockedCaption = expectOk(
    await t.request('POST', `/api/lessons/${locked.id}/captions`, {
      token: teacher,
      ...multipart([
        { name: 'language', value: 'en' },
        { name: 'label', value: 'English' },
        { name: 'file', filename: 'en.vtt', data: VTT },
      ]),
    }),
    201,
  );
  return { course: c, video, quiz, locked, caption, lockedCaption };
}

const setGating = async (on: boolean) => expectOk(await t.request('PATCH', '/api/settings', { token: admin, body: { feeGatingEnabled: on } }));

describe('course outline (GET /api/courses/:id/modules)', () => {
  it('gives people who may not open a lesson the outline only: no content, video or blocks', async () => {
    const c = await course();
    const parent = await t.token({ role: 'PARENT', id: 'c_demo_par_01' });
    for (const token of [await student(20), parent]) {
      const [mod] = expectOk(await t.request('GET', `/api/courses/${c.course.id}/modules`, { token }));
      expect(mod.lessons.map((l: any) => l.title)).toEqual(['Video', 'Check', 'Later']);
      for (const l of mod.lessons) expect(l).toMatchObject({ content: null, videoUrl: null, blocks: [] });
      expect(JSON.stringify(mod)).not.toContain('Secret');
      expect(JSON.stringify(mod)).not.toContain('correctAnswer');
    }
  });

  it('gives an enrolled learner content of the lessons they may open, answers stripped, and the outline of locked ones', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_21' });
    const [mod] = expectOk(await t.request('GET', `/api/courses/${c.course.id}/modules`, { token: await student(21) }));
    const [video, quiz, locked] = mod.lessons;
    expect(video).toMatchObject({ content: 'Transcript text', videoUrl: 'https://cdn.example/v.mp4', locked: false });
    expect(quiz.blocks).toEqual([
      {
        id: 'q1',
        type: 'question',
        prompt: QUESTION.prompt,
        options: [
          { id: 'a', text: 'Nucleus' },
          { id: 'b', text: 'Mitochondrion' },
        ],
      },
    ]);
    expect(locked).toMatchObject({ content: null, blocks: [], locked: true, lockReason: 'UNLOCK_AFTER_DAYS' });
  });

  it('gives a fee-overdue student the outline only, and course managers everything', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: OVERDUE });
    await setGating(true);
    try {
      const [mod] = expectOk(await t.request('GET', `/api/courses/${c.course.id}/modules`, { token: await student(3) }));
      for (const l of mod.lessons) expect(l).toMatchObject({ content: null, videoUrl: null, blocks: [] });
    } finally {
      await setGating(false);
    }
    const [mod] = expectOk(await t.request('GET', `/api/courses/${c.course.id}/modules`, { token: teacher }));
    expect(mod.lessons[1].blocks).toEqual([QUESTION]);
    expect(mod.lessons[2]).toMatchObject({ content: 'Secret week-2 text', locked: false });
  });
});

describe('answer keys', () => {
  it('never reach learners through the lesson routes; managers see them', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_22' });
    const token = await student(22);
    const viaLessons = expectOk(await t.request('GET', `/api/lessons/${c.quiz.id}`, { token }));
    const viaLearn = expectOk(await t.request('GET', `/api/learn/${c.course.id}/${c.quiz.id}`, { token })).lesson;
    for (const lesson of [viaLessons, viaLearn]) {
      expect(lesson.content).toBe('Answer this');
      expect(JSON.stringify(lesson.blocks)).not.toMatch(/correct/i);
    }
    expect(expectOk(await t.request('GET', `/api/lessons/${c.quiz.id}`, { token: teacher })).blocks).toEqual([QUESTION]);
    // The answer is still checked on the server.
    const answered = expectOk(await t.request('POST', `/api/lessons/${c.quiz.id}/blocks/q1/answer`, { token, body: { answer: 'b' } }));
    expect(answered.isCorrect).toBe(true);
  });

  it('strips answer fields at any depth, keeping the rest', () => {
    expect(learnerBlocks([{ id: 'x', type: 'q', items: [{ answers: [1], text: 't', nested: { correct_answer: 2, keep: 3 } }], solution: 's' }])).toEqual([
      { id: 'x', type: 'q', items: [{ text: 't', nested: { keep: 3 } }] },
    ]);
  });

  it('refuses block answers on a drip-locked lesson and for a fee-overdue student, writing nothing', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_23' });
    expectError(await t.request('POST', `/api/lessons/${c.locked.id}/blocks/q1/answer`, { token: await student(23), body: { answer: 'b' } }), 403, 'LESSON_LOCKED');
    await enroll(t, { courseId: c.course.id, studentId: OVERDUE });
    await setGating(true);
    try {
      expectError(await t.request('POST', `/api/lessons/${c.quiz.id}/blocks/q1/answer`, { token: await student(3), body: { answer: 'b' } }), 402, 'FEE_OVERDUE');
    } finally {
      await setGating(false);
    }
    const rows = await t.db.select().from(blockAnswers).where(eq(blockAnswers.lessonId, c.locked.id));
    expect(rows).toHaveLength(0);
    expect(
      await t.db
        .select()
        .from(blockAnswers)
        .where(and(eq(blockAnswers.lessonId, c.quiz.id), eq(blockAnswers.studentId, OVERDUE))),
    ).toHaveLength(0);
  });
});

describe('captions and transcripts follow the lesson content rule', () => {
  it('are refused on a drip-locked lesson until it unlocks', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_24' });
    const token = await student(24);
    expectError(await t.request('GET', `/api/lessons/${c.locked.id}/captions`, { token }), 403, 'LESSON_LOCKED');
    expectError(await t.request('GET', `/api/lessons/${c.locked.id}/captions/${c.lockedCaption.id}/transcript`, { token }), 403, 'LESSON_LOCKED');
    expect(expectOk(await t.request('GET', `/api/lessons/${c.video.id}/captions`, { token }))).toHaveLength(1);
    t.clock.advance(8 * DAY);
    expect(expectOk(await t.request('GET', `/api/lessons/${c.locked.id}/captions/${c.lockedCaption.id}/transcript`, { token })).cues).toHaveLength(1);
  });

  it('are refused for a fee-overdue student (402) and for someone not enrolled (403)', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: OVERDUE });
    await setGating(true);
    try {
      expectError(await t.request('GET', `/api/lessons/${c.video.id}/captions`, { token: await student(3) }), 402, 'FEE_OVERDUE');
      expectError(await t.request('GET', `/api/lessons/${c.video.id}/captions/${c.caption.id}/transcript`, { token: await student(3) }), 402, 'FEE_OVERDUE');
    } finally {
      await setGating(false);
    }
    expectError(await t.request('GET', `/api/lessons/${c.video.id}/captions`, { token: await student(25) }), 403, 'ENROLLMENT_REQUIRED');
  });
});

describe('learner events', () => {
  it('are refused on a locked lesson before anything is written', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_26' });
    const res = await t.request('POST', `/api/lessons/${c.locked.id}/events`, {
      token: await student(26),
      body: { events: [{ type: 'play', positionSeconds: 3 }, { type: 'complete' }] },
    });
    expectError(res, 403, 'LESSON_LOCKED');
    expect(await t.db.select().from(learnerEvents).where(eq(learnerEvents.lessonId, c.locked.id))).toHaveLength(0);
    expect(await t.db.select().from(lessonProgress).where(eq(lessonProgress.lessonId, c.locked.id))).toHaveLength(0);
  });

  it('store events and the progress they imply together', async () => {
    const c = await course();
    await enroll(t, { courseId: c.course.id, studentId: 'c_demo_stu_27' });
    const data = expectOk(
      await t.request('POST', `/api/lessons/${c.video.id}/events`, { token: await student(27), body: { events: [{ type: 'play', positionSeconds: 12.7 }, { type: 'ended' }] } }),
      201,
    );
    expect(data).toMatchObject({ recorded: 2, progress: { completed: true, positionSeconds: 12 } });
    expect(await t.db.select().from(learnerEvents).where(eq(learnerEvents.lessonId, c.video.id))).toHaveLength(2);
  });
});

describe('assessed lessons are not self-certified', () => {
  it('refuses to complete QUIZ and ASSIGNMENT lessons through progress calls; the course stays ACTIVE', async () => {
    const c = await createCourse(t, { ownerId: 'u_demo_teacher', certificateEnabled: true });
    const text = await createLesson(t, { courseId: c.id, type: 'TEXT', order: 1 });
    const quiz = await createLesson(t, { courseId: c.id, type: 'QUIZ', order: 2 });
    const assignment = await createLesson(t, { courseId: c.id, type: 'ASSIGNMENT', order: 3 });
    const e = await enroll(t, { courseId: c.id, studentId: 'c_demo_stu_28' });
    const token = await student(28);
    expectOk(await t.request('POST', `/api/lessons/${text.id}/progress`, { token, body: { completed: true } }));
    for (const lesson of [quiz, assignment]) {
      expectError(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { completed: true } }), 409, 'CONFLICT');
      expectError(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { progressPercent: 100 } }), 409, 'CONFLICT');
      expectError(await t.request('POST', `/api/lessons/${lesson.id}/progress-v2`, { token, body: { items: [{ lessonId: lesson.id, completed: true }] } }), 409, 'CONFLICT');
      // A complete event is stored as telemetry, but completes nothing.
      expectOk(await t.request('POST', `/api/lessons/${lesson.id}/events`, { token, body: { events: [{ type: 'complete' }] } }), 201);
      // Saving a position is fine.
      expect(expectOk(await t.request('POST', `/api/lessons/${lesson.id}/progress`, { token, body: { progressPercent: 40 } })).completed).toBe(false);
    }
    const [row] = await t.db.select().from(enrollments).where(eq(enrollments.id, e.id));
    expect(row).toMatchObject({ status: 'ACTIVE', finalScore: null });
    const done = await t.db
      .select()
      .from(lessonProgress)
      .where(and(eq(lessonProgress.enrollmentId, e.id), eq(lessonProgress.completed, true)));
    expect(done.map((p) => p.lessonId)).toEqual([text.id]);
  });
});

describe('links', () => {
  it('refuse javascript: and data: URLs for thumbnails, videos and block links', async () => {
    let res = await t.request('POST', '/api/courses', { token: teacher, body: { title: 'X', thumbnailUrl: 'javascript:alert(1)' } });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.thumbnailUrl']);
    const c = await createCourse(t, { ownerId: 'u_demo_teacher' });
    res = await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { title: 'X', type: 'VIDEO', videoUrl: 'data:text/html;base64,PHNjcmlwdD4=' } });
    expect(failingFields(res)).toEqual(['body.videoUrl']);
    res = await t.request('POST', `/api/courses/${c.id}/lessons`, {
      token: teacher,
      body: { title: 'X', type: 'TEXT', blocks: [{ id: 'l', type: 'link', href: 'javascript:alert(1)' }] },
    });
    expectError(res, 400, 'VALIDATION_ERROR');
    expect(failingFields(res)).toEqual(['body.blocks.0.href']);
    expectOk(await t.request('PATCH', `/api/courses/${c.id}`, { token: teacher, body: { thumbnailUrl: 'http://cdn.example/t.png' } }));
  });

  it('refuse javascript: and data: as a PDF lesson’s address (content), on create, update and a change of type to PDF', async () => {
    const c = await createCourse(t, { ownerId: 'u_demo_teacher' });
    for (const content of ['javascript:alert(1)', 'data:text/html,<script>alert(1)</script>']) {
      const res = await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { title: 'Worksheet', type: 'PDF', content } });
      expectError(res, 400, 'VALIDATION_ERROR');
      expect(failingFields(res)).toEqual(['body.content']);
    }
    const pdf = expectOk(
      await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { title: 'Worksheet', type: 'PDF', content: 'https://cdn.example/w.pdf' } }),
      201,
    );
    expect(failingFields(await t.request('PATCH', `/api/lessons/${pdf.id}`, { token: teacher, body: { content: 'javascript:alert(1)' } }))).toEqual(['body.content']);
    // A text lesson's content is text, whatever it says; it cannot become a PDF lesson with a script address.
    const text = expectOk(
      await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { title: 'Notes', type: 'TEXT', content: 'javascript:void(0) is how links were written' } }),
      201,
    );
    expect(failingFields(await t.request('PATCH', `/api/lessons/${text.id}`, { token: teacher, body: { type: 'PDF' } }))).toEqual(['body.content']);
    // Plain words are not an address and stay the author's business.
    expectOk(await t.request('POST', `/api/courses/${c.id}/lessons`, { token: teacher, body: { title: 'Handout', type: 'PDF', content: 'handed out in class' } }), 201);
  });

  it('accept http only outside production', () => {
    expect(() => assertWebLinks({ NODE_ENV: 'production' }, { thumbnailUrl: 'http://cdn.example/t.png' })).toThrow(/web addresses/);
    expect(() => assertWebLinks({ NODE_ENV: 'production' }, { thumbnailUrl: 'https://cdn.example/t.png' })).not.toThrow();
    expect(() => assertWebLinks({ NODE_ENV: 'development' }, { thumbnailUrl: 'http://cdn.example/t.png' })).not.toThrow();
  });
});

describe('deleting a lesson', () => {
  it('removes its caption files from storage through a job', async () => {
    const c = await course();
    const [track] = await t.db.select().from(captionTracks).where(eq(captionTracks.id, c.caption.id));
    expect(await t.deps.storage.exists(track.storageKey)).toBe(true);
    expectOk(await t.request('DELETE', `/api/lessons/${c.video.id}`, { token: teacher }));
    expect(await t.db.select().from(captionTracks).where(eq(captionTracks.id, c.caption.id))).toHaveLength(0);
    const queued = await t.db.select().from(jobs).where(eq(jobs.name, 'storage.deleteObjects'));
    expect(queued.some((j) => JSON.stringify(j.payload).includes(track.storageKey))).toBe(true);
    await t.worker.drain();
    expect(await t.deps.storage.exists(track.storageKey)).toBe(false);
  });
});
