import { and, inArray } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { quizzes } from './quizzes.tables.js';

/**
 * Copies the quizzes of lessons being duplicated (course duplication) to their copies, in the
 * caller's transaction: `lessonIdMap` maps each source lesson id to its copy's id. Questions keep
 * their ids (they are unique within a quiz); attempts are not copied. Tables only, so the courses
 * module can call it without importing the quizzes service.
 */
export async function copyQuizzes(tx: ServiceContext, lessonIdMap: Map<string, string>): Promise<number> {
  if (lessonIdMap.size === 0) return 0;
  const sources = await tx.db
    .select()
    .from(quizzes)
    .where(and(inTenant(tx, quizzes), inArray(quizzes.id, [...lessonIdMap.keys()])));
  if (sources.length === 0) return 0;
  const now = tx.clock.now();
  await tx.db.insert(quizzes).values(sources.map((q) => ({ ...q, id: lessonIdMap.get(q.id)!, updatedBy: tx.actor.personId, createdAt: now, updatedAt: now })));
  return sources.length;
}
