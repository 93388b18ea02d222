/**
 * The mixed workload of the cluster harness, through the load balancer: students enroll, post
 * progress, write notes, take quizzes and submit assignments; teachers grade; a teacher runs
 * live classes on a large course whose recording webhook fans out to every student. Every
 * request is recorded with its outcome and, when it was answered 2xx, what it created (ids and
 * the unique text it wrote), so the invariants can find each write in the database.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { mintToken } from '../../src/platform/auth/tokens.js';
import { hmacSha256Hex } from '../../src/platform/auth/signatures.js';

export const INSTITUTION = 'inst_demo';
const TEACHERS = ['u_demo_teacher', 'u_demo_teacher2'];
/** Students of the CRM simulator past the fixed 30 (`CRM_SIM_STUDENTS`): unique addresses, PAID, no parents. */
export const studentId = (n: number) => `c_demo_stu_${String(30 + n).padStart(2, '0')}`;

/** What a 2xx write created, or what a write that got no 2xx tried to create. */
export type Write =
  | { kind: 'enrollment'; courseId: string; studentId: string; id?: string }
  | { kind: 'progress'; lessonId: string; studentId: string; completed: boolean; enrollmentId?: string }
  | { kind: 'note'; token: string; studentId: string; id?: string }
  | { kind: 'attempt'; quizId: string; studentId: string; id?: string }
  | { kind: 'submission'; assignmentId: string; studentId: string; token: string; id?: string }
  | { kind: 'grade'; submissionId: string; score: number; token: string }
  | { kind: 'liveSession'; courseId: string; title: string; id?: string }
  | { kind: 'recordingStop'; sessionId: string }
  | { kind: 'webhookReplay'; sessionId: string };

export interface RequestRecord {
  /** Start, ms since the load started. */
  t: number;
  ms: number;
  actor: string;
  op: string;
  method: string;
  /** 0: no HTTP answer (connection refused, reset, timeout). */
  status: number;
  /** An answer the client expects besides 2xx (409 ALREADY_ENROLLED after a retry whose first try committed). */
  accepted: boolean;
  error?: string;
  write?: Write;
}

export interface CourseSetup {
  id: string;
  ownerId: string;
  videoLessonIds: string[];
  quizId: string;
  quizAnswers: Array<{ questionId: string; value: boolean }>;
  assignmentId: string;
}

export interface WorkloadOptions {
  baseUrl: string;
  authSecret: string;
  webhookSecret: string;
  /** Students of the large course (bulk-enrolled at set-up; every recording fans out to them). */
  fanout: number;
  /** Concurrent students. */
  students: number;
  /** Seconds between two live classes (each: scheduled notice to the large course, then its recording). */
  recordingEverySec: number;
  /** Students available to the workload, from studentId(1). */
  studentPool: number;
  log: (line: string) => void;
}

type Json = any;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const token = () => randomBytes(9).toString('base64url');

export class Workload {
  readonly records: RequestRecord[] = [];
  readonly agent: Agent;
  private readonly tokens = new Map<string, string>();
  private started = 0;
  private stopping = false;
  private nextStudent = 0;
  courses: CourseSetup[] = [];
  bigCourseId = '';
  bigLessonId = '';
  readonly sessions: Array<{ id: string; roomName: string | null; stoppedAt: number | null }> = [];

