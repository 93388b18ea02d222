import { and, desc, eq, gte, like, lt, or, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import { escapeLike } from '../../platform/db/like.js';
import { requireAccess } from '../access/access.service.js';
import { auditLog, type AuditRow } from './audit.tables.js';
import { endOf } from '../../platform/http/time-range.js';
import { AUDIT_PAGE_SIZE, auditRange, type AuditQuery } from './audit.schemas.js';

export const toAuditDto = (r: AuditRow) => ({
  id: r.id,
  actorId: r.actorId,
  actorRole: r.actorRole,
  action: r.action,
  targetType: r.targetType,
  targetId: r.targetId,
  before: r.before ?? null,
  after: r.after ?? null,
  requestId: r.requestId,
  createdAt: iso(r.createdAt),
});

/** GET /api/audit-log (ADMIN): the institution's audit rows, filtered, newest first, paginated. */
export async function listAuditLog(ctx: ServiceContext, q: AuditQuery) {
  await requireAccess(ctx, 'institution.admin', null);
  const page = toPage(q, AUDIT_PAGE_SIZE);
  const filters: SQL[] = [inTenant(ctx, auditLog)];
  const actorId = q.actorId ?? q.actor;
  const targetId = q.targetId ?? q.target;
  const { from, to } = auditRange(q);
  if (actorId) filters.push(eq(auditLog.actorId, actorId));
  if (q.action)
    filters.push(q.action.includes('.') ? eq(auditLog.action, q.action) : (or(eq(auditLog.action, q.action), like(auditLog.action, `${escapeLike(q.action)}.%`)) as SQL));
  if (q.targetType) filters.push(eq(auditLog.targetType, q.targetType));
  if (targetId) filters.push(eq(auditLog.targetId, targetId));
  if (from) filters.push(gte(auditLog.createdAt, new Date(from)));
  if (to) filters.push(lt(auditLog.createdAt, endOf(to)));
  const where = and(...filters);
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(auditLog).where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(auditLog)
      .where(where),
  ]);
  return { rows: rows.map(toAuditDto), meta: pageMeta(page, total) };
}
