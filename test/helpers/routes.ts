/**
 * Helpers for the route sweeps (tenancy sweep, fuzz): walk the OpenAPI document the app serves,
 * build a fixture of one institution through the API, fill path parameters from it, and
 * generate a valid body from a route's JSON schema.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import { DEMO_ADMIN_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID } from '../../src/dev/crm-sim/fixtures.js';
import { scorm12Package } from './scorm-packages.js';

export type JsonSchema = Record<string, any>;

export interface RouteInfo {
  method: string;
  /** OpenAPI path, e.g. `/api/lessons/{id}/notes/{noteId}`. */
  path: string;
  operationId?: string;
  pathParams: string[];
  query: Array<{ name: string; schema: JsonSchema; required: boolean }>;
  /** Content type → schema of the request body. */
  body?: { contentType: string; schema: JsonSchema; required: boolean };
  security: unknown;
  /** The route's `x-record-scope` (src/platform/http/types.ts `RecordScope`), if it declares one. */
  recordScope?: string;
}

/** Every documented route of the app, from GET /openapi.json. */
export async function documentedRoutes(t: TestApp): Promise<RouteInfo[]> {
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  const doc = res.json() as { paths: Record<string, Record<string, any>> };
  const routes: RouteInfo[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = (op.parameters ?? []) as Array<{ in: string; name: string; schema: JsonSchema; required?: boolean }>;
      const content = op.requestBody?.content as Record<string, { schema: JsonSchema }> | undefined;
      const [contentType, media] = content ? Object.entries(content)[0]! : [undefined, undefined];
      routes.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {}, required: Boolean(p.required) })),
        body: contentType && media ? { contentType, schema: media.schema ?? {}, required: Boolean(op.requestBody?.required) } : undefined,
        security: op.security,
        recordScope: op['x-record-scope'],
      });
    }
  }
  return routes;
}

// ── fixture ────────────────────────────────────────────────────────────────────

/** Ids of one institution's records, created through the API. */
export interface Fixture {
  institutionId: string;
  courseId: string;
  moduleId: string;
  lessonId: string;
  /** A QUIZ lesson of the same course with a quiz (`/api/quiz/{id}` takes the lesson id). */
  quizLessonId: string;
  blockId: string;
  captionId: string;
  noteId: string;
  bookmarkId: string;
  /** The enrolled student who owns the note, the bookmark and the block answer. */
  studentId: string;
  /** A second student of the same institution, enrolled in the same course. */
  otherStudentId: string;
  enrollmentId: string;
  fileId: string;
  fileKey: string;
  /** The ASSIGNMENT lesson (and its peer-assessed assignment); both students submitted. */
  assignmentId: string;
  /** The student's submission. */
  submissionId: string;
  /** The peer review the student does (of the other student's submission). */
  peerReviewId: string;
  /** A published learning path with the course. */
  learningPathId: string;
  /** A LIVE live session of the course (hosted by the admin), which the student registered for and joined. */
  liveSessionId: string;
  /** A whole-course announcement by the admin. */
  announcementId: string;
  /** The student's discussion thread in the course, and their reply in it. */
  discussionId: string;
  replyId: string;
  /** A PRIVATE saved report of the admin (its name is a planted secret), with a schedule and an alert. */
  reportId: string;
  scheduleId: string;
  alertId: string;
  /** A SCORM lesson with a SCORM 1.2 package; the student launched it and tracked (suspend_data is a secret). */
  scormLessonId: string;
  /** The student's content grant from that launch (`/api/scorm/{id}/content/{token}/…`). */
  scormToken: string;
  /** An xAPI LRS credential of the institution (issued by the admin). */
  xapiCredentialId: string;
  /** Its Basic Authorization header value. */
  xapiAuthorization: string;
  /** A statement the student stored as themselves (its result.response is a planted secret). */
  xapiStatementId: string;
  /** The activity of that statement, and the student's agent as xAPI JSON (state and agent profile documents hold a secret). */
  xapiActivityId: string;
  xapiAgent: string;
  /** Strings planted in the owner's records; no response to another user may contain them. */
  secrets: string[];
}

