import { and, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.js';
import { withTx, type ServiceContext } from '../../platform/context.js';
import type { CompletionPush, CrmClient } from '../../platform/crm/types.js';
import type { Db } from '../../platform/db/client.js';
import { newId } from '../../platform/ids.js';
import { enqueue } from '../../platform/queue/queue.js';
import { requireAccess } from '../access/access.service.js';
import { audit } from '../audit/audit.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { crmCompletions } from './sync.tables.js';
import { byId, byIdForJob, inTenant } from '../../platform/db/tenancy.js';

export const COMPLETION_JOB = 'crm.pushCompletion';
const CLAIM_MS = 60_000;

interface SenderDeps {
  db: Db;
  crm: CrmClient;
  clock: Clock;
  log: Pick<Console, 'warn' | 'error'>;
}

/**
 * Record a completion to push to the CRM, in the caller's transaction: an outbox row (one per
 * completion of the enrollment) and a job for the worker. A rollback records nothing.
 */
export async function pushCompletion(ctx: ServiceContext, enrollmentId: string, payload: CompletionPush): Promise<void> {
  const { institutionId } = ctx;
  const now = ctx.clock.now();
  const id = newId();
  const inserted = await ctx.db
    .insert(crmCompletions)
    .values({ id, institutionId, enrollmentId, completedAt: new Date(payload.completedAt), payload, createdAt: now, updatedAt: now })
    .onConflictDoNothing()
    .returning({ id: crmCompletions.id });
  if (inserted.length > 0) {
    await enqueue(ctx.db, ctx.clock, COMPLETION_JOB, { completionId: id, institutionId }, { institutionId });
  }
}

export type SendOutcome = 'sent' | 'failed' | 'skipped';

/**
 * Send one outbox row of `institutionId` (null only for a job queued before jobs named it).
 * Claimed first, so the worker and the sync endpoint never send the same row at once; a row
 * already SENT is never sent again.
 */
export async function sendCompletion(deps: SenderDeps, completionId: string, institutionId: string | null): Promise<SendOutcome> {
  const now = deps.clock.now();
  const [row] = await deps.db
    .update(crmCompletions)
    .set({ claimedUntil: new Date(now.getTime() + CLAIM_MS), attempts: sql`${crmCompletions.attempts} + 1`, updatedAt: now })
    .where(
      and(
        byIdForJob(institutionId, crmCompletions, completionId),
        inArray(crmCompletions.status, ['PENDING', 'FAILED']),
        or(isNull(crmCompletions.claimedUntil), lt(crmCompletions.claimedUntil, now)),
      ),
    )
    .returning();
  if (!row) return 'skipped';
  try {
    const slug = await institutionSlug(deps, row.institutionId);
    if (!slug) throw new Error(`institution ${row.institutionId} has no CRM slug`);
    await deps.crm.pushCompletion(slug, row.payload);
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    await deps.db
      .update(crmCompletions)
      .set({ status: 'FAILED', lastError: message.slice(0, 1000), claimedUntil: null, updatedAt: deps.clock.now() })
      .where(byId(row, crmCompletions, row.id));
    deps.log.warn(`[lms] completion push ${row.id} failed: ${message}`);
    return 'failed';
  }
  await deps.db
    .update(crmCompletions)
    .set({ status: 'SENT', sentAt: deps.clock.now(), lastError: null, claimedUntil: null, updatedAt: deps.clock.now() })
    .where(byId(row, crmCompletions, row.id));
  return 'sent';
}

/** POST /api/sync/crm: push every pending or failed completion of the institution now. */
export async function syncCompletions(ctx: ServiceContext) {
  await requireAccess(ctx, 'institution.admin', null);
  const due = await ctx.db
    .select({ id: crmCompletions.id })
    .from(crmCompletions)
    .where(and(inTenant(ctx, crmCompletions), inArray(crmCompletions.status, ['PENDING', 'FAILED'])))
    .orderBy(crmCompletions.createdAt);
  let pushed = 0;
  let failed = 0;
  for (const { id } of due) {
    const outcome = await sendCompletion(ctx, id, ctx.institutionId);
    if (outcome === 'sent') pushed++;
    else if (outcome === 'failed') failed++;
  }
  const [{ pending }] = await ctx.db
    .select({ pending: sql<number>`count(*)::int` })
    .from(crmCompletions)
    .where(and(inTenant(ctx, crmCompletions), inArray(crmCompletions.status, ['PENDING', 'FAILED'])));
  // Each push commits on its own (the CRM call cannot join a transaction), so the audit row
  // records the outcome afterwards; a call that attempted nothing records nothing.
  if (pushed + failed > 0) {
    await withTx(ctx, (tx) => audit(tx, { action: 'sync.crm', targetType: 'institution', targetId: ctx.institutionId, after: { pushed, failed, pending } }));
  }
  return { pushed, failed, pending };
}
