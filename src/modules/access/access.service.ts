/**
 * Who may do what: every "may this caller do X to Y" rule of the service, in one place
 * (DESIGN.md §3). Services call `requireAccess(ctx, action, target)` before they touch data;
 * it loads what the rule needs with set queries, throws the spec's error when the answer is
 * no, and hands back what it loaded so the service does not load it again. The README's
 * "Access rules" table lists every action.
 *
 * Errors follow one policy: a record the caller may not know about is 404 NOT_FOUND (nothing
 * about it leaks); a record the caller may see but not change is 403 FORBIDDEN; a learner
 * without the enrollment an action needs is 403 ENROLLMENT_REQUIRED; a drip-locked lesson is
 * 403 LESSON_LOCKED; a fee-gated student is 402 FEE_OVERDUE.
 */
import { alias } from 'drizzle-orm/pg-core';
import { and, asc, eq, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { canManageCourses, canManageSession, isAdmin, isOwnerOrAdmin } from '../../platform/auth/permissions.js';
import { AppError, forbidden, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/dto.js';
import { byId, inTenant, sameTenantRef } from '../../platform/db/tenancy.js';
import { courseModules, courses, lessons, type Course, type CourseModule, type Lesson } from '../courses/courses.tables.js';
import { enrollments, lessonProgress, type Enrollment, type LessonProgress } from '../enrollments/enrollments.tables.js';
import { assertFeesAllow } from '../institutions/fee-gating.js';
import { getSettings, requireInstitutionSlug } from '../institutions/institutions.service.js';
import { lessonLocks, orderedLessons, type LockState, type PathPrerequisite } from '../learn/drip.js';
import { learningPathCourses, learningPathEnrollments, learningPaths, type LearningPath } from '../learning-paths/learning-paths.tables.js';
import { holdsBack } from '../learning-paths/learning-paths.rule.js';
import { peerReviews, type PeerReview } from '../assignments/assignments.tables.js';
import { liveSessions, type LiveSession } from '../live-sessions/live-sessions.tables.js';
import { announcements, type Announcement } from '../announcements/announcements.tables.js';
import { discussionReplies, discussionThreads, type DiscussionReply, type DiscussionThread } from '../discussions/discussions.tables.js';
import {
  analyticsReportAlerts,
  analyticsReports,
  analyticsReportSchedules,
  type AnalyticsReport,
  type AnalyticsReportAlert,
  type AnalyticsReportSchedule,
} from '../analytics/analytics.tables.js';

export interface LessonAccess {
  lesson: Lesson;
  course: Course;
  /** The caller's own enrollment in the lesson's course (any status), or null. */
  enrollment: Enrollment | null;
}

/** What a learner's view of one course needs: reading order, progress and drip locks. */
export interface CourseState {
  modules: CourseModule[];
  ordered: Lesson[];
  progressByLesson: Map<string, LessonProgress>;
  completed: Set<string>;
  locks: Map<string, LockState>;
}

const OPEN: LockState = { locked: false, unlocksAt: null, reason: null };
/** The courses before a course on the same learning path. */
const earlier = alias(learningPathCourses, 'earlier_path_courses');

// ── loading ────────────────────────────────────────────────────────────────────

async function loadCourse(ctx: ServiceContext, courseId: string): Promise<Course> {
  const [course] = await ctx.db
    .select()
    .from(courses)
    .where(byId(ctx, courses, courseId))
    .limit(1);
  if (!course) throw notFound('Course');
  return course;
}

/** The caller's enrollment in a course (any status), or null. */
export async function ownEnrollment(ctx: ServiceContext, courseId: string): Promise<Enrollment | null> {
  const [row] = await ctx.db
    .select()
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.courseId, courseId), eq(enrollments.studentId, ctx.actor.personId)))
    .limit(1);
  return row ?? null;
}

/** A lesson of the caller's institution with its course and the caller's enrollment: one query. */
async function loadLesson(ctx: ServiceContext, lessonId: string): Promise<LessonAccess> {
  const [row] = await ctx.db
    .select({ lesson: lessons, course: courses, enrollment: enrollments })
    .from(lessons)
    .innerJoin(courses, sameTenantRef(lessons.courseId, lessons.institutionId, courses))
    .leftJoin(enrollments, and(eq(enrollments.institutionId, lessons.institutionId), eq(enrollments.courseId, lessons.courseId), eq(enrollments.studentId, ctx.actor.personId)))
    .where(byId(ctx, lessons, lessonId))
    .limit(1);
  if (!row) throw notFound('Lesson');
  return row;
}

/**
 * Whether the caller may know that a course (or a lesson of it) exists: managers always; anyone
 * else when it is PUBLISHED or they have an enrollment in it (any status). A draft or archived
 * course they never joined is 404, exactly as an id that does not exist, on every route.
 */
const mayKnowCourse = (ctx: ServiceContext, course: Course, enrollment: Enrollment | null) => canManageCourses(ctx.actor) || course.status === 'PUBLISHED' || enrollment !== null;

/** `loadLesson`, for a lesson the caller may know about (`mayKnowCourse`); anyone else gets 404. */
async function knownLesson(ctx: ServiceContext, lessonId: string): Promise<LessonAccess> {
  const found = await loadLesson(ctx, lessonId);
  if (!mayKnowCourse(ctx, found.course, found.enrollment)) throw notFound('Lesson');
  return found;
}