type Part = { name: string; value: string } | { name: string; filename: string; contentType?: string; data: string | Buffer };

/** A multipart/form-data body built by hand, so tests control every byte. */
export function multipartBody(parts: Part[], boundary = `----lmsSweep${Math.random().toString(16).slice(2)}`) {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if ('filename' in p) {
      head += `; filename="${p.filename}"\r\nContent-Type: ${p.contentType ?? 'text/vtt'}\r\n\r\n`;
      chunks.push(Buffer.from(head), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`${head}\r\n\r\n${p.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export const VTT = 'WEBVTT\n\n00:00.000 --> 00:02.500\nHello\n\n00:02.500 --> 00:05.000\nSecond line\n';

/** A valid caption upload form (multipart) for the caption route. */
export const captionForm = () =>
  multipartBody([
    { name: 'file', filename: 'track.vtt', data: VTT },
    { name: 'language', value: 'en' },
    { name: 'label', value: 'English' },
  ]);

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}?${u.searchParams.toString()}`;
};

/**
 * A published course with a module, a VIDEO lesson (an interactive block, a caption track) and
 * a QUIZ lesson with its quiz, two ACTIVE enrollments, the first student's note, bookmark,
 * block answer and quiz attempt, and a registered file, all in the institution of
 * `institutionId`, created through the API.
 */
export async function buildFixture(t: TestApp, opts: { institutionId?: string; adminId?: string; studentId?: string; otherStudentId?: string } = {}): Promise<Fixture> {
  const institutionId = opts.institutionId ?? 'inst_demo';
  const studentId = opts.studentId ?? DEMO_STUDENT_ID;
  const otherStudentId = opts.otherStudentId ?? DEMO_SIBLING_ID;
  const admin = await t.token({ role: 'ADMIN', id: opts.adminId ?? DEMO_ADMIN_ID, institutionId });
  const student = await t.token({ role: 'STUDENT', id: studentId, institutionId });
  const tag = `${institutionId}-${Math.random().toString(36).slice(2, 10)}`;
  const secrets = [
    `secret-note-${tag}`,
    `secret-bookmark-${tag}`,
    `secret-answer-${tag}`,
    `secret-quiz-key-${tag}`,
    `secret-quiz-explanation-${tag}`,
    `secret-quiz-attempt-${tag}`,
    // The text of a reply its author deleted: no answer to anyone may contain it.
    `secret-deleted-reply-${tag}`,
    // The name of the admin's private saved report.
    `secret-report-${tag}`,
    // The student's SCORM suspend_data: no one else's launch may show it.
    `secret-scorm-suspend-${tag}`,
    // The student's xAPI statement and documents.
    `secret-xapi-${tag}`,
  ];

  const okData = async (res: { status: number; raw: string; body: any }, status: number) => {
    expect(res.status, res.raw).toBe(status);
    return res.body.data;
  };
  const course = await okData(await t.request('POST', '/api/courses', { token: admin, body: { title: `Sweep course ${tag}` } }), 201);
  const mod = await okData(await t.request('POST', `/api/courses/${course.id}/modules`, { token: admin, body: { title: 'Module 1' } }), 201);
  const blockId = 'blk_quiz_1';
  const lesson = await okData(
    await t.request('POST', `/api/courses/${course.id}/lessons`, {
      token: admin,
      body: {
        title: 'Video lesson',
        type: 'VIDEO',
        moduleId: mod.id,
        videoUrl: 'https://video.example/1.mp4',
        durationSeconds: 600,
        blocks: [{ id: blockId, type: 'quiz', question: 'Q?', correctAnswer: 'a' }],
      },
    }),
    201,
  );
  // A QUIZ lesson whose answer key and explanation no learner may see (planted secrets).
  const quizLesson = await okData(
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: admin, body: { title: 'Quiz lesson', type: 'QUIZ', moduleId: mod.id } }),
    201,
  );
  const quiz = await okData(
    await t.request('PUT', `/api/quiz/${quizLesson.id}`, {
      token: admin,
      body: { title: 'Sweep quiz', questions: [{ type: 'SHORT_ANSWER', prompt: 'The word?', acceptedAnswers: [secrets[3]], explanation: secrets[4] }] },
    }),
    201,
  );
  await okData(await t.request('POST', `/api/courses/${course.id}/publish`, { token: admin, body: { status: 'PUBLISHED' } }), 200);
  const form = captionForm();
  const cap = await t.app.inject({
    method: 'POST',
    url: `/api/lessons/${lesson.id}/captions`,
    headers: { ...form.headers, authorization: `Bearer ${admin}` },
    payload: form.payload,
  });
  expect(cap.statusCode, cap.body).toBe(201);
  const captionId = cap.json().data.id as string;

  const bulk = await okData(await t.request('POST', `/api/courses/${course.id}/enrollments`, { token: admin, body: { studentIds: [studentId, otherStudentId] } }), 200);
  expect(bulk.enrolled).toHaveLength(2);
  const enrollmentId = bulk.enrolled.find((e: { studentId: string }) => e.studentId === studentId).id as string;

  const note = await okData(await t.request('POST', `/api/lessons/${lesson.id}/notes`, { token: student, body: { content: secrets[0], timestampSeconds: 5 } }), 201);
  const bookmark = await okData(await t.request('POST', `/api/lessons/${lesson.id}/bookmarks`, { token: student, body: { timestampSeconds: 7, label: secrets[1] } }), 201);
  await okData(await t.request('POST', `/api/lessons/${lesson.id}/blocks/${blockId}/answer`, { token: student, body: { answer: secrets[2] } }), 200);
  // The owner's (failed) attempt, whose answer no one else of the students may see.
  await okData(await t.request('POST', `/api/quiz/${quizLesson.id}/attempt`, { token: student, body: { answers: [{ questionId: quiz.questions[0].id, text: secrets[5] }] } }), 200);

  const bytes = 'hello file';
  const presign = await okData(await t.request('POST', '/api/upload', { token: admin, body: { fileName: 'a.txt', contentType: 'text/plain', size: bytes.length } }), 200);
  const put = await t.app.inject({
    method: 'PUT',
    url: pathOf(presign.uploadUrl),
    payload: bytes,
    headers: { 'content-type': presign.headers['Content-Type'] },
  });
  expect(put.statusCode, put.body).toBe(201);
  const file = await okData(
    await t.request('POST', '/api/files', {
      token: admin,
      body: { key: presign.key, name: 'a.txt', contentType: 'text/plain', courseId: course.id, lessonId: lesson.id },
    }),
    201,
  );

  const assignmentLesson = await okData(
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: admin, body: { title: 'Essay', type: 'ASSIGNMENT', moduleId: mod.id } }),
    201,
  );
  await okData(
    await t.request('PUT', `/api/assignments/${assignmentLesson.id}`, {
      token: admin,
      body: { title: 'Essay', instructions: 'Write', maxScore: 10, dueDate: '2099-01-01T00:00:00.000Z', isPeerAssessed: true, peerReviewCount: 1 },
    }),
    200,
  );
  const other = await t.token({ role: 'STUDENT', id: otherStudentId, institutionId });
  const submission = await okData(await t.request('POST', `/api/assignments/${assignmentLesson.id}/submit`, { token: student, body: { textContent: `essay ${tag}` } }), 201);
  await okData(await t.request('POST', `/api/assignments/${assignmentLesson.id}/submit`, { token: other, body: { textContent: `other essay ${tag}` } }), 201);
  const queue = await okData(await t.request('GET', '/api/me/peer-reviews', { token: student }), 200);
  expect(queue.reviews).toHaveLength(1);
  const learningPath = await okData(
    await t.request('POST', '/api/learning-paths', { token: admin, body: { title: `Path ${tag}`, status: 'PUBLISHED', courseIds: [course.id] } }),
    201,
  );

  const live = await okData(
    await t.request('POST', '/api/live-sessions', {
      token: admin,
      body: { courseId: course.id, title: `Live ${tag}`, scheduledAt: '2026-03-02T10:00:00.000Z', durationMinutes: 45 },
    }),
    201,
  );
  await okData(await t.request('POST', `/api/live-sessions/${live.id}/register`, { token: student }), 200);
  await okData(await t.request('POST', `/api/live-sessions/${live.id}/start`, { token: admin }), 200);
  await okData(await t.request('POST', `/api/live-sessions/${live.id}/join`, { token: student }), 200);

  const announcement = await okData(
    await t.request('POST', `/api/courses/${course.id}/announcements`, { token: admin, body: { title: `Welcome ${tag}`, body: 'Hello class' } }),
    201,
  );
  const thread = await okData(await t.request('POST', `/api/courses/${course.id}/discussions`, { token: student, body: { title: `Question ${tag}`, body: 'How?' } }), 201);
  const reply = await okData(await t.request('POST', `/api/discussions/${thread.id}/replies`, { token: student, body: { body: 'A follow-up' } }), 201);
  const deleted = await okData(await t.request('POST', `/api/discussions/${thread.id}/replies`, { token: student, body: { body: secrets[6] } }), 201);
  await okData(await t.request('DELETE', `/api/discussion-replies/${deleted.id}`, { token: student }), 200);
  await okData(await t.request('POST', '/api/reviews', { token: student, body: { courseId: course.id, rating: 4, comment: 'Clear and useful' } }), 201);

  const report = await okData(
    await t.request('POST', '/api/analytics/reports', {
      token: admin,
      body: {
        name: secrets[7],
        visibility: 'PRIVATE',
        definition: {
          entity: 'enrollments',
          groupBy: ['course.title'],
          aggregates: [{ fn: 'avg', field: 'progress', as: 'avgProgress' }],
          filters: [{ field: 'courseId', op: 'eq', value: course.id }],
        },
      },
    }),
    201,
  );
  const schedule = await okData(
    await t.request('POST', `/api/analytics/reports/${report.id}/schedules`, { token: admin, body: { cadence: 'DAILY', time: '07:00', format: 'CSV' } }),
    201,
  );
  const alert = await okData(
    await t.request('POST', `/api/analytics/reports/${report.id}/alerts`, { token: admin, body: { name: `Alert ${tag}`, metric: 'avgProgress', comparison: 'lt', threshold: 10 } }),
    201,
  );
  const scormLesson = await okData(
    await t.request('POST', `/api/courses/${course.id}/lessons`, { token: admin, body: { title: 'Microscope lab', type: 'SCORM', moduleId: mod.id } }),
    201,
  );
  const pkg = await t.app.inject({
    method: 'PUT',
    url: `/api/scorm/${scormLesson.id}/package`,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/zip' },
    payload: await scorm12Package(),
  });
  expect(pkg.statusCode, pkg.body).toBe(201);
  const scormLaunch = await okData(await t.request('GET', `/api/scorm/${scormLesson.id}/launch`, { token: student }), 200);
  await okData(
    await t.request('POST', `/api/scorm/${scormLesson.id}/track`, {
      token: student,
      body: { scoId: scormLaunch.sco.id, values: { 'cmi.suspend_data': secrets[8], 'cmi.core.exit': 'suspend' }, terminate: true },
    }),
    200,
  );
  const scormToken = /\/content\/([^/]+)\//.exec(scormLaunch.contentBaseUrl)![1]!;
  // xAPI: a credential, and the student's own statement and documents (through their session).
  const credential = await okData(await t.request('POST', '/api/xapi/credentials', { token: admin, body: { name: `Sweep tool ${tag}` } }), 201);
  const xapiAgent = JSON.stringify({ objectType: 'Agent', account: { homePage: t.config.publicBaseUrl, name: studentId } });
  const xapiActivityId = `${t.config.publicBaseUrl}/xapi/activities/lesson/${lesson.id}`;
  const xapi = { authorization: `Bearer ${student}`, 'x-experience-api-version': '1.0.3', 'content-type': 'application/json' };
  const stmt = await t.app.inject({
    method: 'POST',
    url: '/api/xapi/statements',
    headers: xapi,
    payload: JSON.stringify({
      actor: JSON.parse(xapiAgent),
      verb: { id: 'http://adlnet.gov/expapi/verbs/answered' },
      object: { id: xapiActivityId },
      result: { response: secrets[9] },
    }),
  });
  expect(stmt.statusCode, stmt.body).toBe(200);
  for (const [path, query] of [
    ['activities/state', { activityId: xapiActivityId, agent: xapiAgent, stateId: 'sweep' }],
    ['agents/profile', { agent: xapiAgent, profileId: 'sweep' }],
  ] as const) {
    // POST (merge): buildFixture may run twice on one app, and a profile PUT over an existing one is 409.
    const doc = await t.app.inject({ method: 'POST', url: `/api/xapi/${path}?${new URLSearchParams(query)}`, headers: xapi, payload: JSON.stringify({ note: secrets[9] }) });
    expect(doc.statusCode, doc.body).toBe(204);
  }

  return {
    reportId: report.id,
    scheduleId: schedule.id,
    alertId: alert.id,
    institutionId,
    scormLessonId: scormLesson.id,
    scormToken,
    assignmentId: assignmentLesson.id,
    submissionId: submission.id,
    peerReviewId: queue.reviews[0].id,
    learningPathId: learningPath.id,
    liveSessionId: live.id,
    announcementId: announcement.id,
    discussionId: thread.id,
    replyId: reply.id,
    courseId: course.id,
    moduleId: mod.id,
    lessonId: lesson.id,
    quizLessonId: quizLesson.id,
    blockId,
    captionId,
    noteId: note.id,
    bookmarkId: bookmark.id,
    studentId,
    otherStudentId,
    enrollmentId,
    fileId: file.id,
    fileKey: presign.key,
    xapiCredentialId: credential.id,
    xapiAuthorization: `Basic ${Buffer.from(`${credential.key}:${credential.secret}`).toString('base64')}`,
    xapiStatementId: stmt.json()[0],
    xapiActivityId,
    xapiAgent,
    secrets,
  };
}

