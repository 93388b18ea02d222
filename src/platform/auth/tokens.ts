import { hkdfSync } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import { SignJWT, compactDecrypt } from 'jose';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';

export const ROLES = ['STUDENT', 'TEACHER', 'ADMIN', 'PARENT'] as const;
export type Role = (typeof ROLES)[number];

/** The decoded session (DESIGN.md §4). */
export interface Session {
  /** `sub`: the user id (for a contact, the CRM Contact id). */
  userId: string;
  /** The id stored as studentId, reviewerId, hostId…: contactId when present, else sub. */
  personId: string;
  institutionId: string;
  role: Role;
  contactId: string | null;
  isContact: boolean;
  contactType: string | null;
  permissions: string[];
  email: string | null;
  name: string | null;
  expiresAt: string | null;
}

/**
 * The session of work the service does on its own (a job, a sweep, the seed) on behalf of
 * `personId` in `institutionId`, with an administrator's rights: what audit rows and
 * notifications then name as the actor.
 */
export function serviceSession(institutionId: string, personId: string): Session {
  return {
    userId: personId,
    personId,
    institutionId,
    role: 'ADMIN',
    contactId: null,
    isContact: false,
    contactType: null,
    permissions: [],
    email: null,
    name: null,
    expiresAt: null,
  };
}

/** An id claim: it goes into queries, so no control characters (a NUL would fail in the database). */
const idClaim = z
  .string()
  .min(1)
  .max(200)
  .refine((v) => !/\p{Cc}/u.test(v));

const claimsSchema = z.object({
  sub: idClaim.optional(),
  id: idClaim.optional(),
  institutionId: idClaim,
  role: z.enum(ROLES),
  contactId: idClaim.nullish(),
  isContact: z.boolean().nullish(),
  contactType: z.string().nullish(),
  permissions: z.array(z.string()).nullish(),
  email: z.string().nullish(),
  name: z.string().nullish(),
  exp: z.number(),
  iat: z.number().optional(),
  nbf: z.number().optional(),
});

/** How far in the future an `iat` may lie (clock skew between the CRM and us). */
export const TOKEN_CLOCK_SKEW_SECONDS = 60;
/** Default longest accepted lifetime (Auth.js sessions and dev tokens last 30 days). */
export const DEFAULT_MAX_TOKEN_AGE_SECONDS = 30 * 24 * 3600;

export class TokenError extends Error {}

/** Derived JWE keys by secret and salt: derived once, not on every request. */
const derivedKeys = new Map<string, Uint8Array>();
function derivedKey(secret: string, salt: string, info: string, length: number): Uint8Array {
  const id = `${length}\u0000${salt}\u0000${secret}`;
  let key = derivedKeys.get(id);
  if (!key) {
    key = new Uint8Array(hkdfSync('sha256', secret, salt, info, length));
    derivedKeys.set(id, key);
  }
  return key;
}
/** Auth.js v5 derives its JWE key from the secret with the cookie name as salt. */
const authJsKey = (secret: string, salt: string) => derivedKey(secret, salt, `Auth.js Generated Encryption Key (${salt})`, 64);
/** NextAuth v4: 32-byte key, empty salt. */
const nextAuthV4Key = (secret: string) => derivedKey(secret, '', 'NextAuth.js Generated Encryption Key', 32);

export interface DecodeOptions {
  secret: string;
  cookieName: string;
  now?: Date;
  /** Longest lifetime accepted: `exp - iat` (or `exp - now` without `iat`). */
  maxAgeSeconds?: number;
}

type Claims = z.output<typeof claimsSchema>;

/** A token whose signature (or encryption) and claims were checked: what does not depend on the time. */
interface VerifiedToken {
  session: Session;
  exp: number;
  iat: number | undefined;
  nbf: number | undefined;
}

/**
 * HS256 verifiers by secret. The expiry and not-before are checked by `checkTimes` against the
 * caller's clock, so a verifier (and the key it prepares) is made once per secret.
 */
const hs256Verifiers = new Map<string, (token: string) => unknown>();
function hs256Verifier(secret: string) {
  let verify = hs256Verifiers.get(secret);
  if (!verify) {
    // fast-jwt verifies with node:crypto synchronously; jose's WebCrypto verify costs about a
    // millisecond a token here (thread-pool round trip), on every authenticated request.
    verify = createVerifier({ key: secret, algorithms: ['HS256'], ignoreExpiration: true, ignoreNotBefore: true });
    hs256Verifiers.set(secret, verify);
  }
  return verify;
}

