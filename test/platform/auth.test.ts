import { hkdfSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptJWT, SignJWT, base64url } from 'jose';
import { encode as authJsEncode } from '@auth/core/jwt';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { hmacSha256Hex, verifyCronAuthorization, verifyWebhookSignature } from '../../src/platform/auth/signatures.js';
import { canManageCourses, canManageSession, isOwnerOrAdmin } from '../../src/platform/auth/permissions.js';
import { decodeSessionToken, type Session } from '../../src/platform/auth/tokens.js';

const SECRET = 'test-secret-0123456789abcdef0123456789';
const COOKIE = '__Secure-authjs.session-token';
let t: TestApp;

const claims = { sub: 'c_demo_stu_01', institutionId: 'inst_demo', role: 'STUDENT', contactId: 'c_demo_stu_01', isContact: true, contactType: 'CONTACT_STUDENT' };
const hs256 = (payload: Record<string, unknown>, secret = SECRET, exp = '1h') =>
  new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(exp).sign(new TextEncoder().encode(secret));
const session = (token: string, headers: Record<string, string> = {}) =>
  t.request('GET', '/api/test/whoami', { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

beforeAll(async () => {
  // Real time here: tokens minted by libraries carry the wall-clock iat/exp.
  t = await createTestApp({
    env: { AUTH_SECRET: SECRET, CRON_SECRET: 'cron-secret-value' },
    extraRoutes: (app) => {
      const typed = app.withTypeProvider<ZodTypeProvider>();
      typed.get('/api/test/whoami', async (req) => ({ data: req.session, error: null }));
      // Strict schemas, as most write routes have: a matching institutionId must not be an unknown key.
      typed.post(
        '/api/test/tenant/:institutionId?',
        { schema: { body: z.strictObject({ note: z.string().optional() }).optional(), querystring: z.strictObject({}) } },
        async (req) => ({ data: { ok: true, body: req.body ?? null, query: req.query }, error: null }),
      );
      typed.get('/api/test/cron', { config: { auth: 'cron' } }, async () => ({ data: { ran: true }, error: null }));
    },
  });
  t.clock.set(new Date());
});
afterAll(() => t.close());

describe('session tokens', () => {
  it('accepts an HS256 bearer token and exposes the session', async () => {
    const res = await session(await hs256(claims));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ userId: 'c_demo_stu_01', personId: 'c_demo_stu_01', institutionId: 'inst_demo', role: 'STUDENT', isContact: true });
  });

  it('accepts the session cookie, also when split into chunks', async () => {
    const token = await hs256(claims);
    const whole = await t.request('GET', '/api/test/whoami', { headers: { cookie: `${COOKIE}=${token}` } });
    expect(whole.status).toBe(200);
    const mid = Math.floor(token.length / 2);
    const split = await t.request('GET', '/api/test/whoami', {
      headers: { cookie: `${COOKIE}.1=${token.slice(mid)}; ${COOKIE}.0=${token.slice(0, mid)}` },
    });
    expect(split.status).toBe(200);
    expect(split.body.data.userId).toBe('c_demo_stu_01');
  });

  it('accepts an Auth.js v5 JWE made by @auth/core', async () => {
    const token = await authJsEncode({ token: { ...claims }, secret: SECRET, salt: COOKIE });
    expect(token.split('.')).toHaveLength(5);
    const res = await t.request('GET', '/api/test/whoami', { headers: { cookie: `${COOKIE}=${token}` } });
    expect(res.status).toBe(200);
    expect(res.body.data.institutionId).toBe('inst_demo');
  });

  it('decodes a NextAuth v4 JWE when the cookie is a next-auth one', async () => {
    const key = new Uint8Array(hkdfSync('sha256', SECRET, '', 'NextAuth.js Generated Encryption Key', 32));
    const token = await new EncryptJWT({ ...claims }).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).setIssuedAt().setExpirationTime('1h').encrypt(key);
    const s = await decodeSessionToken(token, { secret: SECRET, cookieName: '__Secure-next-auth.session-token' });
    expect(s.personId).toBe('c_demo_stu_01');
    await expect(decodeSessionToken(token, { secret: SECRET, cookieName: COOKIE })).rejects.toThrow();
  });

  it('uses contactId as the person id when present, else sub', async () => {
    const staff = await session(await hs256({ sub: 'u_demo_teacher', institutionId: 'inst_demo', role: 'TEACHER' }));
    expect(staff.body.data.personId).toBe('u_demo_teacher');
    const contact = await session(await hs256({ ...claims, sub: 'user-77', contactId: 'c_demo_stu_02' }));
    expect(contact.body.data).toMatchObject({ userId: 'user-77', personId: 'c_demo_stu_02' });
  });

  const refusals: Array<[string, () => Promise<string>]> = [
    ['no token', async () => ''],
    ['a bad signature', async () => hs256(claims, 'another-secret-0123456789abcdef')],
    [
      'alg none',
      async () => `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 }))}.`,
    ],
    ['HS512 instead of HS256', async () => new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET))],
    ['an expired token', async () => hs256(claims, SECRET, '-1m')],
    ['no institutionId', async () => hs256({ ...claims, institutionId: undefined })],
    ['a NUL in institutionId', async () => hs256({ ...claims, institutionId: 'inst_demo\u0000' })],
    ['a control character in contactId', async () => hs256({ ...claims, contactId: 'c_demo_stu_01\n' })],
    ['an unknown role', async () => hs256({ ...claims, role: 'JANITOR' })],
    ['garbage', async () => 'not.a.token'],
  ];
  for (const [name, make] of refusals) {
    it(`refuses ${name} with 401 AUTH_REQUIRED`, async () => {
      const res = await session(await make());
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ data: null, error: { code: 'AUTH_REQUIRED' } });
    });
  }

  it('GET /api/auth/session returns the session, or data null without one', async () => {
    const anon = await t.request('GET', '/api/auth/session');
    expect(anon.status).toBe(200);
    expect(anon.body).toEqual({ data: null, error: null });
    const bad = await t.request('GET', '/api/auth/session', { headers: { authorization: 'Bearer nope' } });
    expect(bad.body.data).toBeNull();
    const res = await t.request('GET', '/api/auth/session', { headers: { authorization: `Bearer ${await hs256({ ...claims, email: 'a@b.c', name: 'Ann' })}` } });
    expect(res.body.data).toMatchObject({ personId: 'c_demo_stu_01', role: 'STUDENT', institutionId: 'inst_demo', email: 'a@b.c', name: 'Ann', contactType: 'CONTACT_STUDENT' });
  });

  it('creates the institution row on first sight', async () => {
    await session(await hs256({ ...claims, institutionId: 'inst_brand_new' }));
    const res = await t.deps.database.db.execute(`select id from institutions where id = 'inst_brand_new'` as never);
    expect((res as unknown as { rows: unknown[] }).rows).toHaveLength(1);
  });
});