// ── path parameters ────────────────────────────────────────────────────────────

/**
 * How a path parameter maps to a fixture id: first by `<segment before it>/{name}` (needed for
 * the generic `{id}`), then by the parameter name alone. A route whose parameters do not all
 * resolve is reported as unmapped by the sweep, so a new kind of id gets a mapping here.
 */
const BY_SEGMENT: Record<string, (f: Fixture) => string> = {
  'courses/{id}': (f) => f.courseId,
  'modules/{id}': (f) => f.moduleId,
  'lessons/{id}': (f) => f.lessonId,
  'quiz/{id}': (f) => f.quizLessonId,
  'captions/{id}': (f) => f.captionId,
  'notes/{id}': (f) => f.noteId,
  'bookmarks/{id}': (f) => f.bookmarkId,
  'enrollments/{id}': (f) => f.enrollmentId,
  'files/{id}': (f) => f.fileId,
  'assignments/{id}': (f) => f.assignmentId,
  'peer-reviews/{id}': (f) => f.peerReviewId,
  'learning-paths/{id}': (f) => f.learningPathId,
  'live-sessions/{id}': (f) => f.liveSessionId,
  'announcements/{id}': (f) => f.announcementId,
  'discussions/{id}': (f) => f.discussionId,
  'discussion-replies/{id}': (f) => f.replyId,
  'reports/{id}': (f) => f.reportId,
  'schedules/{id}': (f) => f.scheduleId,
  'alerts/{id}': (f) => f.alertId,
  'scorm/{id}': (f) => f.scormLessonId,
  'credentials/{id}': (f) => f.xapiCredentialId,
};
const BY_NAME: Record<string, (f: Fixture) => string> = {
  courseId: (f) => f.courseId,
  moduleId: (f) => f.moduleId,
  lessonId: (f) => f.lessonId,
  blockId: (f) => f.blockId,
  captionId: (f) => f.captionId,
  noteId: (f) => f.noteId,
  bookmarkId: (f) => f.bookmarkId,
  studentId: (f) => f.studentId,
  // the parent portal's child is the student (a contact id)
  childId: (f) => f.studentId,
  enrollmentId: (f) => f.enrollmentId,
  fileId: (f) => f.fileId,
  // signed storage URLs: <tenant>/<kind>/<object> of a stored object
  tenant: (f) => f.fileKey.split('/')[0]!,
  kind: (f) => f.fileKey.split('/')[1]!,
  object: (f) => f.fileKey.split('/').slice(2).join('/'),
  // SCORM content: the student's launch grant and a file at the package root
  token: (f) => f.scormToken,
  asset: () => 'imsmanifest.xml',
};

