import { and, inArray } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { newId } from '../../platform/ids.js';
import { assignments, rubricCriteria, rubrics } from './assignments.tables.js';

/**
 * Copies the assignments of lessons being duplicated (course duplication) to their copies, in the
 * caller's transaction, with their rubrics and criteria under new ids: `lessonIdMap` maps each
 * source lesson id to its copy's id, `courseId` is the copy's course. Submissions and reviews are
 * not copied. Tables only, so the courses module can call it without the assignments service.
 */
export async function copyAssignments(tx: ServiceContext, lessonIdMap: Map<string, string>, courseId: string): Promise<number> {
  if (lessonIdMap.size === 0) return 0;
  const sources = await tx.db
    .select()
    .from(assignments)
    .where(and(inTenant(tx, assignments), inArray(assignments.id, [...lessonIdMap.keys()])));
  if (sources.length === 0) return 0;
  const now = tx.clock.now();
  await tx.db.insert(assignments).values(sources.map((a) => ({ ...a, id: lessonIdMap.get(a.id)!, courseId, createdAt: now, updatedAt: now })));

  const sourceRubrics = await tx.db
    .select()
    .from(rubrics)
    .where(
      and(
        inTenant(tx, rubrics),
        inArray(
          rubrics.assignmentId,
          sources.map((a) => a.id),
        ),
      ),
    );
  if (sourceRubrics.length === 0) return sources.length;
  const rubricIdMap = new Map(sourceRubrics.map((r) => [r.id, newId()]));
  await tx.db
    .insert(rubrics)
    .values(sourceRubrics.map((r) => ({ ...r, id: rubricIdMap.get(r.id)!, assignmentId: lessonIdMap.get(r.assignmentId)!, createdAt: now, updatedAt: now })));
  const criteria = await tx.db
    .select()
    .from(rubricCriteria)
    .where(and(inTenant(tx, rubricCriteria), inArray(rubricCriteria.rubricId, [...rubricIdMap.keys()])));
  if (criteria.length > 0) await tx.db.insert(rubricCriteria).values(criteria.map((c) => ({ ...c, id: newId(), rubricId: rubricIdMap.get(c.rubricId)! })));
  return sources.length;
}
