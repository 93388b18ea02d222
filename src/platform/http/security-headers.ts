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
 * Helmet's security headers on every answer, as @fastify/helmet would set them, minus its two
 * per-request hooks that re-ran helmet's middleware: the values are computed once at start-up
 * and copied onto each reply (a handler may still override one).
 */
export function registerSecurityHeaders(app: FastifyInstance, options: HelmetOptions = HELMET_OPTIONS) {
  const headers = helmetHeaders(options);
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(headers);
    done();
  });
}
