import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { desc, eq } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Deps, ServiceContext } from '../../platform/context.js';
import { withTx } from '../../platform/context.js';
import { requireAdmin } from '../../platform/auth/permissions.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { notFound } from '../../platform/http/errors.js';
import { audit, snapshot } from '../audit/audit.js';
import { xapiCredentials, type XapiCredential } from './xapi.tables.js';
import type { JsonObject } from './xapi.keys.js';

/**
 * HTTP Basic credentials of the LRS: a key (the user name) and a secret (the password), issued
 * by an ADMIN for their institution. The secret is shown once and kept as an scrypt hash;
 * checks compare in constant time. A verified pair is remembered for VERIFY_CACHE_MS (by a
 * SHA-256 of key and secret, never the secret itself), so a client posting statement after
 * statement does not pay a full scrypt each time; deleting a credential forgets it at once in
 * this process, and other processes within that time.
 */

const SCRYPT = { N: 16_384, r: 8, p: 1 } as const;
const KEY_BYTES = 16;
const SECRET_BYTES = 32;
export const VERIFY_CACHE_MS = 30_000;

const scrypt = (secret: string, salt: Buffer, length: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(secret, salt, length, opts, (err, key) => (err ? reject(err) : resolve(key))));

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}

/** What a verified credential gives the LRS. */
export interface VerifiedCredential {
  id: string;
  institutionId: string;
  key: string;
  name: string;
}

const verified = new LRUCache<string, VerifiedCredential>({ max: 10_000, ttl: VERIFY_CACHE_MS });
const cacheKey = (key: string, secret: string) => createHash('sha256').update(`${key}\u0000${secret}`).digest('base64url');

/** The credential of a Basic key and secret, or null. */
export async function verifyCredential(deps: Deps, key: string, secret: string): Promise<VerifiedCredential | null> {
  const ck = cacheKey(key, secret);
  const hit = verified.get(ck);
  if (hit) return hit;
  const [row] = await deps.database.db.select().from(xapiCredentials).where(eq(xapiCredentials.key, key)).limit(1);
  // Unknown keys still pay one scrypt, so timing does not tell which keys exist.
  const ok = await secretMatches(secret, row?.secretHash ?? DUMMY_HASH);
  if (!row || !ok) return null;
  const found = { id: row.id, institutionId: row.institutionId, key: row.key, name: row.name };
  verified.set(ck, found);
  return found;
}

const DUMMY_HASH = ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, Buffer.alloc(16).toString('base64url'), Buffer.alloc(32).toString('base64url')].join('$');

/** The authority of statements stored with a credential: an account on the service's credential page. */
export const credentialAuthority = (publicBaseUrl: string, c: { key: string; name: string }): JsonObject => ({
  objectType: 'Agent',
  name: c.name,
  account: { homePage: `${publicBaseUrl}/xapi/credentials`, name: c.key },
});

const toDto = (c: XapiCredential) => ({ id: c.id, key: c.key, name: c.name, createdBy: c.createdBy, createdAt: iso(c.createdAt) as string });

/** POST /api/xapi/credentials (ADMIN): a new pair; the secret is in this answer only. */
export async function createCredential(ctx: ServiceContext, body: { name: string }) {
  requireAdmin(ctx.actor);
  const key = `xk_${randomBytes(KEY_BYTES).toString('hex')}`;
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  const secretHash = await hashSecret(secret);
  return withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .insert(xapiCredentials)
      .values({ id: newId(), institutionId: tx.institutionId, key, secretHash, name: body.name, createdBy: tx.actor.personId, createdAt: tx.clock.now() })
      .returning();
    await audit(tx, { action: 'xapi_credential.create', targetType: 'xapi_credential', targetId: row.id, after: snapshot(row, ['key', 'name']) });
    return { ...toDto(row), secret };
  });
}

/** GET /api/xapi/credentials (ADMIN): the institution's pairs, newest first, without secrets. */
export async function listCredentials(ctx: ServiceContext) {
  requireAdmin(ctx.actor);
  const rows = await ctx.db.select().from(xapiCredentials).where(inTenant(ctx, xapiCredentials)).orderBy(desc(xapiCredentials.createdAt), desc(xapiCredentials.id));
  return rows.map(toDto);
}

/** DELETE /api/xapi/credentials/:id (ADMIN): the pair stops working (statements it stored stay). */
export async function deleteCredential(ctx: ServiceContext, id: string) {
  requireAdmin(ctx.actor);
  return withTx(ctx, async (tx) => {
    const [gone] = await tx.db
      .delete(xapiCredentials)
      .where(byId(tx, xapiCredentials, id))
      .returning();
    if (!gone) throw notFound('Credential');
    for (const [k, v] of verified.entries()) if (v.id === gone.id) verified.delete(k);
    await audit(tx, { action: 'xapi_credential.delete', targetType: 'xapi_credential', targetId: gone.id, before: snapshot(gone, ['key', 'name']) });
    return { id: gone.id, deleted: true as const };
  });
}