/** The fixture id for each path parameter of `path`, or the names that have no mapping. */
export function resolvePathParams(path: string, fixture: Fixture): { values: Record<string, string>; unmapped: string[] } {
  const segments = path.split('/').filter(Boolean);
  const values: Record<string, string> = {};
  const unmapped: string[] = [];
  segments.forEach((seg, i) => {
    const m = /^\{(\w+)\}$/.exec(seg);
    if (!m) return;
    const name = m[1]!;
    const bySegment = BY_SEGMENT[`${segments[i - 1]}/${seg}`];
    const byName = name === 'id' ? undefined : BY_NAME[name];
    const fn = bySegment ?? byName;
    if (fn) values[name] = fn(fixture);
    else unmapped.push(`{${name}} after /${segments[i - 1]}`);
  });
  return { values, unmapped };
}

export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? `missing-${name}`));
}

// ── bodies from JSON schema ────────────────────────────────────────────────────

const ID_HINTS: Record<string, keyof Fixture> = {
  institutionId: 'institutionId',
  courseId: 'courseId',
  moduleId: 'moduleId',
  lessonId: 'lessonId',
  blockId: 'blockId',
  captionId: 'captionId',
  noteId: 'noteId',
  bookmarkId: 'bookmarkId',
  studentId: 'studentId',
  enrollmentId: 'enrollmentId',
  fileId: 'fileId',
  submissionId: 'submissionId',
  parentReplyId: 'replyId',
  reportId: 'reportId',
  // xAPI LRS parameters
  statementId: 'xapiStatementId',
  activityId: 'xapiActivityId',
  activity: 'xapiActivityId',
  agent: 'xapiAgent',
};