/**
 * Modules, lessons in reading order, the learner's progress and the drip locks of one course:
 * three set queries whatever the course's size. Course managers previewing without an
 * enrollment see everything unlocked.
 */
export async function courseState(ctx: ServiceContext, course: Course, enrollment: Enrollment | null): Promise<CourseState> {
  const [mods, ls, progress] = await Promise.all([
    ctx.db
      .select()
      .from(courseModules)
      .where(and(inTenant(ctx, courseModules), eq(courseModules.courseId, course.id)))
      .orderBy(asc(courseModules.order), asc(courseModules.createdAt)),
    ctx.db
      .select()
      .from(lessons)
      .where(and(inTenant(ctx, lessons), eq(lessons.courseId, course.id))),
    enrollment
      ? ctx.db
          .select()
          .from(lessonProgress)
          .where(and(inTenant(ctx, lessonProgress), eq(lessonProgress.enrollmentId, enrollment.id)))
      : Promise.resolve([] as LessonProgress[]),
  ]);
  const ordered = orderedLessons(mods, ls);
  const completed = new Set(progress.filter((p) => p.completed).map((p) => p.lessonId));
  const prerequisite = await pathPrerequisite(ctx, course, enrollment);
  const locks =
    canManageCourses(ctx.actor) && !enrollment
      ? new Map(ordered.map((l) => [l.id, OPEN]))
      : prerequisite
        ? new Map(ordered.map((l): [string, LockState] => [l.id, { locked: true, unlocksAt: null, reason: 'PREREQUISITE', prerequisite }]))
        : lessonLocks(ordered, { dripMode: course.dripMode, enrolledAt: enrollment?.enrolledAt ?? null, completed, now: ctx.clock.now() });
  return { modules: mods, ordered, progressByLesson: new Map(progress.map((p) => [p.lessonId, p])), completed, locks };
}

/**
 * A learning path's order as prerequisites: an ACTIVE enrollment made by a path is locked while
 * a course before it on that path holds it back (`holdsBack`: not completed by the learner and
 * can still be, PUBLISHED or the learner is ACTIVE in it). Answers the first such course
 * (one query), or null (no path enrollment, or everything before it completed).
 */
async function pathPrerequisite(ctx: ServiceContext, course: Course, enrollment: Enrollment | null): Promise<PathPrerequisite | null> {
  if (!enrollment?.learningPathId || enrollment.status !== 'ACTIVE') return null;
  const rows = await ctx.db
    .select({ courseId: courses.id, courseTitle: courses.title, courseStatus: courses.status, enrollmentStatus: enrollments.status })
    .from(learningPathCourses)
    .innerJoin(
      earlier,
      and(eq(earlier.institutionId, learningPathCourses.institutionId), eq(earlier.pathId, learningPathCourses.pathId), lt(earlier.position, learningPathCourses.position)),
    )
    .innerJoin(courses, sameTenantRef(earlier.courseId, earlier.institutionId, courses))
    .leftJoin(enrollments, and(eq(enrollments.institutionId, earlier.institutionId), eq(enrollments.courseId, earlier.courseId), eq(enrollments.studentId, enrollment.studentId)))
    .where(and(inTenant(ctx, learningPathCourses), eq(learningPathCourses.pathId, enrollment.learningPathId), eq(learningPathCourses.courseId, course.id)))
    .orderBy(asc(earlier.position));
  // The path view's lock and progress apply the same rule (learning-paths.rule.ts).
  const first = rows.find((r) => holdsBack(r.courseStatus, r.enrollmentStatus));
  return first ? { learningPathId: enrollment.learningPathId, courseId: first.courseId, courseTitle: first.courseTitle } : null;
}

export function lockedError(lock: LockState) {
  if (lock.reason === 'PREREQUISITE' && lock.prerequisite) {
    return new AppError('LESSON_LOCKED', `Complete "${lock.prerequisite.courseTitle}" first: it comes before this course on your learning path`, {
      unlocksAt: null,
      reason: lock.reason,
      prerequisiteCourseId: lock.prerequisite.courseId,
      prerequisiteCourseTitle: lock.prerequisite.courseTitle,
      learningPathId: lock.prerequisite.learningPathId,
    });
  }
  return new AppError('LESSON_LOCKED', lock.reason === 'SEQUENTIAL' ? 'Complete the previous lesson first' : 'This lesson is not unlocked yet', {
    unlocksAt: iso(lock.unlocksAt),
    reason: lock.reason,
  });
}

// ── rules ──────────────────────────────────────────────────────────────────────

/** A learner's enrollment that lets them into a course's content: ACTIVE or COMPLETED. */
const admits = (e: Enrollment | null): e is Enrollment => !!e && e.status !== 'DROPPED';

function requireEnrolled(enrollment: Enrollment | null): Enrollment {
  if (!admits(enrollment)) throw new AppError('ENROLLMENT_REQUIRED', 'You must be enrolled in this course');
  return enrollment;
}

function requireAuthor(ctx: ServiceContext, course: Course) {
  if (!canManageCourses(ctx.actor)) throw forbidden('Course authoring requires canManageCourses');
  if (!isOwnerOrAdmin(ctx.actor, course.ownerId)) throw forbidden('Only the owner of this course or an administrator may change it');
}

/** Learners see published courses and those they have an enrollment in; managers see all. */
async function viewCourse(ctx: ServiceContext, courseId: string): Promise<Course> {
  const course = await loadCourse(ctx, courseId);
  if (canManageCourses(ctx.actor) || course.status === 'PUBLISHED') return course;
  if (!(await ownEnrollment(ctx, course.id))) throw notFound('Course');
  return course;
}

