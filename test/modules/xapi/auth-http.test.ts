/**
 * The LRS as an HTTP resource: credentials (issued by an ADMIN, in the service envelope),
 * authentication (Basic credentials, Bearer sessions acting as their own agent), the version
 * header, errors outside the envelope, the about, activities and agents resources, CORS, the
 * alternate request syntax, and rate limits per credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectError, expectOk } from '../../helpers/expect.js';
import { rawRows } from '../../../src/platform/db/client.js';
import { DEMO_ADMIN_ID, DEMO_SIBLING_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID } from '../../../src/dev/crm-sim/fixtures.js';
import { activityId, expectLrsError, issueCredential, lrs, post, statement, uuid, verb, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;
beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t);
});
afterAll(async () => t.close());

const me = (personId: string) => ({ objectType: 'Agent', account: { homePage: 'http://lms.test', name: personId } });

describe('credentials (ADMIN, service envelope)', () => {
  it('issues a key and a secret shown once, stored as an scrypt hash; lists without secrets; deletes', async () => {
    const admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    const created = expectOk(await t.request('POST', '/api/xapi/credentials', { token: admin, body: { name: 'Player' } }), 201);
    expect(created.key).toMatch(/^xk_[0-9a-f]{32}$/);
    expect(created.secret.length).toBeGreaterThan(30);
    const [row] = await rawRows<{ secret_hash: string }>(t.db, sql`select secret_hash from xapi_credentials where id = ${created.id}`);
    expect(row!.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(row!.secret_hash).not.toContain(created.secret);
    const list = expectOk(await t.request('GET', '/api/xapi/credentials', { token: admin }));
    expect(list.map((c: { id: string }) => c.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.secret);
    const [{ n }] = await rawRows<{ n: number }>(t.db, sql`select count(*)::int as n from audit_log where action = 'xapi_credential.create' and target_id = ${created.id}`);
    expect(n).toBe(1);

    const auth = `Basic ${Buffer.from(`${created.key}:${created.secret}`).toString('base64')}`;
    expect((await lrs(t, 'GET', 'statements', { auth })).status).toBe(200);
    expect(expectOk(await t.request('DELETE', `/api/xapi/credentials/${created.id}`, { token: admin }))).toEqual({ id: created.id, deleted: true });
    expectLrsError(await lrs(t, 'GET', 'statements', { auth }), 401);
    expectError(await t.request('DELETE', `/api/xapi/credentials/${created.id}`, { token: admin }), 404, 'NOT_FOUND');
  });

  it('is ADMIN only, validates the name, and keeps its errors in the envelope', async () => {
    const teacher = await t.token({ role: 'TEACHER', id: DEMO_TEACHER_ID });
    expectError(await t.request('POST', '/api/xapi/credentials', { token: teacher, body: { name: 'x' } }), 403, 'FORBIDDEN');
    expectError(await t.request('GET', '/api/xapi/credentials', { token: teacher }), 403, 'FORBIDDEN');
    const admin = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    expectError(await t.request('POST', '/api/xapi/credentials', { token: admin, body: { name: '' } }), 400, 'VALIDATION_ERROR');
    expectError(await t.request('POST', '/api/xapi/credentials', { body: { name: 'x' } }), 401, 'AUTH_REQUIRED');
    const wrong = await t.request('PUT', '/api/xapi/credentials', { token: admin, body: {} });
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('authentication', () => {
  it('401 without Authorization, with a wrong secret, an unknown key or a bad token; WWW-Authenticate names Basic', async () => {
    const none = await lrs(t, 'GET', 'statements');
    expectLrsError(none, 401);
    expect(none.headers['www-authenticate']).toMatch(/^Basic/);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: `Basic ${Buffer.from(`${cred.key}:wrong`).toString('base64')}` }), 401);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: `Basic ${Buffer.from('xk_unknown:secret').toString('base64')}` }), 401);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: 'Basic !!!' }), 401);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: 'Bearer not-a-token' }), 401);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: 'Digest x' }), 401);
  });

  it('a session writes only statements it is the actor of (authority: the service), and reads only those', async () => {
    const student = `Bearer ${await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID })}`;
    const sibling = `Bearer ${await t.token({ role: 'STUDENT', id: DEMO_SIBLING_ID })}`;
    expectLrsError(
      await lrs(t, 'POST', 'statements', { auth: student, body: statement({ actor: me(DEMO_SIBLING_ID) }) }),
      403,
      /^A session may only store statements whose actor is its own agent$/,
    );
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: student, body: statement() }), 403);
    const [mine] = await post(t, student, statement({ actor: { ...me(DEMO_STUDENT_ID), name: 'Student One' } }));
    const [theirs] = await post(t, sibling, statement({ actor: me(DEMO_SIBLING_ID) }));
    const got = await lrs(t, 'GET', 'statements', { auth: student, query: { statementId: mine! } });
    expect(got.body.authority).toEqual({ objectType: 'Agent', name: 'LMS', account: { homePage: 'http://lms.test/xapi', name: 'lms' } });
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: student, query: { statementId: theirs! } }), 404);
    const list = await lrs(t, 'GET', 'statements', { auth: student });
    expect(list.body.statements.map((s: { id: string }) => s.id)).toEqual([mine]);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: student, query: { agent: JSON.stringify(me(DEMO_SIBLING_ID)) } }), 403);
    // a credential sees both
    const all = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { agent: JSON.stringify(me(DEMO_SIBLING_ID)) } });
    expect(all.body.statements.map((s: { id: string }) => s.id)).toEqual([theirs]);
    // documents: only its own agent; activity profiles read-only
    const act = activityId('session-docs');
    const state = (who: string) => ({ activityId: act, agent: JSON.stringify(me(who)), stateId: 's' });
    expect((await lrs(t, 'PUT', 'activities/state', { auth: student, query: state(DEMO_STUDENT_ID), body: { a: 1 } })).status).toBe(204);
    expectLrsError(await lrs(t, 'GET', 'activities/state', { auth: student, query: state(DEMO_SIBLING_ID) }), 403, /^A session may only use the documents of its own agent$/);
    expectLrsError(await lrs(t, 'PUT', 'activities/profile', { auth: student, query: { activityId: act, profileId: 'p' }, body: {} }), 403);
    expectLrsError(await lrs(t, 'GET', 'agents', { auth: student, query: { agent: JSON.stringify(me(DEMO_SIBLING_ID)) } }), 403, /^A session may only look up its own agent$/);
    const person = await lrs(t, 'GET', 'agents', { auth: student, query: { agent: JSON.stringify(me(DEMO_STUDENT_ID)) } });
    expect(person.body).toEqual({ objectType: 'Person', name: ['Student One'], account: [{ homePage: 'http://lms.test', name: DEMO_STUDENT_ID }] });
  });

  it('cookies do not authenticate the LRS', async () => {
    const token = await t.token({ role: 'STUDENT', id: DEMO_STUDENT_ID });
    expectLrsError(await lrs(t, 'GET', 'statements', { headers: { cookie: `${t.config.SESSION_COOKIE_NAME}=${token}` } }), 401);
  });
});

describe('the version header and errors outside the envelope', () => {
  it('every request but /about needs X-Experience-API-Version 1.0.x; every answer carries 1.0.3', async () => {
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: cred.authorization, noVersion: true }), 400, /X-Experience-API-Version/);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: cred.authorization, headers: { 'x-experience-api-version': '0.95' } }), 400);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: cred.authorization, headers: { 'x-experience-api-version': '2.0.0' } }), 400);
    for (const v of ['1.0', '1.0.0', '1.0.1', '1.0.3', '1.0.9']) {
      expect((await lrs(t, 'GET', 'statements', { auth: cred.authorization, headers: { 'x-experience-api-version': v } })).status, v).toBe(200);
    }
  });

  it('about is public and lists the versions', async () => {
    const res = await lrs(t, 'GET', 'about', { noVersion: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ version: ['1.0.3', '1.0.2', '1.0.1', '1.0.0'] });
    expect(res.headers['x-experience-api-version']).toBe('1.0.3');
  });

  it('unknown resources are 404 and wrong methods 405 with Allow, in plain text; HEAD works on GET resources', async () => {
    expectLrsError(await lrs(t, 'GET', 'nothing-here', { auth: cred.authorization }), 404);
    const wrong = await lrs(t, 'DELETE', 'statements', { auth: cred.authorization });
    expectLrsError(wrong, 405);
    expect(wrong.headers.allow).toContain('POST');
    const head = await lrs(t, 'HEAD', 'statements', { auth: cred.authorization });
    expect(head.status).toBe(200);
    expect(head.raw).toBe('');
    expect(head.headers['x-experience-api-consistent-through']).toBeDefined();
    // also under /api/v1
    const v1 = await t.app.inject({ method: 'GET', url: '/api/v1/xapi/about' });
    expect(v1.statusCode).toBe(200);
  });

  it('the input guard still applies (NUL in a parameter is 400, in plain text)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/xapi/statements?verb=http://x.example/a%00b',
      headers: { authorization: cred.authorization, 'x-experience-api-version': '1.0.3' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
  });
});

describe('activities and agents resources', () => {
  it('an activity with its merged definition; one named without a definition; unknown 404', async () => {
    const act = activityId(`def-${uuid()}`);
    await post(t, cred.authorization, [
      statement({ object: { id: act, definition: { name: { en: 'A' }, type: 'http://example.org/t1', extensions: { 'http://example.org/e1': 1 } } } }),
      statement({ object: { id: act, definition: { name: { fr: 'B' }, extensions: { 'http://example.org/e2': 2 } } } }),
    ]);
    const res = await lrs(t, 'GET', 'activities', { auth: cred.authorization, query: { activityId: act } });
    expect(res.body).toEqual({
      objectType: 'Activity',
      id: act,
      definition: { name: { en: 'A', fr: 'B' }, type: 'http://example.org/t1', extensions: { 'http://example.org/e1': 1, 'http://example.org/e2': 2 } },
    });
    const bare = activityId(`bare-${uuid()}`);
    await post(t, cred.authorization, statement({ object: { id: bare } }));
    expect((await lrs(t, 'GET', 'activities', { auth: cred.authorization, query: { activityId: bare } })).body).toEqual({ objectType: 'Activity', id: bare });
    // One no statement named: still an Activity Object (xAPI 1.0.3 Communication 2.5, SHOULD).
    const never = await lrs(t, 'GET', 'activities', { auth: cred.authorization, query: { activityId: activityId('never') } });
    expect(never.status).toBe(200);
    expect(never.body).toEqual({ objectType: 'Activity', id: activityId('never') });
    expectLrsError(await lrs(t, 'GET', 'activities', { auth: cred.authorization }), 400);
  });

  it('a Person with the names statements used, or just the identifier', async () => {
    await post(t, cred.authorization, [
      statement({ actor: { mbox: 'mailto:pat@example.org', name: 'Pat' } }),
      statement({ actor: { mbox: 'mailto:pat@example.org', name: 'Patricia' } }),
    ]);
    const res = await lrs(t, 'GET', 'agents', { auth: cred.authorization, query: { agent: JSON.stringify({ mbox: 'mailto:pat@example.org' }) } });
    expect(res.body).toEqual({ objectType: 'Person', name: ['Pat', 'Patricia'], mbox: ['mailto:pat@example.org'] });
    const unknown = await lrs(t, 'GET', 'agents', { auth: cred.authorization, query: { agent: JSON.stringify({ openid: 'http://id.example.org/x' }) } });
    expect(unknown.body).toEqual({ objectType: 'Person', openid: ['http://id.example.org/x'] });
    expectLrsError(await lrs(t, 'GET', 'agents', { auth: cred.authorization, query: { agent: 'x' } }), 400);
  });
});

describe('CORS and the alternate request syntax', () => {
  it('answers preflights from any origin and exposes the xAPI headers', async () => {
    const pre = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/xapi/statements',
      headers: {
        origin: 'https://content.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,x-experience-api-version,content-type',
      },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(String(pre.headers['access-control-allow-headers'])).toMatch(/X-Experience-API-Version/i);
    const res = await lrs(t, 'GET', 'statements', { auth: cred.authorization, headers: { origin: 'https://content.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(String(res.headers['access-control-expose-headers'])).toMatch(/X-Experience-API-Consistent-Through/i);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('POST ?method=PUT|GET with the headers and content in a form body', async () => {
    const id = uuid();
    const form = new URLSearchParams({
      statementId: id,
      Authorization: cred.authorization,
      'X-Experience-API-Version': '1.0.3',
      'Content-Type': 'application/json',
      content: JSON.stringify(statement({ verb: verb('alt-syntax') })),
    });
    const put = await t.app.inject({
      method: 'POST',
      url: '/api/xapi/statements?method=PUT',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
    expect(put.statusCode, put.body).toBe(204);
    const get = await t.app.inject({
      method: 'POST',
      url: '/api/xapi/statements?method=GET',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ statementId: id, Authorization: cred.authorization, 'X-Experience-API-Version': '1.0.3' }).toString(),
    });
    expect(get.statusCode, get.body).toBe(200);
    expect(get.json().verb.id).toBe('http://adlnet.gov/expapi/verbs/alt-syntax');
    // other URL parameters, a non-form body or an unknown method are 400; the form's Authorization is required
    const bad = (url: string, payload: string, type = 'application/x-www-form-urlencoded') => t.app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
    expect(
      (await bad(`/api/xapi/statements?method=GET&statementId=${id}`, new URLSearchParams({ Authorization: cred.authorization, 'X-Experience-API-Version': '1.0.3' }).toString()))
        .statusCode,
    ).toBe(400);
    expect((await bad('/api/xapi/statements?method=GET', '{}', 'application/json')).statusCode).toBe(400);
    expect(
      (await bad('/api/xapi/statements?method=PATCH', new URLSearchParams({ Authorization: cred.authorization, 'X-Experience-API-Version': '1.0.3' }).toString())).statusCode,
    ).toBe(400);
    expect((await bad('/api/xapi/statements?method=GET', new URLSearchParams({ 'X-Experience-API-Version': '1.0.3' }).toString())).statusCode).toBe(401);
  });
});

describe('rate limits', () => {
  it('count per credential, not per IP, with RATE_LIMIT_XAPI', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_XAPI: '3' } });
    try {
      const a = await issueCredential(limited, { name: 'a' });
      const b = await issueCredential(limited, { name: 'b' });
      for (let i = 0; i < 3; i++) expect((await lrs(limited, 'GET', 'statements', { auth: a.authorization })).status).toBe(200);
      const over = await lrs(limited, 'GET', 'statements', { auth: a.authorization });
      expect(over.status).toBe(429);
      expect(over.headers['content-type']).toMatch(/^text\/plain/);
      expect((await lrs(limited, 'GET', 'statements', { auth: b.authorization })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
