import type { CourseModule, Lesson } from '../courses/courses.tables.js';

export interface LockState {
  locked: boolean;
  /** When a time lock lifts; null when not locked or when it waits on another lesson. */
  unlocksAt: Date | null;
  reason: 'UNLOCK_AT' | 'UNLOCK_AFTER_DAYS' | 'SEQUENTIAL' | 'PREREQUISITE' | null;
  /** PREREQUISITE: the course of the learner's learning path to complete first. */
  prerequisite?: PathPrerequisite;
}

/** A course that comes before another on a learning path and is not completed yet. */
export interface PathPrerequisite {
  learningPathId: string;
  courseId: string;
  courseTitle: string;
}

const DAY_MS = 86_400_000;
const OPEN: LockState = { locked: false, unlocksAt: null, reason: null };

/**
 * Drip rules: a lesson with `unlockAt` or `unlockAfterDays` (counted from enrollment) is locked
 * until then; with SEQUENTIAL drip a lesson also waits until the previous required lesson is
 * completed. `ordered` is the course's lessons in reading order.
 */
export function lessonLocks(ordered: Lesson[], opts: { dripMode: string; enrolledAt: Date | null; completed: Set<string>; now: Date }): Map<string, LockState> {
  const result = new Map<string, LockState>();
  let previousRequired: Lesson | undefined;
  for (const lesson of ordered) {
    const times: Array<{ at: Date; reason: LockState['reason'] }> = [];
    if (lesson.unlockAt) times.push({ at: lesson.unlockAt, reason: 'UNLOCK_AT' });
    if (lesson.unlockAfterDays !== null && lesson.unlockAfterDays > 0 && opts.enrolledAt) {
      times.push({ at: new Date(opts.enrolledAt.getTime() + lesson.unlockAfterDays * DAY_MS), reason: 'UNLOCK_AFTER_DAYS' });
    }
    const pending = times.filter((t) => t.at.getTime() > opts.now.getTime()).sort((a, b) => b.at.getTime() - a.at.getTime());
    const waitsOnPrevious = opts.dripMode === 'SEQUENTIAL' && previousRequired !== undefined && !opts.completed.has(previousRequired.id);
    if (pending.length > 0) result.set(lesson.id, { locked: true, unlocksAt: pending[0].at, reason: pending[0].reason });
    else if (waitsOnPrevious) result.set(lesson.id, { locked: true, unlocksAt: null, reason: 'SEQUENTIAL' });
    else result.set(lesson.id, OPEN);
    if (lesson.isRequired) previousRequired = lesson;
  }
  return result;
}

export const unlocked = (): LockState => OPEN;

/** Lessons in reading order: module order first (module-less lessons first), then lesson order. */
export function orderedLessons(mods: CourseModule[], ls: Lesson[]): Lesson[] {
  const moduleRank = new Map(mods.map((m, i) => [m.id, i]));
  return [...ls].sort((a, b) => {
    const ra = a.moduleId ? (moduleRank.get(a.moduleId) ?? -1) : -1;
    const rb = b.moduleId ? (moduleRank.get(b.moduleId) ?? -1) : -1;
    return ra - rb || a.order - b.order || a.createdAt.getTime() - b.createdAt.getTime();
  });
}
