import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import { childParams, childrenSchema, overviewSchema } from './parent.schemas.js';
import * as parent from './parent.service.js';

const tags = ['parent'];
const who =
  'Only a parent Contact (isContact and contactType CONTACT_PARENT): anyone else 403 FORBIDDEN; a parent session without contactId 400 VALIDATION_ERROR; ' +
  'the CRM failing or unreachable 500 INTERNAL_ERROR (spec 4.6, not the 502 of other CRM failures).';

/** Spec 4.6: the parent portal, read-only. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/parent/children',
    {
      schema: {
        tags,
        operationId: 'listParentChildren',
        summary: "The caller's children, read fresh from the CRM",
        description: who,
        response: { 200: envelope(childrenSchema) },
      },
    },
    async (req) => ok(await parent.listChildren(ctxOf(req))),
  );

  r.get(
    '/api/parent/children/:childId/overview',
    {
      config: { recordScope: 'owner' },
      schema: {
        tags,
        operationId: 'getChildOverview',
        summary: "A child's courses, recent grades, upcoming assignments, live classes, gamification and certificates",
        description:
          `${who} \`childId\` is the child's CRM Contact id; a child not linked to the caller (as the CRM says now) is 403 FORBIDDEN. ` +
          'Recent grades: the last 10 graded submissions (percentage and passed computed here); upcoming assignments and live classes: at most 5 each, of ACTIVE enrollments in PUBLISHED courses (assignments not submitted yet).',
        params: childParams,
        response: { 200: envelope(overviewSchema) },
      },
    },
    async (req) => ok(await parent.childOverview(ctxOf(req), req.params.childId)),
  );
};

export const parentModule: AppModule = { name: 'parent', routes };
