import { createHmac } from 'node:crypto';
import { derivedKey, safeEqual } from '../auth/signatures.js';
import { isValidContentType, isValidKey } from './keys.js';

/**
 * Signed, expiring URLs for the local-disk driver: the service itself serves the download
 * (`GET /api/files/raw/<key>`) and accepts the upload (`PUT /api/upload/<key>`), and these
 * helpers are how those routes tell a URL we issued from a guessed or edited one.
 *
 * The signature is HMAC-SHA256 over every value the URL grants (method, key, expiry and,
 * for an upload, content type and size limit), keyed by a key derived from AUTH_SECRET so a
 * storage signature can never be replayed as any other signature made with that secret.
 */

export const DOWNLOAD_PATH_PREFIX = '/api/files/raw/';
export const UPLOAD_PATH_PREFIX = '/api/upload/';

export type SignedRequest = { method: 'GET'; key: string } | { method: 'PUT'; key: string; contentType: string; maxBytes: number };

export type VerifiedRequest = SignedRequest & { expiresAt: number };

export type VerifyFailure = 'malformed' | 'bad_signature' | 'expired';

export type VerifyResult = ({ ok: true } & VerifiedRequest) | { ok: false; reason: VerifyFailure };

/** The storage-URL key: HKDF-SHA256 of AUTH_SECRET with its own info string, derived once. */
export const STORAGE_URL_KEY_INFO = 'lms:storage-signed-url:v1';
const signingKey = (authSecret: string) => derivedKey(authSecret, STORAGE_URL_KEY_INFO);

// JSON of a fixed-order array: unambiguous whatever characters the fields hold.
function signature(authSecret: string, request: SignedRequest, expiresAt: number): string {
  const fields = request.method === 'GET' ? ['GET', request.key, expiresAt] : ['PUT', request.key, expiresAt, request.contentType, request.maxBytes];
  return createHmac('sha256', signingKey(authSecret)).update(JSON.stringify(fields)).digest('hex');
}

/**
 * The full URL for `request`, valid until `expiresAt` (unix seconds).
 * `baseUrl` is the service's public address without a trailing slash.
 */
export function signUrl(opts: { authSecret: string; baseUrl: string; request: SignedRequest; expiresAt: number }): string {
  const { authSecret, baseUrl, request, expiresAt } = opts;
  const params = new URLSearchParams({ expires: String(expiresAt) });
  if (request.method === 'PUT') {
    params.set('ct', request.contentType);
    params.set('max', String(request.maxBytes));
  }
  params.set('sig', signature(authSecret, request, expiresAt));
  const prefix = request.method === 'GET' ? DOWNLOAD_PATH_PREFIX : UPLOAD_PATH_PREFIX;
  // Keys use only [a-z0-9/_.-], so they need no escaping in a path.
  return `${baseUrl.replace(/\/+$/, '')}${prefix}${request.key}?${params.toString()}`;
}

const single = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Check a request against the URL we signed: `key` is the path after the prefix, `query`
 * the parsed query string (as Fastify gives it). On success the PUT result carries the
 * content type and size limit the route must enforce on the body.
 */
export function verifySignedUrl(opts: { authSecret: string; method: 'GET' | 'PUT'; key: string; query: Record<string, unknown>; now: Date }): VerifyResult {
  const { authSecret, method, key, query, now } = opts;
  const expires = single(query.expires);
  const sig = single(query.sig);
  if (!isValidKey(key) || !expires || !/^\d{1,12}$/.test(expires) || !sig || !/^[0-9a-f]{64}$/.test(sig)) {
    return { ok: false, reason: 'malformed' };
  }
  const expiresAt = Number(expires);

  let request: SignedRequest;
  if (method === 'GET') {
    request = { method, key };
  } else {
    const contentType = single(query.ct);
    const max = single(query.max);
    if (!isValidContentType(contentType) || !max || !/^[1-9]\d{0,14}$/.test(max)) return { ok: false, reason: 'malformed' };
    request = { method, key, contentType, maxBytes: Number(max) };
  }

  // Signature first, so "expired" is only ever said of a URL we really issued.
  if (!safeEqual(sig, signature(authSecret, request, expiresAt))) return { ok: false, reason: 'bad_signature' };
  if (Math.floor(now.getTime() / 1000) > expiresAt) return { ok: false, reason: 'expired' };
  return { ok: true, ...request, expiresAt };
}
