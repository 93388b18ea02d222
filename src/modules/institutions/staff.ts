import type { ServiceContext } from '../../platform/context.js';
import { isCrmError } from '../../platform/crm/client.js';
import { validationError } from '../../platform/http/errors.js';
import { requireInstitutionSlug } from './institutions.service.js';

/**
 * People named as staff in a request (report recipients, a live session's host): staff users of
 * the institution as the CRM knows them now (`GET /api/lms/user/{id}`, role TEACHER or ADMIN), so
 * a student or a stranger never gets staff powers or staff mail. An id the CRM does not know, or
 * one that is not staff, is 400 naming its field (`<path>.<index>`, or `path` alone for a single
 * id); a CRM that cannot answer is 502. Answers the ids without repeats.
 */
export async function requireStaffUsers(ctx: ServiceContext, ids: string[], path: string, opts: { single?: boolean } = {}): Promise<string[]> {
  const list = [...new Set(ids)];
  const slug = await requireInstitutionSlug(ctx, ctx.institutionId);
  const issues: { field: string; message: string }[] = [];
  const fieldOf = (id: string) => (opts.single ? path : `${path}.${ids.indexOf(id)}`);
  await Promise.all(
    list.map(async (id) => {
      try {
        const user = await ctx.crm.getUser(slug, id);
        if (user.role !== null && user.role !== 'TEACHER' && user.role !== 'ADMIN') issues.push({ field: fieldOf(id), message: `${id} is not staff` });
      } catch (err) {
        if (isCrmError(err) && err.reason === 'not_found') issues.push({ field: fieldOf(id), message: `no staff user ${id} in the institution` });
        else throw err;
      }
    }),
  );
  if (issues.length > 0) throw validationError(opts.single ? `${path} must be a staff member of the institution` : 'Recipients must be staff of the institution', issues);
  return list;
}