/**
 * Opening a lesson's content (and what hangs off it: captions, transcripts, block answers,
 * learner events): course managers always; a learner with an ACTIVE or COMPLETED enrollment,
 * whose fees are not overdue (when the institution gates on fees) and for whom the lesson is
 * not drip-locked.
 */
async function openLesson(ctx: ServiceContext, lessonId: string): Promise<LessonAccess & { state: CourseState | null }> {
  const found = await knownLesson(ctx, lessonId);
  if (canManageCourses(ctx.actor)) return { ...found, state: null };
  const enrollment = requireEnrolled(found.enrollment);
  await assertFeesAllow(ctx, 'opening lesson content');
  const state = await courseState(ctx, found.course, enrollment);
  const lock = state.locks.get(found.lesson.id);
  if (lock?.locked) throw lockedError(lock);
  return { ...found, enrollment, state };
}

/**
 * A parent Contact's children, read fresh from the CRM (never cached): 403 for anyone who is
 * not a parent Contact, 400 for a parent session without contactId, and 500 INTERNAL_ERROR
 * when the CRM fails (spec 4.6 rule 7), not the 502 other CRM failures give.
 */
async function parentChildren(ctx: ServiceContext) {
  const a = ctx.actor;
  if (!a.isContact || a.contactType !== 'CONTACT_PARENT') throw forbidden('Only parent accounts can see children');
  if (!a.contactId) throw new AppError('VALIDATION_ERROR', 'The session has no contactId');
  try {
    const slug = await requireInstitutionSlug(ctx, ctx.institutionId);
    return await ctx.crm.getParentChildren(slug, a.contactId);
  } catch (err) {
    if (err instanceof AppError && (err.status === 502 || err.status === 503)) {
      ctx.log.warn({ err }, 'parent portal: the CRM did not answer');
      throw new AppError('INTERNAL_ERROR', 'The student records are not available right now');
    }
    throw err;
  }
}

/** A live session of the caller's institution with its course and the caller's enrollment: one query. */
export interface LiveSessionAccess {
  session: LiveSession;
  course: Course;
  enrollment: Enrollment | null;
}

async function loadLiveSession(ctx: ServiceContext, sessionId: string): Promise<LiveSessionAccess> {
  const [row] = await ctx.db
    .select({ session: liveSessions, course: courses, enrollment: enrollments })
    .from(liveSessions)
    .innerJoin(courses, sameTenantRef(liveSessions.courseId, liveSessions.institutionId, courses))
    .leftJoin(
      enrollments,
      and(eq(enrollments.institutionId, liveSessions.institutionId), eq(enrollments.courseId, liveSessions.courseId), eq(enrollments.studentId, ctx.actor.personId)),
    )
    .where(byId(ctx, liveSessions, sessionId))
    .limit(1);
  if (!row) throw notFound('Live session');
  return row;
}

/** Who may know a live session: managers, its host, and learners with an ACTIVE or COMPLETED enrollment in its course. */
const mayViewLiveSession = (ctx: ServiceContext, found: LiveSessionAccess) =>
  canManageCourses(ctx.actor) || found.session.hostId === ctx.actor.personId || admits(found.enrollment);

/** Loads a live session the caller may know about; anyone else gets 404. */
async function viewLiveSession(ctx: ServiceContext, sessionId: string): Promise<LiveSessionAccess> {
  const found = await loadLiveSession(ctx, sessionId);
  if (!mayViewLiveSession(ctx, found)) throw notFound('Live session');
  return found;
}

/**
 * The live sessions the caller may list, as a predicate on `live_sessions` (undefined: all of
 * the institution, for managers): those they host and those of courses where they have an
 * ACTIVE or COMPLETED enrollment.
 */
export function visibleLiveSessions(ctx: ServiceContext): SQL | undefined {
  if (canManageCourses(ctx.actor)) return undefined;
  const ownCourses = ctx.db
    .select({ courseId: enrollments.courseId })
    .from(enrollments)
    .where(and(inTenant(ctx, enrollments), eq(enrollments.studentId, ctx.actor.personId), inArray(enrollments.status, ['ACTIVE', 'COMPLETED'])));
  return or(eq(liveSessions.hostId, ctx.actor.personId), inArray(liveSessions.courseId, ownCourses)) ?? sql`false`;
}

/** Learner writes on a lesson: the open rule, and an enrollment (a manager previewing has none). */
async function learnLesson(ctx: ServiceContext, lessonId: string): Promise<LessonAccess & { state: CourseState | null; enrollment: Enrollment }> {
  const opened = await openLesson(ctx, lessonId);
  return { ...opened, enrollment: requireEnrolled(opened.enrollment) };
}

/** Who takes part in a course's community (announcements, discussions): its staff, or a learner admitted to it. */
export interface CommunityAccess {
  course: Course;
  /** The caller's ACTIVE or COMPLETED enrollment (null for staff). */
  enrollment: Enrollment | null;
  /** canManageCourses: sees hidden posts and every announcement, moderates. */
  manager: boolean;
}

/**
 * Course staff (canManageCourses), or a learner with an ACTIVE or COMPLETED enrollment. Anyone
 * else: 403 ENROLLMENT_REQUIRED when they may know the course (published, or they had an
 * enrollment), else 404.
 */
