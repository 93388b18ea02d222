import { and, asc, desc, eq, gte, isNull, sql } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { inTenant, sameTenantRef } from '../../platform/db/tenancy.js';
import { requireAccess } from '../access/access.service.js';
import type { CrmChild } from '../../platform/crm/types.js';
import { courses, lessons } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';
import { certificates } from '../certificates/certificates.tables.js';
import { refreshProvisionalPdfs } from '../certificates/certificates.service.js';
import { assignments, submissions } from '../assignments/assignments.tables.js';
import { liveClassesOf } from './parent.live.js';
import { totalsOf } from '../gamification/gamification.service.js';
import { passedCourse } from '../progress/completion.js';

/** Spec 8: recent grades 10; upcoming assignments and live classes 5 each. */
export const RECENT_GRADES = 10;
export const UPCOMING = 5;

const childDto = (ctx: ServiceContext, c: CrmChild) => ({
  contactId: c.contactId,
  studentId: c.studentId,
  name: c.name,
  email: c.email,
  studentCode: c.studentCode,
  class: c.class,
  section: c.section,
  photoUrl: c.photoUrl,
  status: c.status,
  relation: c.relation,
  isPrimary: c.isPrimary,
  institutionId: ctx.institutionId,
});

/** GET /api/parent/children: read fresh from the CRM on every call. */
export async function listChildren(ctx: ServiceContext) {
  const children = await requireAccess(ctx, 'parent.portal', null);
  return { children: children.map((c) => childDto(ctx, c)) };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** The collections and counts of a child with nothing recorded (spec 4.6 rule 6). */
const emptyOverview = () => ({
  courses: [],
  recentGrades: [],
  upcomingAssignments: [],
  liveClasses: { attendedThisMonth: 0, missedThisMonth: 0, upcoming: [] },
  gamification: { currentStreak: 0, longestStreak: 0, totalPoints: 0, totalBadges: 0 },
  certificates: [],
});

/**
 * GET /api/parent/children/{childId}/overview (spec 4.6). The children are re-read from the CRM
 * and a child not among them is 403; every query is filtered by the session's institution and
 * the child's contact id. A fixed number of queries, whatever the number of courses or grades.
 */
export async function childOverview(ctx: ServiceContext, childId: string) {
  const child = await requireAccess(ctx, 'parent.child', childId);
  const childBlock = {
    contactId: child.contactId,
    studentId: child.studentId,
    name: child.name,
    email: child.email,
    studentCode: child.studentCode,
    class: child.class,
    section: child.section,
    photoUrl: child.photoUrl,
    relation: child.relation,
  };
  // Rule 6: a child with no portal Contact row yet has nothing here (every record is keyed by the Contact id).
  if (child.contactId === null) return { child: childBlock, ...emptyOverview() };
  const contactId = child.contactId;
  const now = ctx.clock.now();
  const mine = and(inTenant(ctx, enrollments), eq(enrollments.studentId, contactId));

  const [courseRows, grades, upcoming, certs, live, game] = await Promise.all([
    ctx.db
      .select({
        enrollment: enrollments,
        course: courses,
        totalLessons: sql<number>`(select count(*)::int from ${lessons} where ${lessons.institutionId} = ${courses.institutionId} and ${lessons.courseId} = ${courses.id})`,
        lessonMinutes: sql<
          number | null
        >`(select (sum(${lessons.durationSeconds}) / 60.0)::float8 from ${lessons} where ${lessons.institutionId} = ${courses.institutionId} and ${lessons.courseId} = ${courses.id})`,
      })
      .from(enrollments)
      .innerJoin(courses, sameTenantRef(enrollments.courseId, enrollments.institutionId, courses))
      .where(mine)
      .orderBy(desc(enrollments.enrolledAt), desc(enrollments.id)),
    ctx.db
      .select({ submission: submissions, assignment: assignments, courseTitle: courses.title })
      .from(submissions)
      .innerJoin(assignments, sameTenantRef(submissions.assignmentId, submissions.institutionId, assignments))
      .innerJoin(courses, sameTenantRef(assignments.courseId, assignments.institutionId, courses))
      .where(and(inTenant(ctx, submissions), eq(submissions.studentId, contactId), eq(submissions.status, 'GRADED')))
      .orderBy(desc(submissions.gradedAt), desc(submissions.id))
      .limit(RECENT_GRADES),
    ctx.db
      .select({ assignment: assignments, courseTitle: courses.title })
      .from(assignments)
      .innerJoin(courses, sameTenantRef(assignments.courseId, assignments.institutionId, courses))
      .innerJoin(
        enrollments,
        and(
          eq(enrollments.institutionId, assignments.institutionId),
          eq(enrollments.courseId, assignments.courseId),
          eq(enrollments.studentId, contactId),
          eq(enrollments.status, 'ACTIVE'),
        ),
      )
      .leftJoin(submissions, and(eq(submissions.institutionId, assignments.institutionId), eq(submissions.assignmentId, assignments.id), eq(submissions.studentId, contactId)))
      // Rule 4: of ACTIVE enrollments in PUBLISHED courses (an archived or unpublished course's work is not upcoming).
      .where(and(inTenant(ctx, assignments), eq(courses.status, 'PUBLISHED'), gte(assignments.dueDate, now), isNull(submissions.id)))
      .orderBy(asc(assignments.dueDate), asc(assignments.id))
      .limit(UPCOMING),
    ctx.db
      .select()
      .from(certificates)
      .where(and(inTenant(ctx, certificates), eq(certificates.studentId, contactId)))
      .orderBy(desc(certificates.issuedAt)),
    liveClassesOf(ctx, contactId, UPCOMING),
    totalsOf(ctx, contactId),
  ]);

  await refreshProvisionalPdfs(ctx, certs);
  return {
    child: childBlock,
    courses: courseRows.map(({ enrollment: e, course: c, totalLessons, lessonMinutes }) => ({
      enrollmentId: e.id,
      courseId: c.id,
      courseTitle: c.title,
      thumbnailUrl: c.thumbnailUrl,
      progress: e.progress,
      status: e.status,
      finalScore: e.finalScore,
      // A COMPLETED course passed as it earns its certificate (passedCourse); one still running: against the score so far, if any.
      passed: e.status === 'COMPLETED' ? passedCourse(c, e.finalScore) : e.finalScore === null || c.passingScore === null ? null : e.finalScore >= c.passingScore,
      lastAccessedAt: iso(e.lastAccessedAt),
      completedAt: iso(e.completedAt),
      totalLessons: Number(totalLessons),
      estimatedDuration: c.estimatedDuration ?? (lessonMinutes === null ? null : Math.round(Number(lessonMinutes))),
    })),
    recentGrades: grades.map(({ submission: s, assignment: a, courseTitle }) => {
      // The final score when there is one, else the instructor's, else the peer average; null
      // when none is known, and then percentage and passed are unknown too (never a made-up 0).
      const score = s.score ?? s.instructorScore ?? s.peerScoreAverage ?? null;
      return {
        submissionId: s.id,
        assignmentId: a.id,
        assignmentName: a.title,
        courseId: a.courseId,
        courseTitle,
        score,
        maxScore: a.maxScore,
        passingScore: a.passingScore,
        percentage: score !== null && a.maxScore > 0 ? round2((score / a.maxScore) * 100) : null,
        // Without a passing score there is no pass mark to meet: unknown (null), as for courses without a score.
        passed: score === null || a.passingScore === null ? null : score >= a.passingScore,
        gradedAt: iso(s.gradedAt),
        status: s.status,
      };
    }),
    upcomingAssignments: upcoming.map(({ assignment: a, courseTitle }) => ({
      assignmentId: a.id,
      title: a.title,
      courseId: a.courseId,
      courseTitle,
      dueDate: iso(a.dueDate),
      maxScore: a.maxScore,
    })),
    liveClasses: live,
    gamification: { currentStreak: game.currentStreak, longestStreak: game.longestStreak, totalPoints: game.totalPoints, totalBadges: game.totalBadges },
    certificates: await Promise.all(
      certs.map(async (c) => ({
        id: c.id,
        certificateNumber: c.certificateNumber,
        verificationCode: c.verificationCode,
        courseTitle: c.courseTitle,
        issuedAt: iso(c.issuedAt),
        expiresAt: iso(c.expiresAt),
        pdfUrl: c.pdfKey ? await ctx.storage.urlFor(c.pdfKey) : null,
      })),
    ),
  };
}
