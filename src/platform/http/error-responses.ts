import type { FastifyInstance, RouteOptions } from 'fastify';
import { routeAuthMode } from '../auth/auth-plugin.js';
import { errorResponse } from './envelope.js';
import { ERROR_STATUS } from './errors.js';

/** What each status means when a route does not say more (its own entry for the status). */
const NOTES: Record<number, string> = {
  400: 'the request is not valid (`details.fields` names each field and what is wrong with it)',
  401: 'no valid session cookie or bearer token',
  402: 'the institution gates on fees and the student’s CRM fee status is OVERDUE (`details`: outstanding, dueDate)',
  403: 'not allowed to the caller, an institutionId other than the session’s, a learner without the enrollment it needs, or a drip-locked lesson',
  404: 'no such record, or one the caller may not know about',
  409: 'the record’s state does not allow it',
  413: 'the body is larger than the service takes (BODY_LIMIT_BYTES)',
  415: 'the body’s Content-Type is not one the route takes (JSON routes: application/json)',
  429: 'rate limit exceeded (`Retry-After` says when to retry)',
  500: 'an unexpected server error (the message carries the request id)',
  502: 'the CRM could not be reached or gave an unusable answer',
  503: 'a service this request needs is unavailable',
};

const CRON_NOTE = 'no valid cron secret (`Authorization: Bearer <CRON_SECRET>`)';

/**
 * The error statuses a route documents (without its own entries):
 * - under /api: 400, 403, 404, 409, 429 and 500; outside /api (health probes) 500 only;
 * - 401 unless the route needs no authentication (`config.auth` public or optional: health
 *   checks, certificate verification, webhooks, signed file URLs);
 * - 413 and 415 when it takes a request body (`schema.body`);
 * - the status of each code in `config.errors` (402 FEE_OVERDUE on fee-gated routes, 502
 *   BAD_GATEWAY where a CRM failure surfaces…).
 */
export function errorStatusesOf(route: Pick<RouteOptions, 'url' | 'config' | 'schema'>): number[] {
  const url = route.url ?? '';
  if (!url.startsWith('/api/')) return [500];
  const statuses = new Set([400, 403, 404, 409, 429, 500]);
  const mode = routeAuthMode(url, route.config);
  if (mode !== 'public' && mode !== 'optional') statuses.add(401);
  if (route.schema?.body) [413, 415].forEach((s) => statuses.add(s));
  for (const code of route.config?.errors ?? []) statuses.add(ERROR_STATUS[code]);
  return [...statuses].sort((a, b) => a - b);
}

/** An error entry in another form than the envelope (the xAPI LRS's plain text): the route documents its errors itself. */
const isOwnErrorForm = (entry: unknown) => typeof entry === 'object' && entry !== null && 'content' in entry && !('application/json' in (entry as { content: object }).content);

/**
 * Every route with a schema documents its error envelopes (errorStatusesOf), each with
 * `error.code` as the enum of the codes of its status and a description naming them; a route's
 * own entry for a status wins (for a note on when it answers it). Register before any route.
 */
export function registerCommonErrorResponses(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (!route.schema) return;
    const response = { ...((route.schema.response ?? {}) as Record<string, unknown>) };
    if (Object.entries(response).some(([status, entry]) => Number(status) >= 400 && isOwnErrorForm(entry))) return;
    const mode = routeAuthMode(route.url ?? '', route.config);
    for (const status of errorStatusesOf(route)) {
      if (String(status) in response) continue;
      response[status] = errorResponse(status, status === 401 && mode === 'cron' ? CRON_NOTE : NOTES[status]);
    }
    route.schema.response = response;
  });
}