async function joinCommunity(ctx: ServiceContext, course: Course, enrollment?: Enrollment | null): Promise<CommunityAccess> {
  if (canManageCourses(ctx.actor)) return { course, enrollment: null, manager: true };
  const own = enrollment === undefined ? await ownEnrollment(ctx, course.id) : enrollment;
  if (admits(own)) return { course, enrollment: own, manager: false };
  if (course.status !== 'PUBLISHED' && !own) throw notFound('Course');
  throw new AppError('ENROLLMENT_REQUIRED', 'Only students enrolled in this course and its staff take part in its discussions and announcements');
}

async function loadThread(ctx: ServiceContext, threadId: string): Promise<DiscussionThread> {
  const [thread] = await ctx.db
    .select()
    .from(discussionThreads)
    .where(byId(ctx, discussionThreads, threadId))
    .limit(1);
  if (!thread) throw notFound('Discussion');
  return thread;
}

/** A thread the caller may read: a member of its course's community; a hidden thread only for staff (404 otherwise). */
async function viewThread(ctx: ServiceContext, threadId: string) {
  const thread = await loadThread(ctx, threadId);
  const access = await joinCommunity(ctx, await loadCourse(ctx, thread.courseId));
  if (thread.isHidden && !access.manager) throw notFound('Discussion');
  return { ...access, thread };
}

/** A reply the caller may read, with its thread: hidden ones (or in a hidden thread) only for staff. */
async function viewReply(ctx: ServiceContext, replyId: string) {
  const [reply] = await ctx.db
    .select()
    .from(discussionReplies)
    .where(byId(ctx, discussionReplies, replyId))
    .limit(1);
  if (!reply) throw notFound('Reply');
  const access = await viewThread(ctx, reply.threadId).catch((err: unknown) => {
    throw err instanceof AppError && err.code === 'NOT_FOUND' ? notFound('Reply') : err;
  });
  if (reply.isHidden && !access.manager) throw notFound('Reply');
  return { ...access, reply: reply as DiscussionReply };
}

/**
 * Self-enrollment (in a course, or on a learning path): the institution allows it (403), and
 * the student's fees allow it when the institution gates on fees (402 FEE_OVERDUE).
 */
async function requireSelfEnrollment(ctx: ServiceContext) {
  const settings = await getSettings(ctx.db, ctx.institutionId);
  if (!settings.allowSelfEnrollment) throw forbidden('Self-enrollment is turned off for this institution');
  await assertFeesAllow(ctx, 'enrollment');
}

/** Learners see PUBLISHED learning paths and the ones they are on; managers see all (anything else: 404). */
async function viewLearningPath(ctx: ServiceContext, pathId: string): Promise<LearningPath> {
  const [path] = await ctx.db
    .select()
    .from(learningPaths)
    .where(byId(ctx, learningPaths, pathId))
    .limit(1);
  if (!path) throw notFound('Learning path');
  if (canManageCourses(ctx.actor) || path.status === 'PUBLISHED') return path;
  const [mine] = await ctx.db
    .select({ id: learningPathEnrollments.id })
    .from(learningPathEnrollments)
    .where(and(inTenant(ctx, learningPathEnrollments), eq(learningPathEnrollments.pathId, pathId), eq(learningPathEnrollments.studentId, ctx.actor.personId)));
  if (!mine) throw notFound('Learning path');
  return path;
}

/**
 * The learning paths the caller may list, as a predicate on `learning_paths` (undefined: all
 * of the institution, for managers): PUBLISHED ones and the ones they are on.
 */
export function visibleLearningPaths(ctx: ServiceContext): SQL | undefined {
  if (canManageCourses(ctx.actor)) return undefined;
  const mine = sql`exists (select 1 from ${learningPathEnrollments} where ${learningPathEnrollments.institutionId} = ${learningPaths.institutionId} and ${learningPathEnrollments.pathId} = ${learningPaths.id} and ${learningPathEnrollments.studentId} = ${ctx.actor.personId})`;
  return or(eq(learningPaths.status, 'PUBLISHED'), mine);
}

function requirePostAuthor(ctx: ServiceContext, post: { authorId: string; deletedAt: Date | null }, what: string) {
  if (post.deletedAt) throw notFound(what);
  if (post.authorId !== ctx.actor.personId) throw forbidden(`Only the author may change this ${what.toLowerCase()}`);
}

/**
 * Analytics is for the institution's staff: the TEACHER and ADMIN roles (not the
 * canManageCourses claim alone, which is about authoring). A teacher reports on the whole
 * institution, as course staff already see every course's enrollments and grades.
 */
function requireAnalyticsStaff(ctx: ServiceContext) {
  if (ctx.actor.role !== 'TEACHER' && ctx.actor.role !== 'ADMIN') throw forbidden('Analytics is available to teachers and administrators');
}

/** A saved report the caller may see: their own, a SHARED one, or any for ADMIN; anyone else 404. */
async function viewReport(ctx: ServiceContext, reportId: string): Promise<AnalyticsReport> {
  requireAnalyticsStaff(ctx);
  const [report] = await ctx.db
    .select()
    .from(analyticsReports)
    .where(byId(ctx, analyticsReports, reportId))
    .limit(1);
  if (!report || !(report.ownerId === ctx.actor.personId || report.visibility === 'SHARED' || isAdmin(ctx.actor))) throw notFound('Report');
  return report;
}

