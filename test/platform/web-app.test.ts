/**
 * The web app next to the API: built files served from WEB_DIR with their cache headers, the
 * app's index.html for client-side routes (never for /api/*, missing files or other methods),
 * the public web config, and the development sign-in that sets the session cookie (absent in
 * production).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError, expectOk } from '../helpers/expect.js';

const INDEX = '<!doctype html><title>app</title><div id="root"></div>';
let webDir: string;

beforeAll(async () => {
  webDir = await mkdtemp(join(tmpdir(), 'lms-web-'));
  await mkdir(join(webDir, 'assets'));
  await writeFile(join(webDir, 'index.html'), INDEX);
  await writeFile(join(webDir, 'assets', 'app-abc123.js'), 'console.log(1)');
  await writeFile(join(webDir, 'sw.js'), 'self.addEventListener("push", () => {})');
});
afterAll(async () => {
  if (webDir) await rm(webDir, { recursive: true, force: true });
});

const cookieOf = (setCookie: string | string[] | undefined): string => {
  const first = [setCookie ?? []].flat()[0] ?? '';
  return first.split(';')[0];
};

describe('serving the built web app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { WEB_DIR: webDir, AUTH_SIGNIN_URL: 'https://crm.example.org/auth/signin' } });
  }, 180_000);
  afterAll(() => t?.close());

  it('serves index.html at / and for client-side routes, revalidated on each load', async () => {
    for (const path of ['/', '/my-courses', '/courses/c1/lessons/l1?t=12']) {
      const res = await t.app.inject({ method: 'GET', url: path });
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.body).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('serves hashed assets for a year and other files revalidated', async () => {
    const asset = await t.app.inject({ method: 'GET', url: '/assets/app-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toBe('console.log(1)');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const sw = await t.app.inject({ method: 'GET', url: '/sw.js' });
    expect(sw.statusCode).toBe(200);
    expect(sw.headers['cache-control']).toBe('no-cache');
  });

  it('leaves the API, missing files and other methods to the 404 envelope', async () => {
    expectError(await t.request('GET', '/api/no-such-route'), 404, 'NOT_FOUND');
    expectError(await t.request('GET', '/api/v1/no-such-route'), 404, 'NOT_FOUND');
    expectError(await t.request('GET', '/assets/missing-123.js'), 404, 'NOT_FOUND');
    expectError(await t.request('POST', '/my-courses'), 404, 'NOT_FOUND');
    // A known API path asked with another method is still 405, not a page.
    expectError(await t.request('GET', '/api/courses/c1/enroll'), 405, 'METHOD_NOT_ALLOWED');
    const docs = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(docs.json().openapi).toBe('3.1.0');
  });

  it('GET /api/web/config tells the app where to sign in and that development sign-in exists', async () => {
    expect(expectOk(await t.request('GET', '/api/web/config'))).toEqual({ signInUrl: 'https://crm.example.org/auth/signin', devSignIn: true, vapidPublicKey: null });
  });
});

describe('development sign-in', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { WEB_DIR: webDir } });
  }, 180_000);
  afterAll(() => t?.close());

  it('lists the CRM simulator’s people of both institutions with roles', async () => {
    const people = expectOk(await t.request('GET', '/api/dev/people'));
    expect(people).toContainEqual({
      personId: 'c_demo_stu_01',
      name: expect.any(String),
      role: 'STUDENT',
      institutionId: 'inst_demo',
      institutionName: 'Demo Academy',
      detail: 'Grade 6 A',
    });
    expect(people.find((p: any) => p.personId === 'c_demo_par_01')).toMatchObject({ role: 'PARENT', detail: expect.stringMatching(/^parent of .+, .+$/) });
    expect(people.find((p: any) => p.personId === 'u_demo_teacher')).toMatchObject({ role: 'TEACHER' });
    expect(people.find((p: any) => p.personId === 'u_northside_admin')).toMatchObject({ role: 'ADMIN', institutionId: 'inst_north' });
  });

  it('sets an HttpOnly, Secure, SameSite=Lax session cookie that authenticates API calls', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/dev/sign-in', payload: { personId: 'c_demo_par_01' }, headers: { 'sec-fetch-site': 'same-origin' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ personId: 'c_demo_par_01', role: 'PARENT', institutionId: 'inst_demo', contactType: 'CONTACT_PARENT', isContact: true });
    const setCookie = [res.headers['set-cookie']].flat().join('\n');
    expect(setCookie).toMatch(/^__Secure-authjs\.session-token=[^;]+;/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/Secure/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\//);
    const cookie = cookieOf(res.headers['set-cookie']);

    const session = await t.app.inject({ method: 'GET', url: '/api/auth/session', headers: { cookie } });
    expect(session.json().data).toMatchObject({ personId: 'c_demo_par_01', role: 'PARENT' });
    const children = await t.app.inject({ method: 'GET', url: '/api/parent/children', headers: { cookie } });
    expect(children.statusCode).toBe(200);
    expect(
      children
        .json()
        .data.children.map((c: any) => c.contactId)
        .sort(),
    ).toEqual(['c_demo_stu_01', 'c_demo_stu_02']);

    // A same-origin write with the cookie passes the CSRF guard; a cross-site one does not.
    const host = 'lms.test';
    const sameOrigin = await t.app.inject({ method: 'PATCH', url: '/api/notifications/read', payload: { all: true }, headers: { cookie, host, origin: `http://${host}` } });
    expect(sameOrigin.statusCode, sameOrigin.body).toBe(200);
    const crossSite = await t.app.inject({ method: 'PATCH', url: '/api/notifications/read', payload: { all: true }, headers: { cookie, host, origin: 'https://evil.example' } });
    expect(crossSite.statusCode).toBe(403);
  });

  it('refuses an unknown person (404) and a cross-site sign-in (403), setting no cookie', async () => {
    const unknown = await t.app.inject({ method: 'POST', url: '/api/dev/sign-in', payload: { personId: 'c_nobody' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['set-cookie']).toBeUndefined();
    const cross = await t.app.inject({ method: 'POST', url: '/api/dev/sign-in', payload: { personId: 'c_demo_stu_01' }, headers: { 'sec-fetch-site': 'cross-site' } });
    expect(cross.statusCode).toBe(403);
    expect(cross.json().error.code).toBe('FORBIDDEN');
    expect(cross.headers['set-cookie']).toBeUndefined();
  });

  it('sign-out clears the cookie', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/dev/sign-out', payload: {} });
    expect(res.statusCode).toBe(200);
    expect([res.headers['set-cookie']].flat().join('\n')).toMatch(/^__Secure-authjs\.session-token=;.*Expires=Thu, 01 Jan 1970/);
  });
});

describe('in production', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The database is handed to the app directly; the URL only satisfies production's config check.
    t = await createTestApp({ env: { NODE_ENV: 'production', DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', WEB_DIR: webDir } });
  }, 180_000);
  afterAll(() => t?.close());

  it('has no development sign-in routes (404) and says so in the web config', async () => {
    expectError(await t.request('GET', '/api/dev/people'), 404, 'NOT_FOUND');
    const signIn = await t.app.inject({ method: 'POST', url: '/api/dev/sign-in', payload: { personId: 'c_demo_stu_01' } });
    expect(signIn.statusCode).toBe(404);
    expect(signIn.headers['set-cookie']).toBeUndefined();
    expectError(await t.request('POST', '/api/dev/sign-out'), 404, 'NOT_FOUND');
    expect(expectOk(await t.request('GET', '/api/web/config'))).toMatchObject({ devSignIn: false, signInUrl: null });
  });

  it('still serves the app', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/children' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(INDEX);
  });
});

describe('without a built app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { WEB_DIR: join(webDir, 'assets') } });
  }, 180_000);
  afterAll(() => t?.close());

  it('answers / with the 404 envelope and the API as usual', async () => {
    expectError(await t.request('GET', '/'), 404, 'NOT_FOUND');
    expectOk(await t.request('GET', '/api/web/config'));
  });
});
