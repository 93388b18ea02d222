import type { ServiceContext } from '../../platform/context.js';
import { AppError } from '../../platform/http/errors.js';
import { getSettings, institutionSlug } from './institutions.service.js';

/**
 * Fee gating (spec 4.10 rule 3): when the institution turned it on, a student whose CRM fee
 * status is OVERDUE is refused with 402 FEE_OVERDUE. PAID and PARTIAL pass. If the CRM cannot
 * answer, the student is let through (degrade open) and a warning is logged.
 */
export async function assertFeesAllow(ctx: ServiceContext, action: string): Promise<void> {
  if (ctx.actor.role !== 'STUDENT') return;
  const settings = await getSettings(ctx.db, ctx.institutionId);
  if (!settings.feeGatingEnabled) return;
  let status;
  try {
    const slug = await institutionSlug(ctx, ctx.institutionId);
    if (!slug) throw new Error('institution slug unknown');
    status = await ctx.crm.getFeeStatus(slug, ctx.actor.personId);
  } catch (err) {
    ctx.log.warn(`[lms] fee gating: CRM fee status unavailable for ${ctx.actor.personId} (${(err as Error).message}); letting the student through`);
    return;
  }
  if (status.status === 'OVERDUE') {
    throw new AppError('FEE_OVERDUE', `Fees are overdue: ${action} is blocked until they are paid`, {
      outstanding: status.outstanding,
      dueDate: status.dueDate,
    });
  }
}
