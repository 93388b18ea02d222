/**
 * Row factories for tests: insert courses, lessons and enrollments straight through Drizzle
 * (for domains whose tests need them before, or without, the course API). Every factory takes
 * anything with `db` and `clock` (a TestApp), fills sensible defaults, accepts overrides of any
 * column, and returns the inserted row.
 */
import { eq } from 'drizzle-orm';
import type { Clock } from '../../src/platform/clock.js';
import type { Db } from '../../src/platform/db/client.js';
import { newId } from '../../src/platform/ids.js';
import { courses, lessons, type Course, type Lesson } from '../../src/modules/courses/courses.tables.js';
import { enrollments, type Enrollment } from '../../src/modules/enrollments/enrollments.tables.js';
import { DEMO_INSTITUTION } from '../../src/dev/crm-sim/fixtures.js';

export interface FactoryContext {
  db: Db;
  clock: Clock;
}

type CourseInsert = typeof courses.$inferInsert;
type LessonInsert = typeof lessons.$inferInsert;
type EnrollmentInsert = typeof enrollments.$inferInsert;

/** A PUBLISHED course of the demo institution unless told otherwise. */
export async function createCourse(t: FactoryContext, input: Partial<CourseInsert> & { institutionId?: string; ownerId?: string } = {}): Promise<Course> {
  const now = t.clock.now();
  const [row] = await t.db
    .insert(courses)
    .values({
      id: newId(),
      institutionId: DEMO_INSTITUTION.id,
      ownerId: 'u_demo_teacher',
      title: 'Test course',
      status: 'PUBLISHED',
      publishedAt: now,
      createdAt: now,
      updatedAt: now,
      ...input,
    })
    .returning();
  return row!;
}

/** A TEXT lesson of `courseId` (institution taken from the course unless given), order 1. */
export async function createLesson(t: FactoryContext, input: Partial<LessonInsert> & { courseId: string }): Promise<Lesson> {
  const institutionId = input.institutionId ?? (await institutionOfCourse(t, input.courseId));
  const now = t.clock.now();
  const [row] = await t.db
    .insert(lessons)
    .values({
      id: newId(),
      title: 'Test lesson',
      type: 'TEXT',
      order: 1,
      createdAt: now,
      updatedAt: now,
      ...input,
      institutionId,
    })
    .returning();
  return row!;
}

/** An ACTIVE enrollment of `studentId` in `courseId` (institution taken from the course unless given). */
export async function enroll(t: FactoryContext, input: Partial<EnrollmentInsert> & { courseId: string; studentId: string }): Promise<Enrollment> {
  const institutionId = input.institutionId ?? (await institutionOfCourse(t, input.courseId));
  const now = t.clock.now();
  const status = input.status ?? 'ACTIVE';
  const [row] = await t.db
    .insert(enrollments)
    .values({
      id: newId(),
      enrolledAt: now,
      updatedAt: now,
      ...(status === 'DROPPED' ? { droppedAt: now } : {}),
      ...(status === 'COMPLETED' ? { completedAt: now, progress: 100 } : {}),
      ...input,
      status,
      institutionId,
    })
    .returning();
  return row!;
}

async function institutionOfCourse(t: FactoryContext, courseId: string): Promise<string> {
  const [course] = await t.db.select({ institutionId: courses.institutionId }).from(courses).where(eq(courses.id, courseId));
  if (!course) throw new Error(`factories: course ${courseId} does not exist`);
  return course.institutionId;
}