/** Change a saved report (and its schedules and alerts): its owner or ADMIN; other staff who see it 403. */
async function editReport(ctx: ServiceContext, reportId: string): Promise<AnalyticsReport> {
  const report = await viewReport(ctx, reportId);
  if (!isOwnerOrAdmin(ctx.actor, report.ownerId)) throw forbidden('Only the owner of this report or an administrator may change it');
  return report;
}

/** The rules, by action. Each takes its target and returns what it loaded. */
const rules = {
  /** Create courses and categories: canManageCourses. */
  'catalog.author': async (ctx: ServiceContext, _target: null) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Course authoring requires canManageCourses');
    return null;
  },
  /** See a course and its outline. */
  'course.view': (ctx: ServiceContext, courseId: string) => viewCourse(ctx, courseId),
  /** Follow a course as a learner (navigation with progress and locks): managers, or an ACTIVE or COMPLETED enrollment. */
  'course.learn': async (ctx: ServiceContext, courseId: string) => {
    const course = await loadCourse(ctx, courseId);
    const enrollment = await ownEnrollment(ctx, course.id);
    if (!mayKnowCourse(ctx, course, enrollment)) throw notFound('Course');
    if (canManageCourses(ctx.actor)) return { course, enrollment: admits(enrollment) ? enrollment : null };
    return { course, enrollment: requireEnrolled(enrollment) as Enrollment | null };
  },
  /**
   * Enroll oneself in a course: students only (403), in a PUBLISHED course (404 otherwise), not
   * already in it (409 ALREADY_ENROLLED), when the institution allows self-enrollment (403) and
   * the student's fees allow it (402).
   */
  'course.selfEnroll': async (ctx: ServiceContext, courseId: string) => {
    if (ctx.actor.role !== 'STUDENT') throw forbidden('Only students can self-enroll');
    const course = await loadCourse(ctx, courseId);
    if (course.status !== 'PUBLISHED') throw notFound('Course');
    // Already in (ACTIVE or COMPLETED) says so first: fees and the institution's setting are about joining.
    const own = await ownEnrollment(ctx, course.id);
    if (own && own.status !== 'DROPPED') throw new AppError('ALREADY_ENROLLED', 'You are already enrolled in this course');
    await requireSelfEnrollment(ctx);
    return course;
  },
  /** Change a course, its modules and lessons: canManageCourses and the owner, or ADMIN. */
  'course.author': async (ctx: ServiceContext, courseId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Course authoring requires canManageCourses');
    const course = await loadCourse(ctx, courseId);
    requireAuthor(ctx, course);
    return course;
  },
  /** Course staff work (enrollment lists, bulk enrollment, copying a course): canManageCourses. */
  'course.staff': async (ctx: ServiceContext, courseId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('This action requires canManageCourses');
    return loadCourse(ctx, courseId);
  },
  /** Know that a lesson exists (its own notes and bookmarks): any user of the institution who may know its course (`mayKnowCourse`). */
  'lesson.view': (ctx: ServiceContext, lessonId: string) => knownLesson(ctx, lessonId),
  /** Open a lesson's content (see `openLesson`). */
  'lesson.open': (ctx: ServiceContext, lessonId: string) => openLesson(ctx, lessonId),
  /** Learner writes on a lesson (progress, events, interactions, answers): the open rule, and an enrollment. */
  'lesson.learn': (ctx: ServiceContext, lessonId: string) => learnLesson(ctx, lessonId),
  /** Create notes and bookmarks: an ACTIVE enrollment (spec 4.3; a DROPPED or COMPLETED one keeps what exists). */
  'lesson.annotate': async (ctx: ServiceContext, lessonId: string) => {
    const found = await knownLesson(ctx, lessonId);
    if (!found.enrollment || found.enrollment.status !== 'ACTIVE') {
      throw new AppError('ENROLLMENT_REQUIRED', 'An active enrollment in this course is required');
    }
    return { ...found, enrollment: found.enrollment };
  },
  /** Change or delete a lesson: as `course.author` on its course. */
  'lesson.author': async (ctx: ServiceContext, lessonId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Course authoring requires canManageCourses');
    const found = await loadLesson(ctx, lessonId);
    requireAuthor(ctx, found.course);
    return found;
  },
  /** Course staff work on one lesson (grading, submissions, attempts of everyone): canManageCourses. */
  'lesson.staff': async (ctx: ServiceContext, lessonId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('This action requires canManageCourses');
    return loadLesson(ctx, lessonId);
  },
  /**
   * Work on a peer review: only its assigned reviewer. Anyone else, staff included, gets 404:
   * the reviewer endpoints are anonymous and nothing says who reviews what (staff use the
   * moderation view).
   */
  'peerReview.review': async (ctx: ServiceContext, reviewId: string): Promise<PeerReview> => {
    const [review] = await ctx.db
      .select()
      .from(peerReviews)
      .where(and(byId(ctx, peerReviews, reviewId), eq(peerReviews.reviewerId, ctx.actor.personId)))
      .limit(1);
    if (!review) throw notFound('Peer review');
    return review;
  },
  /** Take a quiz (start an attempt, submit one): as `lesson.learn` on the QUIZ lesson. */
  'quiz.take': (ctx: ServiceContext, lessonId: string) => learnLesson(ctx, lessonId),
  /**
   * List a quiz's attempts: managers (any course of the institution) see every student's;
   * anyone else of the institution only their own (`staff` false), even without an enrollment now.
   */
  'quiz.attempts': async (ctx: ServiceContext, lessonId: string) => ({ ...(await knownLesson(ctx, lessonId)), staff: canManageCourses(ctx.actor) }),
  /** Upload, change and delete caption tracks: canManageCourses (spec 4.2 rule 1), any course of the institution. */
  'lesson.captions': async (ctx: ServiceContext, lessonId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Caption changes require canManageCourses');
    return loadLesson(ctx, lessonId);
  },
  /** Upload a SCORM lesson's package: as `lesson.author` (the course owner with canManageCourses, or ADMIN). */
  'scorm.upload': async (ctx: ServiceContext, lessonId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Uploading a SCORM package requires canManageCourses');
    const found = await loadLesson(ctx, lessonId);
    requireAuthor(ctx, found.course);
    return found;
  },
  /** Launch a SCORM lesson: as `lesson.open` (managers without an enrollment launch in browse mode, untracked). */
  'scorm.launch': (ctx: ServiceContext, lessonId: string) => openLesson(ctx, lessonId),
  /** Send tracking data of a SCORM lesson: as `lesson.learn` (an enrollment, fees, drip lock). */
  'scorm.track': (ctx: ServiceContext, lessonId: string) => learnLesson(ctx, lessonId),
  /**
   * Fetch a file of a SCORM lesson's package: anyone of the institution may name the lesson; the
   * service then requires the launch grant in the path, signed for the caller by a launch that
   * passed `scorm.launch` (else 404).
   */
  'scorm.content': (ctx: ServiceContext, lessonId: string) => knownLesson(ctx, lessonId),
  /** See one student's enrollment: course staff, or the student themself (anyone else: 404). */
  'enrollment.view': async (ctx: ServiceContext, target: { courseId: string; studentId: string }) => {
    if (!canManageCourses(ctx.actor) && ctx.actor.personId !== target.studentId) throw notFound('Enrollment');
    return loadCourse(ctx, target.courseId);
  },
  /** Drop an enrollment: course staff, or the student themself (anyone else: 404, as for `enrollment.view`). */
  'enrollment.drop': async (ctx: ServiceContext, target: { courseId: string; studentId: string }) => {
    if (!canManageCourses(ctx.actor) && ctx.actor.personId !== target.studentId) throw notFound('Enrollment');
    return loadCourse(ctx, target.courseId);
  },
  /** Schedule a live session in a course: canManageCourses (any course of the institution). */
  'liveSession.create': async (ctx: ServiceContext, courseId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Scheduling a live session requires canManageCourses');
    return loadCourse(ctx, courseId);
  },
  /** See a live session (detail, calendar file): managers, its host, learners with an ACTIVE or COMPLETED enrollment; anyone else 404. */
  'liveSession.view': (ctx: ServiceContext, sessionId: string) => viewLiveSession(ctx, sessionId),
  /**
   * Control a live session (start, end, recording, attendance marks): canManageSession, i.e. its
   * host or ADMIN (spec 5.1). Spec 4.5's order: a session not in the caller's institution is 404,
   * then anyone else in the institution who is not the host 403 (also one who may not see it).
   */
  'liveSession.manage': async (ctx: ServiceContext, sessionId: string) => {
    const found = await loadLiveSession(ctx, sessionId);
    if (canManageSession(ctx.actor, found.session.hostId)) return found;
    throw forbidden('Only the host of this live session or an administrator may do this');
  },
  /**
   * Join a live session: the host (or ADMIN) as HOST; a learner with an ACTIVE enrollment as
   * PARTICIPANT. A learner whose enrollment is COMPLETED gets 403 ENROLLMENT_REQUIRED, other
   * staff 403 FORBIDDEN, anyone else 404.
   */
  'liveSession.join': async (ctx: ServiceContext, sessionId: string) => {
    const found = await loadLiveSession(ctx, sessionId);
    if (canManageSession(ctx.actor, found.session.hostId)) return { ...found, role: 'HOST' as const };
    if (found.enrollment?.status === 'ACTIVE') return { ...found, role: 'PARTICIPANT' as const };
    if (!mayViewLiveSession(ctx, found)) throw notFound('Live session');
    if (canManageCourses(ctx.actor)) throw forbidden('Only the host, an administrator and enrolled students may join this live session');
    throw new AppError('ENROLLMENT_REQUIRED', 'An active enrollment in this course is required');
  },
  /** Sign up for a live session ahead: a learner with an ACTIVE enrollment in its course (staff 403, others 404). */
  'liveSession.register': async (ctx: ServiceContext, sessionId: string) => {
    const found = await loadLiveSession(ctx, sessionId);
    if (found.enrollment?.status === 'ACTIVE') return found;
    if (!mayViewLiveSession(ctx, found)) throw notFound('Live session');
    if (canManageCourses(ctx.actor) || found.session.hostId === ctx.actor.personId) throw forbidden('Only enrolled students register for a live session');
    throw new AppError('ENROLLMENT_REQUIRED', 'An active enrollment in this course is required');
  },
  /** Read a live session's attendance list: managers and its host; other learners who may see it 403, anyone else 404. */
  'liveSession.attendance': async (ctx: ServiceContext, sessionId: string) => {
    const found = await viewLiveSession(ctx, sessionId);
    if (canManageCourses(ctx.actor) || canManageSession(ctx.actor, found.session.hostId)) return found;
    throw forbidden('Only course staff and the host see the attendance of a live session');
  },
  /**
   * Live-session attendance totals of a course: managers for any student; a learner only for
   * themself and with an enrollment (any status) in the course; anyone else 404.
   */
  'liveSession.courseAttendance': async (ctx: ServiceContext, target: { courseId: string; studentId?: string }) => {
    const course = await loadCourse(ctx, target.courseId);
    if (canManageCourses(ctx.actor)) return { course, studentId: target.studentId ?? null };
    if (target.studentId !== undefined && target.studentId !== ctx.actor.personId) throw notFound('Enrollment');
    if (!(await ownEnrollment(ctx, course.id))) throw notFound('Course');
    return { course, studentId: ctx.actor.personId };
  },
  /** Read a course's announcements and discussions, start threads and reply: staff, or an ACTIVE or COMPLETED enrollment. */
  'course.community': async (ctx: ServiceContext, courseId: string) => joinCommunity(ctx, await loadCourse(ctx, courseId)),
  /** The same for a lesson's discussions (the lesson's course decides; drip locks do not apply). */
  'lesson.community': async (ctx: ServiceContext, lessonId: string) => {
    const found = await knownLesson(ctx, lessonId);
    return { ...(await joinCommunity(ctx, found.course, found.enrollment)), lesson: found.lesson };
  },
  /** Post an announcement in a course: canManageCourses (any course of the institution). */
  'course.announce': async (ctx: ServiceContext, courseId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Posting announcements requires canManageCourses');
    return loadCourse(ctx, courseId);
  },
  /** Change or delete an announcement: its author or ADMIN (others with canManageCourses: 403; learners: 403 whatever the id). */
  'announcement.edit': async (ctx: ServiceContext, announcementId: string): Promise<Announcement> => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Changing announcements requires canManageCourses');
    const [row] = await ctx.db
      .select()
      .from(announcements)
      .where(byId(ctx, announcements, announcementId))
      .limit(1);
    if (!row) throw notFound('Announcement');
    if (!isOwnerOrAdmin(ctx.actor, row.authorId)) throw forbidden('Only the author of this announcement or an administrator may change it');
    return row;
  },
  /** Read a thread: as `course.community` on its course; a hidden thread only for staff. */
  'discussion.view': (ctx: ServiceContext, threadId: string) => viewThread(ctx, threadId),
  /** Edit or delete a thread: its author only (403), while it is readable to them and not deleted (404). */
  'discussion.edit': async (ctx: ServiceContext, threadId: string) => {
    const found = await viewThread(ctx, threadId);
    requirePostAuthor(ctx, found.thread, 'Discussion');
    return found;
  },
  /** Pin, lock or hide a thread: canManageCourses (403 whatever the id for anyone else). */
  'discussion.moderate': async (ctx: ServiceContext, threadId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Moderation requires canManageCourses');
    return loadThread(ctx, threadId);
  },
  /** Edit or delete a reply: its author only, while readable to them and not deleted. */
  'discussionReply.edit': async (ctx: ServiceContext, replyId: string) => {
    const found = await viewReply(ctx, replyId);
    requirePostAuthor(ctx, found.reply, 'Reply');
    return found;
  },
  /** Hide or show a reply: canManageCourses. */
  'discussionReply.moderate': async (ctx: ServiceContext, replyId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Moderation requires canManageCourses');
    const [reply] = await ctx.db
      .select()
      .from(discussionReplies)
      .where(byId(ctx, discussionReplies, replyId))
      .limit(1);
    if (!reply) throw notFound('Reply');
    return reply;
  },
  /** Review a course: a learner with an ACTIVE or COMPLETED enrollment in it (403 ENROLLMENT_REQUIRED; 404 for a course they may not know). */
  'course.review': async (ctx: ServiceContext, courseId: string) => {
    const course = await loadCourse(ctx, courseId);
    const enrollment = await ownEnrollment(ctx, course.id);
    if (admits(enrollment)) return { course, enrollment };
    if (course.status !== 'PUBLISHED' && !enrollment && !canManageCourses(ctx.actor)) throw notFound('Course');
    throw new AppError('ENROLLMENT_REQUIRED', 'Only students enrolled in this course (active or completed) may review it');
  },
  /** Run, export and save reports, read the entity registry: TEACHER or ADMIN. */
  'analytics.use': async (ctx: ServiceContext, _target: null) => {
    requireAnalyticsStaff(ctx);
    return null;
  },
  /** The revenue dashboard: ADMIN (403 for anyone else). */
  'analytics.revenue': async (ctx: ServiceContext, _target: null) => {
    if (!isAdmin(ctx.actor)) throw forbidden('The revenue dashboard is for administrators');
    return null;
  },
  /** The analytics of one course: TEACHER or ADMIN (403 before anything is loaded), any course of the institution (else 404). */
  'analytics.course': async (ctx: ServiceContext, courseId: string) => {
    requireAnalyticsStaff(ctx);
    return loadCourse(ctx, courseId);
  },
  /** Read or run a saved report, list its schedules and alerts: its owner, any staff when SHARED, ADMIN; anyone else 404. */
  'report.view': (ctx: ServiceContext, reportId: string) => viewReport(ctx, reportId),
  /** Change or delete a saved report, add schedules and alerts to it: its owner or ADMIN (staff who see it: 403). */
  'report.edit': (ctx: ServiceContext, reportId: string) => editReport(ctx, reportId),
  /** Change or delete a schedule: as `report.edit` on its report. */
  'reportSchedule.edit': async (ctx: ServiceContext, scheduleId: string): Promise<{ schedule: AnalyticsReportSchedule; report: AnalyticsReport }> => {
    requireAnalyticsStaff(ctx);
    const [schedule] = await ctx.db
      .select()
      .from(analyticsReportSchedules)
      .where(byId(ctx, analyticsReportSchedules, scheduleId))
      .limit(1);
    if (!schedule) throw notFound('Schedule');
    const report = await editReport(ctx, schedule.reportId).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'NOT_FOUND' ? notFound('Schedule') : err;
    });
    return { schedule, report };
  },
  /** Change or delete an alert: as `report.edit` on its report. */
  'reportAlert.edit': async (ctx: ServiceContext, alertId: string): Promise<{ alert: AnalyticsReportAlert; report: AnalyticsReport }> => {
    requireAnalyticsStaff(ctx);
    const [alert] = await ctx.db
      .select()
      .from(analyticsReportAlerts)
      .where(byId(ctx, analyticsReportAlerts, alertId))
      .limit(1);
    if (!alert) throw notFound('Alert');
    const report = await editReport(ctx, alert.reportId).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'NOT_FOUND' ? notFound('Alert') : err;
    });
    return { alert, report };
  },
  /** See a learning path: managers any; learners PUBLISHED ones and the ones they are on (anyone else 404). */
  'learningPath.view': (ctx: ServiceContext, pathId: string) => viewLearningPath(ctx, pathId),
  /** Change a learning path (details, courses): canManageCourses (403), a path they may see (404), its creator or ADMIN (403). */
  'learningPath.edit': async (ctx: ServiceContext, pathId: string) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Course authoring requires canManageCourses');
    const path = await viewLearningPath(ctx, pathId);
    if (!isOwnerOrAdmin(ctx.actor, path.createdBy)) throw forbidden('Only the creator of this path or an administrator may change it');
    return path;
  },
  /** Put oneself on a learning path: students only (403; staff enroll others as `catalog.author`), with self-enrollment allowed (403) and fees allowing it (402). */
  'learningPath.selfEnroll': async (ctx: ServiceContext, _target: null) => {
    if (ctx.actor.role !== 'STUDENT') throw forbidden('Only students enroll themselves; staff pass studentIds');
    await requireSelfEnrollment(ctx);
    return null;
  },
  /** The compliance trainings of the institution: managers (403 otherwise). */
  'compliance.trainings': async (ctx: ServiceContext, _target: null) => {
    if (!canManageCourses(ctx.actor)) throw forbidden('Compliance trainings are for staff');
    return null;
  },
  /** Compliance records: managers see everyone's (`staff` true), anyone else of the institution only their own. */
  'compliance.records': async (ctx: ServiceContext, _target: null) => ({ staff: canManageCourses(ctx.actor) }),
  /** Institution settings and CRM sync: ADMIN. */
  'institution.admin': async (ctx: ServiceContext, _target: null) => {
    if (!isAdmin(ctx.actor)) throw forbidden('This action requires an administrator');
    return null;
  },
  /**
   * A parent reading a child's data: the caller is a parent Contact (403 otherwise), and the
   * child is among the parent's children as the CRM lists them now (never cached; 403 otherwise).
   */
  'parent.child': async (ctx: ServiceContext, childContactId: string) => {
    const children = await parentChildren(ctx);
    // A child without a portal Contact row yet (spec 4.6 rule 6) can only be named by its student id.
    const child = children.find((c) => (c.contactId ?? c.studentId) === childContactId);
    if (!child) throw forbidden('This child is not linked to your account');
    return child;
  },
  /** The parent portal itself (spec 4.6): a parent Contact; the children as the CRM lists them now. */
  'parent.portal': (ctx: ServiceContext, _target: null) => parentChildren(ctx),
} satisfies Record<string, (ctx: ServiceContext, target: never) => Promise<unknown>>;