describe('tenancy', () => {
  it('refuses an institutionId in query, body or path that differs from the session with 403 TENANT_MISMATCH', async () => {
    const token = await hs256(claims);
    const h = { authorization: `Bearer ${token}` };
    const q = await t.request('POST', '/api/test/tenant?institutionId=inst_north', { headers: h, body: {} });
    expect(q.status).toBe(403);
    expect(q.body.error.code).toBe('TENANT_MISMATCH');
    const b = await t.request('POST', '/api/test/tenant', { headers: h, body: { institutionId: 'inst_north' } });
    expect(b.body.error.code).toBe('TENANT_MISMATCH');
    const p = await t.request('POST', '/api/test/tenant/inst_north', { headers: h, body: {} });
    expect(p.body.error.code).toBe('TENANT_MISMATCH');
    const same = await t.request('POST', '/api/test/tenant/inst_demo?institutionId=inst_demo', { headers: h, body: { institutionId: 'inst_demo', note: 'x' } });
    expect(same.status).toBe(200);
    expect(same.body.data).toEqual({ ok: true, body: { note: 'x' }, query: {} });
  });
});

describe('cron guard', () => {
  it('needs Authorization: Bearer <CRON_SECRET>', async () => {
    expect((await t.request('GET', '/api/test/cron')).status).toBe(401);
    expect((await t.request('GET', '/api/test/cron', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await t.request('GET', '/api/test/cron', { headers: { authorization: 'Bearer cron-secret-value' } });
    expect(ok.status).toBe(200);
  });

  it('is open when no secret is configured', () => {
    expect(verifyCronAuthorization(undefined, undefined)).toBe(true);
    expect(verifyCronAuthorization('s3cret', 'Bearer s3cret')).toBe(true);
    expect(verifyCronAuthorization('s3cret', 'Bearer s3cre')).toBe(false);
    expect(verifyCronAuthorization('s3cret', 's3cret')).toBe(false);
    expect(verifyCronAuthorization('s3cret', 'bearer s3cret')).toBe(true);
    expect(verifyCronAuthorization('s3cret', 'BEARER  s3cret ')).toBe(true);
    expect(verifyCronAuthorization('s3cret', 'Basic s3cret')).toBe(false);
    expect(verifyCronAuthorization('s3cret', 'Bearers3cret')).toBe(false);
  });
});

describe('webhook signature', () => {
  const body = Buffer.from('{"event":"recording_uploaded"}');
  const sig = hmacSha256Hex('whsec', body);
  it('accepts bare and sha256= prefixed hex', () => {
    expect(verifyWebhookSignature('whsec', body, sig)).toBe(true);
    expect(verifyWebhookSignature('whsec', body, `sha256=${sig}`)).toBe(true);
    expect(verifyWebhookSignature('whsec', body, sig.toUpperCase())).toBe(true);
  });
  it('refuses a wrong secret, changed body, missing or malformed header', () => {
    expect(verifyWebhookSignature('other', body, sig)).toBe(false);
    expect(verifyWebhookSignature('whsec', Buffer.from('{}'), sig)).toBe(false);
    expect(verifyWebhookSignature('whsec', body, undefined)).toBe(false);
    expect(verifyWebhookSignature('whsec', body, 'sha256=zz')).toBe(false);
  });
});

describe('permissions', () => {
  const s = (role: Session['role'], personId: string, permissions: string[] = []) => ({ role, personId, permissions }) as unknown as Session;
  it('canManageCourses: ADMIN, TEACHER or the permissions claim', () => {
    expect(canManageCourses(s('ADMIN', 'a'))).toBe(true);
    expect(canManageCourses(s('TEACHER', 't'))).toBe(true);
    expect(canManageCourses(s('STUDENT', 'x'))).toBe(false);
    expect(canManageCourses(s('STUDENT', 'x', ['canManageCourses']))).toBe(true);
    expect(canManageCourses(s('PARENT', 'p'))).toBe(false);
  });
  it('owner and host checks accept the owner and ADMIN only', () => {
    expect(isOwnerOrAdmin(s('TEACHER', 't1'), 't1')).toBe(true);
    expect(isOwnerOrAdmin(s('TEACHER', 't2'), 't1')).toBe(false);
    expect(isOwnerOrAdmin(s('ADMIN', 'a'), 't1')).toBe(true);
    expect(canManageSession(s('TEACHER', 'host'), 'host')).toBe(true);
    expect(canManageSession(s('STUDENT', 'x'), 'host')).toBe(false);
  });
});
