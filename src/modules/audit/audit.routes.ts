import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { paged, pagedEnvelope } from '../../platform/http/envelope.js';
import { requestContext } from '../../platform/auth/auth-plugin.js';
import { auditQuery, auditRowSchema } from './audit.schemas.js';
import { listAuditLog } from './audit.service.js';

/** Spec 4.9 `GET /api/audit-log`. Rows are written by `audit()` (audit.ts) in each staff write's transaction; no route changes or deletes them. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);

  r.get(
    '/api/audit-log',
    {
      schema: {
        tags: ['audit'],
        operationId: 'listAuditLog',
        summary: 'The audit log of staff writes (ADMIN), newest first',
        description:
          'One row per staff write (course, module and lesson changes, publishing, archiving, enrollment changes, grades, settings, captions, announcements, ' +
          'discussion moderation…): actor, action, target, the changed fields before and after, and the request id. Filters: `actorId`, `action` (exact, ' +
          'or a target type such as `course` for all its actions), `targetType`, `targetId`, `from` (inclusive) and `to` (exclusive). Append-only: no route ' +
          'changes or deletes a row. Paginated (default 50, at most 100). ADMIN only (anyone else, staff with canManageCourses included, 403 FORBIDDEN). 400 VALIDATION_ERROR for a bad filter, a `from` after `to`, or a bad page value.',
        querystring: auditQuery,
        response: { 200: pagedEnvelope(auditRowSchema) },
      },
    },
    async (req) => {
      const { rows, meta } = await listAuditLog(requestContext(deps, req), req.query);
      return paged(rows, meta);
    },
  );
};

export const auditModule: AppModule = { name: 'audit', routes };