export type AccessAction = keyof typeof rules;
/** Every action, as the README's "Access rules" table must list them. */
export const ACCESS_ACTIONS = Object.keys(rules) as AccessAction[];
type Target<A extends AccessAction> = Parameters<(typeof rules)[A]>[1];
type Granted<A extends AccessAction> = Awaited<ReturnType<(typeof rules)[A]>>;

/** Checks that the caller may do `action` to `target`; throws the rule's error, or returns what it loaded. */
export function requireAccess<A extends AccessAction>(ctx: ServiceContext, action: A, target: Target<A>): Promise<Granted<A>> {
  return (rules[action] as (c: ServiceContext, t: Target<A>) => Promise<Granted<A>>)(ctx, target);
}

/**
 * The lessons of a course the caller may open, as a set (for outlines that show content only
 * where it may be opened): all for managers; for a learner with an ACTIVE or COMPLETED
 * enrollment whose fees allow, the unlocked ones; none for anyone else.
 */
export async function openableLessonIds(ctx: ServiceContext, course: Course): Promise<Set<string>> {
  if (canManageCourses(ctx.actor)) {
    const rows = await ctx.db
      .select({ id: lessons.id })
      .from(lessons)
      .where(and(inTenant(ctx, lessons), eq(lessons.courseId, course.id)));
    return new Set(rows.map((r) => r.id));
  }
  const enrollment = await ownEnrollment(ctx, course.id);
  if (!admits(enrollment)) return new Set();
  try {
    await assertFeesAllow(ctx, 'opening lesson content');
  } catch (err) {
    if (err instanceof AppError && err.code === 'FEE_OVERDUE') return new Set();
    throw err;
  }
  const state = await courseState(ctx, course, enrollment);
  return new Set(state.ordered.filter((l) => !state.locks.get(l.id)?.locked).map((l) => l.id));
}
