import { and, eq, sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Clock } from '../platform/clock.js';
import type { Db } from '../platform/db/client.js';
import { systemClock } from '../platform/clock.js';
import { institutions } from '../modules/institutions/institutions.tables.js';
import { categories, courseModules, courses, lessons, type LessonType } from '../modules/courses/courses.tables.js';
import { enrollments, lessonProgress } from '../modules/enrollments/enrollments.tables.js';
import { quizzes, type StoredQuestion } from '../modules/quizzes/quizzes.tables.js';
import { assignments, rubricCriteria, rubrics } from '../modules/assignments/assignments.tables.js';
import { captionTracks } from '../modules/captions/captions.tables.js';
import type { Storage } from '../platform/storage/index.js';
import { tenantSegment } from '../platform/storage/keys.js';
import { crmFixtures, CRM_INSTITUTIONS } from './crm-sim/fixtures.js';
import { inTenant } from '../platform/db/tenancy.js';

/**
 * Demo content for an institution: categories, three courses (two published) with modules and
 * lessons of every type (the QUIZ lesson with a quiz of every question type), enrollments of the simulator's students and some progress. Ids are
 * deterministic, so running it again changes nothing.
 */
interface LessonSeed {
  key: string;
  title: string;
  type: LessonType;
  module: number | null;
  content?: string;
  videoUrl?: string;
  durationSeconds?: number;
  isRequired?: boolean;
  unlockAfterDays?: number;
  blocks?: Array<{ id: string; type: string; [k: string]: unknown }>;
  /** The quiz of a QUIZ lesson. */
  quiz?: { title: string; passingScore: number; maxAttempts: number | null; timeLimitMinutes: number | null; questions: StoredQuestion[] };
}

interface CourseSeed {
  key: string;
  title: string;
  description: string;
  category: string;
  status: 'PUBLISHED' | 'DRAFT';
  dripMode: 'NONE' | 'SEQUENTIAL';
  certificateEnabled: boolean;
  maxEnrollments: number | null;
  modules: string[];
  lessons: LessonSeed[];
  enrollStudents: number;
}

const SAMPLE_VIDEO = 'https://media.example.org/lms-demo/intro.mp4';
/** A 12-second demo video the web app ships (web/public/media/); its captions below follow it. */
const DEMO_VIDEO_PATH = '/media/demo-lesson.webm';
const DEMO_VIDEO_SECONDS = 12;

/** Caption tracks of the algebra welcome video (WebVTT), the English one the default. */
const WELCOME_CAPTIONS = [
  {
    language: 'en',
    label: 'English',
    isDefault: true,
    vtt: 'WEBVTT\n\n00:00.000 --> 00:03.900\nWelcome to Algebra Foundations.\n\n00:04.000 --> 00:07.900\nA variable stands for a number we do not know yet.\n\n00:08.000 --> 00:12.000\nLet us solve our first equation together.\n',
  },
  {
    language: 'es',
    label: 'Español',
    isDefault: false,
    vtt: 'WEBVTT\n\n00:00.000 --> 00:03.900\nBienvenidos a Fundamentos de Álgebra.\n\n00:04.000 --> 00:07.900\nUna variable representa un número que aún no conocemos.\n\n00:08.000 --> 00:12.000\nResolvamos juntos nuestra primera ecuación.\n',
  },
];

/** The algebra assignment: peer reviewed by one classmate, with a rubric, due two weeks after seeding. */
const ALGEBRA_ASSIGNMENT = {
  title: 'Solve five equations',
  instructions: 'Solve each equation and show your working:\n1. x + 3 = 7\n2. 2x = 10\n3. 3x - 4 = 11\n4. x / 2 = 6\n5. 5x + 2 = 3x + 8',
  maxScore: 10,
  passingScore: 6,
  peerReviewCount: 1,
  rubric: {
    title: 'Equations rubric',
    criteria: [
      { key: 'answers', title: 'Correct answers', description: 'Each equation solved correctly.', maxPoints: 6 },
      { key: 'working', title: 'Working shown', description: 'Every step is written down and follows from the one before.', maxPoints: 4 },
    ],
  },
};

/**
 * What `npm start` adds for the web app: the video lessons play the shipped demo video from the
 * service's own address, and the welcome video gets caption tracks (stored files).
 */
export interface SeedMedia {
  storage: Storage;
  baseUrl: string;
}