  constructor(readonly opts: WorkloadOptions) {
    this.agent = new Agent({ connections: opts.students + 8, keepAliveTimeout: 5000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  }

  now() {
    return Date.now() - this.started;
  }

  private async tokenFor(id: string, role: 'STUDENT' | 'TEACHER' | 'ADMIN'): Promise<string> {
    let t = this.tokens.get(id);
    if (!t) {
      const contact = role === 'STUDENT';
      t = await mintToken(this.opts.authSecret, {
        sub: id,
        institutionId: INSTITUTION,
        role,
        contactId: contact ? id : undefined,
        isContact: contact,
        contactType: contact ? 'CONTACT_STUDENT' : undefined,
      });
      this.tokens.set(id, t);
    }
    return t;
  }

  /** One request through the load balancer, recorded. Never throws: the record says what happened. */
  async call(
    actor: { id: string; role: 'STUDENT' | 'TEACHER' | 'ADMIN' },
    op: string,
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: unknown,
    opts: { write?: Write; accept?: number[]; headers?: Record<string, string>; raw?: string; record?: boolean } = {},
  ): Promise<{ status: number; data: Json; record: RequestRecord }> {
    const t0 = Date.now();
    const record: RequestRecord = { t: t0 - this.started, ms: 0, actor: actor.id, op, method, status: 0, accepted: false, write: opts.write };
    let data: Json = null;
    try {
      const headers: Record<string, string> = { ...opts.headers };
      if (!opts.headers?.['x-recorder-signature']) headers.authorization = `Bearer ${await this.tokenFor(actor.id, actor.role)}`;
      const payload = opts.raw ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const res = await request(`${this.opts.baseUrl}${path}`, { method, headers, body: payload, dispatcher: this.agent });
      const text = await res.body.text();
      record.status = res.statusCode;
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
      if (res.statusCode < 200 || res.statusCode > 299)
        record.error = typeof data === 'object' && data?.error ? `${data.error.code}: ${data.error.message}` : String(text).slice(0, 200);
      record.accepted = opts.accept?.includes(res.statusCode) ?? false;
    } catch (err) {
      record.error = (err as Error).message;
    }
    record.ms = Date.now() - t0;
    if (opts.record !== false) this.records.push(record);
    return { status: record.status, data: data?.data ?? data, record };
  }

  /** Set-up call: must answer 2xx (retried a few times: the cluster may still settle). */
  private async must(actor: { id: string; role: 'STUDENT' | 'TEACHER' | 'ADMIN' }, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Json> {
    let last: RequestRecord | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await this.call(actor, 'setup', method, path, body, { record: false });
      if (res.status >= 200 && res.status < 300) return res.data;
      last = res.record;
      await sleep(500);
    }
    throw new HttpError(last?.status ?? 0, `${method} ${path}: ${last?.error}`);
  }

  /**
   * Courses through the API: a large course with `fanout` students (bulk enrollment), and three
   * activity courses (two video lessons, a quiz, an assignment) owned by the two teachers.
   */
  async setup() {
    const [t1, t2] = TEACHERS.map((id) => ({ id, role: 'TEACHER' as const }));
    const big = await this.must(t1, 'POST', '/api/courses', { title: 'Cluster: whole-school assembly' });
    const bigModule = await this.must(t1, 'POST', `/api/courses/${big.id}/modules`, { title: 'Assemblies' });
    const bigLesson = await this.must(t1, 'POST', `/api/courses/${big.id}/lessons`, {
      title: 'Welcome',
      type: 'VIDEO',
      moduleId: bigModule.id,
      videoUrl: 'https://video.example/assembly.mp4',
      durationSeconds: 600,
    });
    await this.must(t1, 'POST', `/api/courses/${big.id}/publish`, { status: 'PUBLISHED' });
    this.bigCourseId = big.id;
    this.bigLessonId = bigLesson.id;
    for (let from = 1; from <= this.opts.fanout; from += 500) {
      const ids = Array.from({ length: Math.min(500, this.opts.fanout - from + 1) }, (_, i) => studentId(from + i));
      const res = await this.must(t1, 'POST', `/api/courses/${big.id}/enrollments`, { studentIds: ids });
      if (res.enrolled.length + res.alreadyEnrolled.length !== ids.length) throw new Error(`bulk enrollment: ${JSON.stringify(res.failed.slice(0, 3))}`);
    }

    for (const [i, owner] of [t1, t2, t1].entries()) {
      const course = await this.must(owner, 'POST', '/api/courses', { title: `Cluster: course ${i + 1}` });
      const mod = await this.must(owner, 'POST', `/api/courses/${course.id}/modules`, { title: 'Unit 1' });
      const videos: string[] = [];
      for (let v = 1; v <= 2; v++) {
        const lesson = await this.must(owner, 'POST', `/api/courses/${course.id}/lessons`, {
          title: `Video ${v}`,
          type: 'VIDEO',
          moduleId: mod.id,
          videoUrl: `https://video.example/${i}-${v}.mp4`,
          durationSeconds: 300,
        });
        videos.push(lesson.id);
      }
      const quizLesson = await this.must(owner, 'POST', `/api/courses/${course.id}/lessons`, { title: 'Check', type: 'QUIZ', moduleId: mod.id });
      const quiz = await this.must(owner, 'PUT', `/api/quiz/${quizLesson.id}`, {
        title: 'Check',
        passingScore: 50,
        questions: [
          { type: 'TRUE_FALSE', prompt: 'Water boils at 100 °C at sea level.', correctAnswer: true },
          { type: 'TRUE_FALSE', prompt: 'The Moon is a planet.', correctAnswer: false },
        ],
      });
      const assignmentLesson = await this.must(owner, 'POST', `/api/courses/${course.id}/lessons`, { title: 'Essay', type: 'ASSIGNMENT', moduleId: mod.id });
      await this.must(owner, 'PUT', `/api/assignments/${assignmentLesson.id}`, {
        title: 'Essay',
        instructions: 'Write a paragraph.',
        maxScore: 10,
        passingScore: 5,
        dueDate: '2099-01-01T00:00:00.000Z',
        isPeerAssessed: false,
      });
      await this.must(owner, 'POST', `/api/courses/${course.id}/publish`, { status: 'PUBLISHED' });
      this.courses.push({
        id: course.id,
        ownerId: owner.id,
        videoLessonIds: videos,
        quizId: quizLesson.id,
        quizAnswers: quiz.questions.map((q: Json, n: number) => ({ questionId: q.id, value: n === 0 })),
        assignmentId: assignmentLesson.id,
      });
    }
  }

  /**
   * A write with the retries of a careful client: on no answer or a 5xx it waits and tries
   * again (each try with its own unique text, so a try that committed without answering is
   * told apart from the retry), at most `tries` times.
   */
  private async write(
    actor: { id: string; role: 'STUDENT' | 'TEACHER' },
    op: string,
    method: 'POST' | 'PUT',
    path: string,
    attempt: () => { body: unknown; write?: Write },
    opts: { accept?: number[]; tries?: number } = {},
  ) {
    for (let i = 0; i < (opts.tries ?? 4) && !this.stopping; i++) {
      const { body, write } = attempt();
      const res = await this.call(actor, op, method, path, body, { write, accept: opts.accept });
      if (res.status === 429) await sleep(2000);
      else if (res.status !== 0 && res.status < 500) return res;
      await sleep(300 + 400 * i);
    }
    return undefined;
  }

  private async read(actor: { id: string; role: 'STUDENT' | 'TEACHER' }, op: string, path: string) {
    return this.call(actor, op, 'GET', path);
  }

  /** One student through one course: enroll, progress, notes, quiz, assignment, and some reads. */
  private async journey(sid: string, course: CourseSetup) {
    const me = { id: sid, role: 'STUDENT' as const };
    const think = () => sleep(50 + Math.random() * 150);
    const enrolled = await this.write(
      me,
      'enroll',
      'POST',
      `/api/courses/${course.id}/enroll`,
      () => ({ body: undefined, write: { kind: 'enrollment', courseId: course.id, studentId: sid } }),
      { accept: [409] },
    );
    if (!enrolled || (enrolled.status !== 201 && enrolled.status !== 409)) return;
    if (enrolled.status === 201) (enrolled.record.write as Extract<Write, { kind: 'enrollment' }>).id = enrolled.data.id;
    await think();
    await this.read(me, 'read:learn', `/api/learn/${course.id}`);
    for (const lessonId of course.videoLessonIds) {
      for (const [percent, completed] of [
        [40, false],
        [100, true],
      ] as const) {
        const res = await this.write(me, 'progress', 'POST', `/api/lessons/${lessonId}/progress`, () => ({
          body: { progressPercent: percent, positionSeconds: percent * 3, ...(completed ? { completed } : {}) },
          write: { kind: 'progress', lessonId, studentId: sid, completed },
        }));
        if (res?.status === 200 || res?.status === 201) (res.record.write as Extract<Write, { kind: 'progress' }>).enrollmentId = res.data.enrollmentId;
        await think();
      }
      const note = await this.write(me, 'note', 'POST', `/api/lessons/${lessonId}/notes`, () => {
        const t = token();
        return { body: { content: `cluster note ${t}`, timestampSeconds: 42 }, write: { kind: 'note', token: t, studentId: sid } };
      });
      if (note?.status === 201) (note.record.write as Extract<Write, { kind: 'note' }>).id = note.data.id;
      await think();
    }
    const attempt = await this.write(me, 'quiz', 'POST', `/api/quiz/${course.quizId}/attempt`, () => ({
      body: { answers: course.quizAnswers },
      write: { kind: 'attempt', quizId: course.quizId, studentId: sid },
    }));
    if (attempt?.status === 200) (attempt.record.write as Extract<Write, { kind: 'attempt' }>).id = attempt.data.id;
    await think();
    await this.read(me, 'read:notifications', '/api/notifications/unread-count');
    const submitted = await this.write(
      me,
      'submit',
      'POST',
      `/api/assignments/${course.assignmentId}/submit`,
      () => {
        const t = token();
        return { body: { textContent: `cluster essay ${t}` }, write: { kind: 'submission', assignmentId: course.assignmentId, studentId: sid, token: t } };
      },
      { accept: [409] },
    );
    if (submitted?.status === 201) (submitted.record.write as Extract<Write, { kind: 'submission' }>).id = submitted.data.id;
    await think();
    await this.read(me, 'read:my-courses', '/api/my-courses');
  }

  /** Students who started a journey: past the pool they come round again, and a reused student's writes to a completed course are refused (403). */
  get studentsUsed() {
    return this.nextStudent;
  }

  private async studentLoop() {
    while (!this.stopping) {
      if (this.nextStudent === this.opts.studentPool)
        this.opts.log(`student pool of ${this.opts.studentPool} used up at ${(this.now() / 1000).toFixed(1)} s: students come round again`);
      const n = (this.nextStudent++ % this.opts.studentPool) + 1;
      const sid = studentId(n);
      const order = [...this.courses].sort(() => Math.random() - 0.5);
      for (const course of order) {
        if (this.stopping) break;
        await this.journey(sid, course);
      }
    }
  }

  /** A teacher grades the ungraded submissions of the assignments of the courses they own. */
  private async teacherLoop(teacherId: string) {
    const me = { id: teacherId, role: 'TEACHER' as const };
    const mine = this.courses.filter((c) => c.ownerId === teacherId);
    while (!this.stopping) {
      let graded = 0;
      for (const course of mine) {
        const list = await this.read(me, 'read:submissions', `/api/assignments/${course.assignmentId}/submissions?limit=20`);
        if (list.status !== 200 || !Array.isArray(list.data)) continue;
        for (const s of list.data.filter((x: Json) => x.status !== 'GRADED').slice(0, 3)) {
          if (this.stopping) break;
          const score = 4 + Math.floor(Math.random() * 7);
          await this.write(me, 'grade', 'POST', `/api/assignments/${course.assignmentId}/grade`, () => {
            const t = token();
            return { body: { submissionId: s.id, score, feedback: `cluster feedback ${t}` }, write: { kind: 'grade', submissionId: s.id, score, token: t } };
          });
          graded++;
          // Paced under RATE_LIMIT_WRITE (120 a minute), with the live classes' writes on top.
          await sleep(700);
        }
      }
      await sleep(graded > 0 ? 300 : 1000);
    }
  }

  /**
   * A live class of the large course: scheduled (every student is notified), started,
   * recorded, stopped; the recorder simulator calls the webhook back ~2 s later and the
   * recording's notice fans out to every student. Once READY, the webhook is sent again,
   * signed like the recorder signs it: a replay must change nothing.
   */
  async liveClass(): Promise<string | undefined> {
    const me = { id: TEACHERS[0], role: 'TEACHER' as const };
    const created = await this.write(me, 'live:create', 'POST', '/api/live-sessions', () => {
      // A title of its own per try: a try that committed without an answer is told apart from the retry.
      const title = `Assembly ${token()}`;
      return {
        body: { courseId: this.bigCourseId, title, scheduledAt: new Date().toISOString(), durationMinutes: 30 },
        write: { kind: 'liveSession', courseId: this.bigCourseId, title },
      };
    });
    if (created?.status !== 201) return undefined;
    const id = created.data.id as string;
    (created.record.write as Extract<Write, { kind: 'liveSession' }>).id = id;
    const session = { id, roomName: null as string | null, stoppedAt: null as number | null };
    this.sessions.push(session);
    const started = await this.write(me, 'live:start', 'POST', `/api/live-sessions/${id}/start`, () => ({ body: undefined }));
    if (started?.status !== 200) return id;
    session.roomName = started.data.roomName;
    const rec = await this.write(me, 'live:recording-start', 'POST', `/api/live-sessions/${id}/recording/start`, () => ({ body: undefined }));
    if (rec?.status !== 200) return id;
    await sleep(1000);
    const stopped = await this.write(me, 'live:recording-stop', 'POST', `/api/live-sessions/${id}/recording/stop`, () => ({
      body: undefined,
      write: { kind: 'recordingStop', sessionId: id },
    }));
    if (stopped?.status === 200) session.stoppedAt = this.now();
    await this.write(me, 'live:end', 'POST', `/api/live-sessions/${id}/end`, () => ({ body: undefined }), { accept: [409] });
    return id;
  }

  /** After the recorder's callback made the recording READY: the same webhook again, signed. */
  private async replayWebhook(sessionId: string) {
    const me = { id: TEACHERS[0], role: 'TEACHER' as const };
    for (let i = 0; i < 40 && !this.stopping; i++) {
      const s = await this.read(me, 'read:live-session', `/api/live-sessions/${sessionId}`);
      if (s.status === 200 && s.data.recordingStatus === 'READY') {
        const raw = JSON.stringify({
          event: 'recording_uploaded',
          sessionId,
          roomName: s.data.roomName,
          recordingUrl: s.data.recordingUrl,
          duration: s.data.recordingDuration ?? 1,
        });
        const signature = `sha256=${hmacSha256Hex(this.opts.webhookSecret, raw)}`;
        await this.call({ id: 'recorder', role: 'TEACHER' }, 'webhook:replay', 'POST', '/api/webhooks/meet-recording', undefined, {
          raw,
          headers: { 'x-recorder-signature': signature },
          write: { kind: 'webhookReplay', sessionId },
        });
        return;
      }
      await sleep(1000);
    }
  }

  private async liveLoop() {
    while (!this.stopping) {
      const id = await this.liveClass();
      if (id) void this.replayWebhook(id);
      for (let i = 0; i < this.opts.recordingEverySec * 10 && !this.stopping; i++) await sleep(100);
    }
  }

  private loops: Promise<void>[] = [];

  start() {
    this.started = Date.now();
    for (let i = 0; i < this.opts.students; i++) this.loops.push(this.studentLoop());
    for (const t of TEACHERS) this.loops.push(this.teacherLoop(t));
    this.loops.push(this.liveLoop());
  }

  get startedAt() {
    return this.started;
  }

  async stop() {
    this.stopping = true;
    await Promise.all(this.loops);
    await this.agent.close();
  }
}
