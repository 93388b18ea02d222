import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/** Helmet's options here (as before this module): no Content-Security-Policy, Cross-Origin-Resource-Policy same-site. */
export const HELMET_OPTIONS: HelmetOptions = { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } };

/**
 * The headers helmet sets with these options. Without a CSP nonce none of them depends on the
 * request, so helmet runs once, against a response that records what it sets.
 */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
    getHeader: (name: string) => headers[name.toLowerCase()],
  };
  let failed: unknown;
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => void (failed = err));
  if (failed) throw failed;
  return headers;
}

/**
 * The part of helmet's set that a JSON answer needs (OWASP REST Security Cheat Sheet, "Security
 * headers": HSTS, nosniff, framing refused) plus Cross-Origin-Resource-Policy, which keeps
 * other sites' pages from loading our answers as no-cors subresources. The rest act only on a
 * document a browser renders (Cross-Origin-Opener-Policy, Origin-Agent-Cluster,
 * Referrer-Policy, X-DNS-Prefetch-Control, X-Download-Options, X-Permitted-Cross-Domain-Policies,
 * X-XSS-Protection), and cost every API answer ~270 bytes and their validation in Node.
 */
export const API_SECURITY_HEADERS = ['strict-transport-security', 'x-content-type-options', 'x-frame-options', 'cross-origin-resource-policy'] as const;

/** The API part of helmet's set for `options` (computed once; none depends on the request). */
export function apiSecurityHeaders(options: HelmetOptions = HELMET_OPTIONS): Record<string, string> {
  const all = helmetHeaders(options);
  const api: Record<string, string> = {};
  for (const name of API_SECURITY_HEADERS) if (all[name] !== undefined) api[name] = all[name];
  return api;
}

/** With the default options: what every answer carries, also those sent before routing. */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze(apiSecurityHeaders());

const isJson = (contentType: unknown) => typeof contentType === 'string' && contentType.startsWith('application/json');

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A sent x-request-id is kept (a correlation id from a proxy or client); otherwise a random UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  // crypto's batched randomUUID rather than a time-ordered v7 built per request: it is only a correlation id.
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The headers of every answer, in one hook at each end of the request: the request id and the API
 * part of helmet's set (computed once at start-up, no per-request helmet middleware) when the
 * request comes in; when the answer is sent, the rest of helmet's set if it is not JSON (the web
 * app, the API docs, SCORM content, files, calendars, CSV) unless its handler set one of them,
 * and `Connection: close` once the app is closing, so a client's keep-alive socket does not hold
 * close() open until the keep-alive timeout.
 */
export function registerResponseHeaders(app: FastifyInstance, options: HelmetOptions = HELMET_OPTIONS) {
  const all = helmetHeaders(options);
  const api = options === HELMET_OPTIONS ? API_HEADERS : apiSecurityHeaders(options);
  const documentOnly = Object.entries(all).filter(([name]) => api[name] === undefined);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', function requestHeaders(req, reply, done) {
    reply.headers(api);
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onSend', function answerHeaders(_req, reply, payload, done) {
    if (!isJson(reply.getHeader('content-type'))) {
      for (const [name, value] of documentOnly) if (!reply.hasHeader(name)) reply.header(name, value);
    }
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}