const COURSES: CourseSeed[] = [
  {
    key: 'algebra',
    title: 'Algebra Foundations',
    description: 'Variables, expressions and linear equations, with practice after every lesson.',
    category: 'Mathematics',
    status: 'PUBLISHED',
    dripMode: 'NONE',
    certificateEnabled: true,
    maxEnrollments: null,
    modules: ['Expressions', 'Equations'],
    enrollStudents: 12,
    lessons: [
      {
        key: 'welcome',
        title: 'Welcome to algebra',
        type: 'VIDEO',
        module: 0,
        videoUrl: SAMPLE_VIDEO,
        durationSeconds: 420,
        blocks: [{ id: 'intro-video', type: 'video', url: SAMPLE_VIDEO }],
      },
      { key: 'variables', title: 'What is a variable?', type: 'TEXT', module: 0, content: '# Variables\nA variable stands for a number we do not know yet.' },
      { key: 'worksheet', title: 'Expressions worksheet', type: 'PDF', module: 0, content: 'https://media.example.org/lms-demo/expressions.pdf' },
      {
        key: 'quiz',
        title: 'Expressions quiz',
        type: 'QUIZ',
        module: 1,
        quiz: {
          title: 'Expressions quiz',
          passingScore: 60,
          maxAttempts: 3,
          timeLimitMinutes: null,
          questions: [
            {
              id: 'q1',
              type: 'SINGLE_CHOICE',
              prompt: 'What is 3x when x = 4?',
              options: [
                { id: 'a', text: '7' },
                { id: 'b', text: '12' },
                { id: 'c', text: '34' },
              ],
              correctOptionIds: ['b'],
              points: 1,
              explanation: '3x means 3 times x: 3 × 4 = 12.',
              order: 1,
            },
            {
              id: 'q2',
              type: 'MULTIPLE_CHOICE',
              prompt: 'Which expressions equal 2(x + 1)?',
              options: [
                { id: 'a', text: '2x + 2' },
                { id: 'b', text: '2x + 1' },
                { id: 'c', text: 'x + x + 2' },
              ],
              correctOptionIds: ['a', 'c'],
              points: 2,
              explanation: null,
              order: 2,
            },
            { id: 'q3', type: 'TRUE_FALSE', prompt: 'x + x is the same as 2x.', correctAnswer: true, points: 1, explanation: null, order: 3 },
            {
              id: 'q4',
              type: 'SHORT_ANSWER',
              prompt: 'What do we call a letter that stands for an unknown number?',
              acceptedAnswers: ['variable', 'a variable'],
              points: 1,
              explanation: null,
              order: 4,
            },
            { id: 'q5', type: 'NUMERIC', prompt: 'Solve 2x = 7 for x.', numericAnswer: 3.5, tolerance: 0, points: 1, explanation: null, order: 5 },
          ],
        },
      },
      { key: 'assignment', title: 'Solve five equations', type: 'ASSIGNMENT', module: 1 },
      { key: 'recap', title: 'Recap (optional)', type: 'TEXT', module: 1, isRequired: false, content: 'A short recap of the course.' },
    ],
  },
  {
    key: 'biology',
    title: 'Introduction to Biology',
    description: 'Cells, living systems and the scientific method, one step at a time.',
    category: 'Science',
    status: 'PUBLISHED',
    dripMode: 'SEQUENTIAL',
    certificateEnabled: true,
    maxEnrollments: 40,
    modules: ['Cells', 'Living systems'],
    enrollStudents: 6,
    lessons: [
      { key: 'cells', title: 'The cell', type: 'VIDEO', module: 0, videoUrl: SAMPLE_VIDEO, durationSeconds: 600, blocks: [{ id: 'cell-video', type: 'video', url: SAMPLE_VIDEO }] },
      {
        key: 'check',
        title: 'Check your understanding',
        type: 'INTERACTIVE',
        module: 0,
        blocks: [{ id: 'q1', type: 'question', prompt: 'Which organelle makes energy?', options: ['Nucleus', 'Mitochondrion'], correctAnswer: 'Mitochondrion' }],
      },
      { key: 'lab', title: 'Virtual microscope lab', type: 'SCORM', module: 1 },
      { key: 'live', title: 'Live Q&A with the teacher', type: 'LIVE', module: 1 },
      { key: 'ecosystems', title: 'Ecosystems', type: 'TEXT', module: 1, unlockAfterDays: 7, content: 'How living things depend on each other.' },
    ],
  },
  {
    key: 'writing',
    title: 'Creative Writing (draft)',
    description: 'Work in progress: short stories and poems.',
    category: 'Languages',
    status: 'DRAFT',
    dripMode: 'NONE',
    certificateEnabled: false,
    maxEnrollments: null,
    modules: ['Stories'],
    enrollStudents: 0,
    lessons: [{ key: 'story', title: 'Your first story', type: 'TEXT', module: 0, content: 'Write 300 words about a door.' }],
  },
];

