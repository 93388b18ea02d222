import type { ServiceContext } from '../../platform/context.js';

/**
 * The live-class block of the parent overview: attended and missed COMPLETED sessions of the
 * current calendar month (institution time zone) and the next sessions. Live sessions arrive
 * with their module; until then the child has none.
 */
export async function liveClassesOf(_ctx: ServiceContext, _childId: string, _upcoming: number) {
  return {
    attendedThisMonth: 0,
    missedThisMonth: 0,
    upcoming: [] as Array<{ sessionId: string; title: string; courseId: string; courseTitle: string; scheduledAt: string; durationMinutes: number }>,
  };
}
