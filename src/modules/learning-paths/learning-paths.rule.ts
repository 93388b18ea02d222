import type { Course } from '../courses/courses.tables.js';
import type { EnrollmentStatus } from '../enrollments/enrollments.tables.js';

/**
 * The courses of a learning path that count for a learner: one they completed, and one they can
 * still complete (PUBLISHED, or they are ACTIVE in it). An archived or unpublished course they
 * never took (or dropped) does not count: it would lock the rest of the path for good and keep
 * the path's progress below 100 %. One rule for the order lock (`lesson.open` in the access
 * module, `locked` in the path view) and for the path's progress.
 */
export const countsOnPath = (courseStatus: Course['status'], enrollmentStatus: EnrollmentStatus | null | undefined): boolean =>
  enrollmentStatus === 'COMPLETED' || courseStatus === 'PUBLISHED' || enrollmentStatus === 'ACTIVE';

/** A course that holds back the ones after it on the path (a prerequisite still to do): it counts and is not completed. */
export const holdsBack = (courseStatus: Course['status'], enrollmentStatus: EnrollmentStatus | null | undefined): boolean =>
  enrollmentStatus !== 'COMPLETED' && countsOnPath(courseStatus, enrollmentStatus);