export interface SeedResult {
  institutionId: string;
  courses: number;
  lessons: number;
  enrollments: number;
  created: boolean;
}

const seedId = (institutionId: string, ...parts: string[]) => `seed_${institutionId}_${parts.join('_')}`;

export async function seedInstitution(db: Db, clock: Clock, institutionId: string, ownerFallback?: string, media?: SeedMedia): Promise<SeedResult> {
  const fixtures = crmFixtures[institutionId];
  const now = clock.now();
  const ownerId = fixtures?.teacher.id ?? ownerFallback ?? 'seed-teacher';
  const students = fixtures?.students.map((s) => s.contact.id) ?? [];
  const [existing] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(courses)
    .where(and(inTenant({ institutionId }, courses), sql`${courses.id} like 'seed\\_%'`));
  const created = existing.n === 0;
  let lessonCount = 0;
  let enrollmentCount = 0;

  await db.transaction(async (tx) => {
    await tx
      .insert(institutions)
      .values({ id: institutionId, slug: fixtures?.institution.slug ?? null, name: fixtures?.institution.name ?? null, settings: {}, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: institutions.id,
        set: { slug: sql`coalesce(${institutions.slug}, excluded.slug)`, name: sql`coalesce(${institutions.name}, excluded.name)` },
      });
    for (const c of COURSES) {
      const categoryId = seedId(institutionId, 'cat', c.category.toLowerCase());
      await tx.insert(categories).values({ id: categoryId, institutionId, name: c.category, description: null, createdAt: now }).onConflictDoNothing();
      const courseId = seedId(institutionId, c.key);
      await tx
        .insert(courses)
        .values({
          id: courseId,
          institutionId,
          title: c.title,
          description: c.description,
          categoryId,
          ownerId,
          status: c.status,
          dripMode: c.dripMode,
          certificateEnabled: c.certificateEnabled,
          maxEnrollments: c.maxEnrollments,
          estimatedDuration: 60 * c.lessons.length,
          publishedAt: c.status === 'PUBLISHED' ? now : null,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing();
      for (const [i, title] of c.modules.entries()) {
        await tx
          .insert(courseModules)
          .values({ id: seedId(institutionId, c.key, 'm', String(i)), institutionId, courseId, title, order: i, createdAt: now, updatedAt: now })
          .onConflictDoNothing();
      }
      for (const [i, l] of c.lessons.entries()) {
        lessonCount++;
        await tx
          .insert(lessons)
          .values({
            id: seedId(institutionId, c.key, l.key),
            institutionId,
            courseId,
            moduleId: l.module === null ? null : seedId(institutionId, c.key, 'm', String(l.module)),
            title: l.title,
            type: l.type,
            order: i,
            content: l.content ?? null,
            videoUrl: l.videoUrl && media ? `${media.baseUrl}${DEMO_VIDEO_PATH}` : (l.videoUrl ?? null),
            durationSeconds: l.videoUrl && media ? DEMO_VIDEO_SECONDS : (l.durationSeconds ?? null),
            isRequired: l.isRequired ?? true,
            unlockAfterDays: l.unlockAfterDays ?? null,
            blocks: l.blocks ?? [],
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoNothing();
        if (l.quiz) {
          await tx
            .insert(quizzes)
            .values({ id: seedId(institutionId, c.key, l.key), institutionId, ...l.quiz, updatedBy: ownerId, createdAt: now, updatedAt: now })
            .onConflictDoNothing();
        }
      }
      for (const studentId of students.slice(0, c.enrollStudents)) {
        enrollmentCount++;
        await tx
          .insert(enrollments)
          .values({ id: seedId(institutionId, c.key, 'e', studentId), institutionId, courseId, studentId, status: 'ACTIVE', enrolledBy: ownerId, enrolledAt: now, updatedAt: now })
          .onConflictDoNothing();
      }
    }
    await seedAssignment(tx as unknown as Db, institutionId, now);
    // Some progress: the first student has finished the first two algebra lessons.
    const first = students[0];
    if (first) {
      const enrollmentId = seedId(institutionId, 'algebra', 'e', first);
      for (const key of ['welcome', 'variables']) {
        await tx
          .insert(lessonProgress)
          .values({
            id: seedId(institutionId, 'p', key, first),
            institutionId,
            enrollmentId,
            lessonId: seedId(institutionId, 'algebra', key),
            studentId: first,
            completed: true,
            completedAt: now,
            progressPercent: 100,
            updatedAt: now,
          })
          .onConflictDoNothing();
      }
      await tx
        .update(enrollments)
        .set({ progress: 40, lastAccessedAt: now })
        .where(and(eq(enrollments.id, enrollmentId), eq(enrollments.progress, 0)));
    }
  });
  if (media) await seedCaptions(db, media.storage, institutionId, ownerId, now);
  return { institutionId, courses: COURSES.length, lessons: lessonCount, enrollments: enrollmentCount, created };
}

async function seedAssignment(db: Db, institutionId: string, now: Date) {
  const id = seedId(institutionId, 'algebra', 'assignment');
  const a = ALGEBRA_ASSIGNMENT;
  await db
    .insert(assignments)
    .values({
      id,
      institutionId,
      courseId: seedId(institutionId, 'algebra'),
      title: a.title,
      instructions: a.instructions,
      maxScore: a.maxScore,
      passingScore: a.passingScore,
      dueDate: new Date(now.getTime() + 14 * 86_400_000),
      allowLate: true,
      isPeerAssessed: true,
      peerReviewCount: a.peerReviewCount,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing();
  const rubricId = seedId(institutionId, 'algebra', 'rubric');
  await db.insert(rubrics).values({ id: rubricId, institutionId, assignmentId: id, title: a.rubric.title, createdAt: now, updatedAt: now }).onConflictDoNothing();
  for (const [order, c] of a.rubric.criteria.entries()) {
    await db
      .insert(rubricCriteria)
      .values({ id: seedId(institutionId, 'algebra', 'criterion', c.key), institutionId, rubricId, title: c.title, description: c.description, maxPoints: c.maxPoints, order })
      .onConflictDoNothing();
  }
}

/** Caption files are written once under fixed keys (storage objects are immutable), then their rows. */
async function seedCaptions(db: Db, storage: Storage, institutionId: string, ownerId: string, now: Date) {
  const lessonId = seedId(institutionId, 'algebra', 'welcome');
  for (const c of WELCOME_CAPTIONS) {
    const key = `${tenantSegment(institutionId)}/captions/seed-welcome-${c.language}.vtt`;
    if (!(await storage.exists(key))) await storage.put(key, Buffer.from(c.vtt, 'utf8'), 'text/vtt');
    await db
      .insert(captionTracks)
      .values({
        id: seedId(institutionId, 'algebra', 'welcome', 'captions', c.language),
        institutionId,
        lessonId,
        blockId: null,
        language: c.language,
        label: c.label,
        storageKey: key,
        isDefault: c.isDefault,
        createdAt: now,
        createdBy: ownerId,
      })
      .onConflictDoNothing();
  }
}

/** Seed every simulator institution (npm start on first run, `lms seed`). */
export async function seedDemo(db: Db, clock: Clock = systemClock, media?: SeedMedia): Promise<SeedResult[]> {
  const results: SeedResult[] = [];
  for (const inst of CRM_INSTITUTIONS) results.push(await seedInstitution(db, clock, inst.id, undefined, media));
  return results;
}

export async function runSeedCli(config: Config) {
  if (config.isProduction) throw new Error('lms seed refuses to run with NODE_ENV=production');
  // Full dependencies: the SCORM lesson's demo package goes to storage through the upload service.
  const { createDeps } = await import('../platform/bootstrap.js');
  const { seedScormPackages } = await import('./scorm-demo.js');
  const deps = await createDeps(config);
  try {
    await deps.database.migrate();
    for (const r of await seedDemo(deps.database.db)) {
      const packages = await seedScormPackages(deps, r.institutionId);
      console.log(
        `[lms] seeded ${r.institutionId}: ${r.courses} courses, ${r.lessons} lessons, ${r.enrollments} enrollments${r.created ? '' : ' (already present)'}, ${packages} SCORM package(s)`,
      );
    }
  } finally {
    await deps.mailer.close();
    await deps.recorder.close();
    await deps.database.close();
  }
}
