/**
 * Session-token lifetime rules: `exp` is required, the lifetime is capped
 * (AUTH_MAX_TOKEN_AGE_SECONDS) and an `iat` beyond the clock skew is refused; time comes from
 * the injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { encode as authJsEncode } from '@auth/core/jwt';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';

const SECRET = 'test-secret-0123456789abcdef0123456789';
const COOKIE = '__Secure-authjs.session-token';
const DAY = 24 * 3600;
let t: TestApp;
const claims = { sub: 'c_demo_stu_01', institutionId: 'inst_demo', role: 'STUDENT', contactId: 'c_demo_stu_01', isContact: true };
const now = () => Math.floor(t.clock.now().getTime() / 1000);

function hs256(times: { iat?: number; exp?: number }) {
  const jwt = new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' });
  if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
  if (times.exp !== undefined) jwt.setExpirationTime(times.exp);
  return jwt.sign(new TextEncoder().encode(SECRET));
}
const whoami = (token: string) => t.request('GET', '/api/auth/session', { headers: { authorization: `Bearer ${token}` } });
const me = (token: string) => t.request('GET', '/api/certificates', { headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  t = await createTestApp({ env: { AUTH_SECRET: SECRET, AUTH_MAX_TOKEN_AGE_SECONDS: String(7 * DAY) } });
});
afterAll(() => t.close());

describe('token lifetime', () => {
  it('accepts a token within the rules (by the injected clock, not the wall clock)', async () => {
    t.clock.set(new Date('2031-05-01T00:00:00Z'));
    const res = await whoami(await hs256({ iat: now(), exp: now() + DAY }));
    expect(expectOk(res)).toMatchObject({ personId: 'c_demo_stu_01' });
  });

  it('refuses a token without exp with 401 AUTH_REQUIRED', async () => {
    expectError(await me(await hs256({ iat: now() })), 401, 'AUTH_REQUIRED');
    expect(expectOk(await whoami(await hs256({ iat: now() })))).toBeNull();
  });

  it('refuses a token whose lifetime exceeds AUTH_MAX_TOKEN_AGE_SECONDS', async () => {
    expectError(await me(await hs256({ iat: now(), exp: now() + 8 * DAY })), 401, 'AUTH_REQUIRED');
    // Without iat, the remaining lifetime counts.
    expectError(await me(await hs256({ exp: now() + 8 * DAY })), 401, 'AUTH_REQUIRED');
    expect((await me(await hs256({ exp: now() + 6 * DAY }))).status).not.toBe(401);
  });

  it('refuses an iat in the future beyond 60 s of clock skew', async () => {
    expectError(await me(await hs256({ iat: now() + 300, exp: now() + DAY })), 401, 'AUTH_REQUIRED');
    expect((await me(await hs256({ iat: now() + 30, exp: now() + DAY }))).status).not.toBe(401);
  });

  it('applies the same rules to Auth.js v5 JWE cookies', async () => {
    t.clock.set(new Date());
    const ok = await authJsEncode({ token: { ...claims }, secret: SECRET, salt: COOKIE, maxAge: DAY });
    expect((await t.request('GET', '/api/certificates', { headers: { cookie: `${COOKIE}=${ok}` } })).status).not.toBe(401);
    const long = await authJsEncode({ token: { ...claims }, secret: SECRET, salt: COOKIE, maxAge: 30 * DAY });
    expectError(await t.request('GET', '/api/certificates', { headers: { cookie: `${COOKIE}=${long}` } }), 401, 'AUTH_REQUIRED');
  });

  it('re-checks the time on every request, also for a token that was accepted before (verified tokens are cached)', async () => {
    t.clock.set(new Date('2031-06-01T00:00:00Z'));
    const token = await hs256({ iat: now(), exp: now() + 3600 });
    expect(expectOk(await whoami(token))).toMatchObject({ personId: 'c_demo_stu_01' });
    expect((await me(token)).status).toBe(200);
    t.clock.set(new Date('2031-06-01T01:00:00Z')); // exactly exp
    expectError(await me(token), 401, 'AUTH_REQUIRED');
    expect(expectOk(await whoami(token))).toBeNull();
    // Back before exp (a clock that moved back): accepted again, so nothing was remembered as refused.
    t.clock.set(new Date('2031-06-01T00:30:00Z'));
    expect((await me(token)).status).toBe(200);
  });

  it('refuses a token before its nbf, and accepts it from then on', async () => {
    t.clock.set(new Date('2031-07-01T00:00:00Z'));
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now())
      .setNotBefore(now() + 600)
      .setExpirationTime(now() + DAY)
      .sign(new TextEncoder().encode(SECRET));
    expectError(await me(token), 401, 'AUTH_REQUIRED');
    t.clock.set(new Date('2031-07-01T00:10:00Z'));
    expect((await me(token)).status).toBe(200);
  });
});