/** Signature or decryption, then the claims: everything but the time checks. Throws TokenError. */
async function verifyToken(token: string, secret: string, cookieName: string): Promise<VerifiedToken> {
  const parts = token.split('.');
  let payload: unknown;
  try {
    if (parts.length === 3) {
      payload = hs256Verifier(secret)(token);
    } else if (parts.length === 5) {
      const v4 = cookieName.includes('next-auth');
      const key = v4 ? nextAuthV4Key(secret) : authJsKey(secret, cookieName);
      const { plaintext } = await compactDecrypt(token, key, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: [v4 ? 'A256GCM' : 'A256CBC-HS512'],
      });
      payload = JSON.parse(new TextDecoder().decode(plaintext));
    } else {
      throw new TokenError('malformed token');
    }
  } catch (err) {
    throw new TokenError(err instanceof Error ? err.message : 'invalid token');
  }
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) throw new TokenError('token lacks required claims (institutionId, role, sub, exp)');
  const c: Claims = claims.data;
  const userId = c.sub ?? c.id;
  if (!userId) throw new TokenError('token has no subject');
  const session: Session = {
    userId,
    personId: c.contactId ?? userId,
    institutionId: c.institutionId,
    role: c.role,
    contactId: c.contactId ?? null,
    isContact: c.isContact ?? false,
    contactType: c.contactType ?? null,
    permissions: c.permissions ?? [],
    email: c.email ?? null,
    name: c.name ?? null,
    expiresAt: new Date(c.exp * 1000).toISOString(),
  };
  return { session, exp: c.exp, iat: c.iat, nbf: c.nbf };
}

/** The checks that depend on the time, run on every request (also for a cached token). */
function checkTimes(t: VerifiedToken, now: Date, maxAgeSeconds = DEFAULT_MAX_TOKEN_AGE_SECONDS) {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (t.nbf !== undefined && t.nbf > nowSeconds) throw new TokenError('token not active yet');
  if (t.iat !== undefined && t.iat > nowSeconds + TOKEN_CLOCK_SKEW_SECONDS) throw new TokenError('token issued in the future');
  if (t.exp - (t.iat ?? nowSeconds) > maxAgeSeconds) throw new TokenError('token lifetime exceeds the maximum');
  if (t.exp <= nowSeconds) throw new TokenError('token expired');
}

/**
 * Decode a session token: HS256 JWS, Auth.js v5 JWE (dir + A256CBC-HS512), or NextAuth v4 JWE
 * (dir + A256GCM) when the cookie is a next-auth one. Throws TokenError on any refusal.
 */
export async function decodeSessionToken(token: string, opts: DecodeOptions): Promise<Session> {
  const verified = await verifyToken(token, opts.secret, opts.cookieName);
  checkTimes(verified, opts.now ?? new Date(), opts.maxAgeSeconds);
  return verified.session;
}

/** Verified tokens a SessionDecoder keeps (by their exact text); about 1–2 KB each. */
export const SESSION_CACHE_SIZE = 10_000;

export interface SessionDecoder {
  /** As `decodeSessionToken`; the returned session is shared and frozen. */
  decode(token: string, now: Date): Promise<Session>;
  /**
   * The same for a token that verified before, without waiting: its session, checked against
   * `now` (throws TokenError when that refuses it), or undefined when it still has to be
   * verified by `decode`.
   */
  decodeVerified(token: string, now: Date): Session | undefined;
}

/**
 * `decodeSessionToken` for the request path: a token that verified once is kept (least recently
 * used out, SESSION_CACHE_SIZE of them) by its exact text, signature included, so the next
 * request with it skips the HMAC or the decryption (a JWE costs a WebCrypto round trip) and the
 * claims parse. The time checks (expiry, not-before, issued-in-the-future, lifetime) still run
 * on every request against the caller's clock. Refused tokens are never kept.
 */
export function createSessionDecoder(opts: Omit<DecodeOptions, 'now'>): SessionDecoder {
  const verified = new LRUCache<string, VerifiedToken>({ max: SESSION_CACHE_SIZE });
  return {
    async decode(token, now) {
      let t = verified.get(token);
      if (!t) {
        t = await verifyToken(token, opts.secret, opts.cookieName);
        Object.freeze(t.session.permissions);
        Object.freeze(t.session);
        verified.set(token, t);
      }
      checkTimes(t, now, opts.maxAgeSeconds);
      return t.session;
    },
    decodeVerified(token, now) {
      const t = verified.get(token);
      if (!t) return undefined;
      checkTimes(t, now, opts.maxAgeSeconds);
      return t.session;
    },
  };
}

export interface MintInput {
  sub: string;
  institutionId: string;
  role: Role;
  contactId?: string;
  isContact?: boolean;
  contactType?: string;
  permissions?: string[];
  email?: string;
  name?: string;
  /** Lifetime in seconds (default 30 days). */
  expiresIn?: number;
}

/** Sign an HS256 session token (dev tokens, tests). */
export async function mintToken(secret: string, input: MintInput, now = new Date()): Promise<string> {
  const { expiresIn = 30 * 24 * 3600, ...claims } = input;
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(input.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + expiresIn)
    .sign(new TextEncoder().encode(secret));
}
