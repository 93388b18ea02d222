import { hkdfSync } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import { SignJWT, jwtDecrypt, type JWTPayload } from 'jose';
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

const claimsSchema = z.object({
  sub: z.string().min(1).optional(),
  id: z.string().min(1).optional(),
  institutionId: z.string().min(1),
  role: z.enum(ROLES),
  contactId: z.string().min(1).nullish(),
  isContact: z.boolean().nullish(),
  contactType: z.string().nullish(),
  permissions: z.array(z.string()).nullish(),
  email: z.string().nullish(),
  name: z.string().nullish(),
  exp: z.number(),
  iat: z.number().optional(),
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

/**
 * Decode a session token: HS256 JWS, Auth.js v5 JWE (dir + A256CBC-HS512), or NextAuth v4 JWE
 * (dir + A256GCM) when the cookie is a next-auth one. Throws TokenError on any refusal.
 */
export async function decodeSessionToken(token: string, opts: DecodeOptions): Promise<Session> {
  const parts = token.split('.');
  const currentDate = opts.now;
  let payload: JWTPayload;
  try {
    if (parts.length === 3) {
      // fast-jwt verifies with node:crypto synchronously; jose's WebCrypto verify costs about a
      // millisecond a token here (thread-pool round trip), on every authenticated request.
      const verify = createVerifier({ key: opts.secret, algorithms: ['HS256'], clockTimestamp: currentDate?.getTime() });
      payload = verify(token) as JWTPayload;
    } else if (parts.length === 5) {
      const v4 = opts.cookieName.includes('next-auth');
      const key = v4 ? nextAuthV4Key(opts.secret) : authJsKey(opts.secret, opts.cookieName);
      ({ payload } = await jwtDecrypt(token, key, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: [v4 ? 'A256GCM' : 'A256CBC-HS512'],
        currentDate,
      }));
    } else {
      throw new TokenError('malformed token');
    }
  } catch (err) {
    throw new TokenError(err instanceof Error ? err.message : 'invalid token');
  }
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) throw new TokenError('token lacks required claims (institutionId, role, sub, exp)');
  const c = claims.data;
  const nowSeconds = Math.floor((currentDate ?? new Date()).getTime() / 1000);
  if (c.iat !== undefined && c.iat > nowSeconds + TOKEN_CLOCK_SKEW_SECONDS) throw new TokenError('token issued in the future');
  const maxAge = opts.maxAgeSeconds ?? DEFAULT_MAX_TOKEN_AGE_SECONDS;
  if (c.exp - (c.iat ?? nowSeconds) > maxAge) throw new TokenError('token lifetime exceeds the maximum');
  if (c.exp <= nowSeconds) throw new TokenError('token expired');
  const userId = c.sub ?? c.id;
  if (!userId) throw new TokenError('token has no subject');
  return {
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
