import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of two strings (length leak only). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

const derivedKeys = new Map<string, Buffer>();

/**
 * A 32-byte key for one purpose, derived from `secret` (AUTH_SECRET) with HKDF-SHA256 and a
 * distinct `info` string per purpose, so a signature made for one purpose is worthless for any
 * other and the raw secret never keys anything but session tokens. Derived once per
 * secret and purpose (at start-up, when the storage driver is built), not on every request.
 */
export function derivedKey(secret: string, info: string): Buffer {
  const id = `${info}\u0000${secret}`;
  let key = derivedKeys.get(id);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));
    derivedKeys.set(id, key);
  }
  return key;
}

export const hmacSha256Hex = (secret: string, body: Buffer | string) => createHmac('sha256', secret).update(body).digest('hex');

/**
 * Verify a webhook signature: HMAC-SHA256 of the raw body, hex, bare or `sha256=`-prefixed.
 */
export function verifyWebhookSignature(secret: string, rawBody: Buffer | string, header: string | undefined | null): boolean {
  if (!header) return false;
  const given = header
    .trim()
    .replace(/^sha256=/i, '')
    .toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  return safeEqual(given, hmacSha256Hex(secret, rawBody));
}

/** Cron guard: `Authorization: Bearer <CRON_SECRET>`; with no secret configured, open. */
export function verifyCronAuthorization(secret: string | undefined, header: string | undefined): boolean {
  if (!secret) return true;
  // The scheme is case-insensitive (RFC 9110 §11.1), as for session bearer tokens.
  const match = header ? /^Bearer\s+(.*)$/is.exec(header) : null;
  return match !== null && safeEqual(match[1]!.trim(), secret);
}