/**
 * A plausible valid value for `schema`: every property (required and optional, so refinements
 * such as "give at least one field" pass), strings 'x' (or the fixture id when the name says
 * so), integers at their minimum or 1, enums their first value, booleans true.
 */
export function sampleFromSchema(schema: JsonSchema, fixture?: Fixture, name = '', depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const alts = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (alts) {
    const nonNull = alts.find((a) => a.type !== 'null') ?? alts[0]!;
    return sampleFromSchema(nonNull, fixture, name, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: JsonSchema) => sampleFromSchema(s, fixture, name, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
        out[k] = sampleFromSchema(v, fixture, k, depth + 1);
      }
      return out;
    }
    case 'array': {
      const n = Math.max(1, schema.minItems ?? 1);
      const singular = name.endsWith('s') ? name.slice(0, -1) : name;
      return Array.from({ length: n }, () => sampleFromSchema(schema.items ?? {}, fixture, singular, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const v = Math.max(1, min ?? 1);
      return schema.maximum !== undefined ? Math.min(v, schema.maximum) : v;
    }
    case 'boolean':
      return true;
    case 'string': {
      const hint = ID_HINTS[name];
      if (hint && fixture) return fixture[hint];
      if (schema.format === 'date-time') return '2026-03-02T10:00:00.000Z';
      if (schema.format === 'date') return '2026-03-02';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/x';
      if (schema.format === 'email') return 'x@example.com';
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (/^[A-Z]{2}:[A-Z]{2}$/.test(String(schema.pattern ?? ''))) return '10:00';
      if (/time/i.test(name) && schema.pattern) return '10:00';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    default:
      return name ? 'x' : {};
  }
}
