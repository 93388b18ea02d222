/**
 * Document resources (xAPI 1.0.3 Communication 2.3 state, 2.4 activity profile, 2.6 agent
 * profile): single documents and id lists, ETag / If-Match / If-None-Match concurrency, JSON
 * merge on POST, Last-Modified, and the 400s of missing or malformed parameters.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { activityId, expectLrsError, issueCredential, lrs, mbox, uuid, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;
beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t);
});
afterAll(async () => t.close());

const etag = (s: string) => `"${createHash('sha1').update(s).digest('hex')}"`;
const agent = JSON.stringify(mbox('doc-owner'));
const doc = (method: string, path: string, query: Record<string, string>, body?: string, headers: Record<string, string> = {}) =>
  lrs(t, method, path, { auth: cred.authorization, query, ...(body !== undefined ? { payload: body, headers: { 'content-type': 'application/json', ...headers } } : { headers }) });

describe('activities/state', () => {
  const act = activityId('state-act');
  const at = (stateId?: string, extra: Record<string, string> = {}) => ({ activityId: act, agent, ...(stateId ? { stateId } : {}), ...extra });

  it('PUT stores, GET returns the bytes with Content-Type, ETag and Last-Modified; unknown is 404', async () => {
    const put = await doc('PUT', 'activities/state', at('s1'), '{"page":3}');
    expect(put.status, put.raw).toBe(204);
    const got = await doc('GET', 'activities/state', at('s1'));
    expect(got.status).toBe(200);
    expect(got.raw).toBe('{"page":3}');
    expect(got.headers['content-type']).toMatch(/^application\/json/);
    expect(got.headers.etag).toBe(etag('{"page":3}'));
    expect(got.headers['last-modified']).toBe(new Date('2026-03-02T09:00:00Z').toUTCString());
    expectLrsError(await doc('GET', 'activities/state', at('nope')), 404);
    // any content type is kept as sent
    expect((await doc('PUT', 'activities/state', at('bin'), 'raw bytes', { 'content-type': 'application/octet-stream' })).status).toBe(204);
    const bin = await doc('GET', 'activities/state', at('bin'));
    expect(bin.raw).toBe('raw bytes');
    expect(bin.headers['content-type']).toBe('application/octet-stream');
  });

  it('registration separates documents; GET without stateId lists ids, since filters them', async () => {
    const reg = uuid();
    await doc('PUT', 'activities/state', at('r1', { registration: reg }), '{"a":1}');
    expectLrsError(await doc('GET', 'activities/state', at('r1')), 404);
    expect((await doc('GET', 'activities/state', at('r1', { registration: reg }))).raw).toBe('{"a":1}');
    t.clock.set('2026-03-03T09:00:00.000Z');
    await doc('PUT', 'activities/state', at('late'), '{}');
    expect((await doc('GET', 'activities/state', at())).body).toEqual(['bin', 'late', 'r1', 's1']);
    expect((await doc('GET', 'activities/state', at(undefined, { registration: reg }))).body).toEqual(['r1']);
    expect((await doc('GET', 'activities/state', at(undefined, { since: '2026-03-02T12:00:00Z' }))).body).toEqual(['late']);
  });

  it('POST merges JSON objects; non-JSON on either side is 400', async () => {
    await doc('PUT', 'activities/state', at('m'), '{"a":1,"b":{"x":1}}');
    expect((await doc('POST', 'activities/state', at('m'), '{"b":{"y":2},"c":3}')).status).toBe(204);
    expect((await doc('GET', 'activities/state', at('m'))).body).toEqual({ a: 1, b: { y: 2 }, c: 3 });
    expectLrsError(await doc('POST', 'activities/state', at('m'), '[1,2]'), 400);
    expectLrsError(await doc('POST', 'activities/state', at('m'), 'text', { 'content-type': 'text/plain' }), 400);
    expectLrsError(await doc('POST', 'activities/state', at('bin'), '{"a":1}'), 400);
    expectLrsError(await doc('PUT', 'activities/state', at('m'), '{"a":'), 400);
    // POST to a new document stores it
    expect((await doc('POST', 'activities/state', at('fresh'), '{"n":1}')).status).toBe(204);
    expect((await doc('GET', 'activities/state', at('fresh'))).body).toEqual({ n: 1 });
  });

  it('If-Match and If-None-Match: 412 when they do not hold', async () => {
    await doc('PUT', 'activities/state', at('c'), '{"v":1}');
    expectLrsError(await doc('PUT', 'activities/state', at('c'), '{"v":2}', { 'if-match': etag('{"v":0}') }), 412);
    expectLrsError(await doc('PUT', 'activities/state', at('c'), '{"v":2}', { 'if-none-match': '*' }), 412);
    expect((await doc('PUT', 'activities/state', at('c'), '{"v":2}', { 'if-match': etag('{"v":1}') })).status).toBe(204);
    expectLrsError(await doc('PUT', 'activities/state', at('new-one'), '{}', { 'if-match': '*' }), 412);
    // state documents may be replaced without a precondition header
    expect((await doc('PUT', 'activities/state', at('c'), '{"v":3}')).status).toBe(204);
  });

  it('DELETE one, or every state of the activity and agent', async () => {
    await doc('PUT', 'activities/state', at('d1'), '{}');
    expect((await doc('DELETE', 'activities/state', at('d1'))).status).toBe(204);
    expectLrsError(await doc('GET', 'activities/state', at('d1')), 404);
    expect((await doc('DELETE', 'activities/state', at())).status).toBe(204);
    expect((await doc('GET', 'activities/state', at())).body).toEqual([]);
  });

  it('refuses missing or malformed parameters with 400', async () => {
    expectLrsError(await doc('GET', 'activities/state', { agent, stateId: 's' }), 400, /activityId/);
    expectLrsError(await doc('GET', 'activities/state', { activityId: 'nope', agent, stateId: 's' }), 400, /activityId/);
    expectLrsError(await doc('GET', 'activities/state', { activityId: act, stateId: 's' }), 400, /agent/);
    expectLrsError(await doc('GET', 'activities/state', { activityId: act, agent: '{"name":"x"}', stateId: 's' }), 400);
    expectLrsError(await doc('GET', 'activities/state', { activityId: act, agent, registration: 'x' }), 400, /registration/);
    expectLrsError(await doc('GET', 'activities/state', { activityId: act, agent, since: 'today' }), 400, /since/);
    expectLrsError(await doc('PUT', 'activities/state', { activityId: act, agent }, '{}'), 400, /stateId/);
    expectLrsError(await doc('GET', 'activities/state', { activityId: act, agent, other: '1' }), 400, /Unknown parameter/);
  });
});

describe('activities/profile', () => {
  const act = activityId('profile-act');
  it('PUT of an existing profile without If-Match / If-None-Match is 409; with the ETag it replaces', async () => {
    expect((await doc('PUT', 'activities/profile', { activityId: act, profileId: 'p1' }, '{"x":1}')).status).toBe(204);
    expectLrsError(await doc('PUT', 'activities/profile', { activityId: act, profileId: 'p1' }, '{"x":2}'), 409);
    expect((await doc('PUT', 'activities/profile', { activityId: act, profileId: 'p1' }, '{"x":2}', { 'if-match': etag('{"x":1}') })).status).toBe(204);
    // POST merges and needs no header
    expect((await doc('POST', 'activities/profile', { activityId: act, profileId: 'p1' }, '{"y":3}')).status).toBe(204);
    const got = await doc('GET', 'activities/profile', { activityId: act, profileId: 'p1' });
    expect(got.body).toEqual({ x: 2, y: 3 });
    expect((await doc('GET', 'activities/profile', { activityId: act })).body).toEqual(['p1']);
    expectLrsError(await doc('DELETE', 'activities/profile', { activityId: act, profileId: 'p1' }, undefined, { 'if-match': etag('{"old":1}') }), 412);
    expect((await doc('DELETE', 'activities/profile', { activityId: act, profileId: 'p1' }, undefined, { 'if-match': got.headers.etag })).status).toBe(204);
    expectLrsError(await doc('DELETE', 'activities/profile', { activityId: act }), 400, /profileId/);
    expectLrsError(await doc('GET', 'activities/profile', { activityId: act, agent }), 400, /Unknown parameter agent/);
  });
});

describe('agents/profile', () => {
  it('stores per agent; the same IFI with another name is the same agent', async () => {
    expect((await doc('PUT', 'agents/profile', { agent, profileId: 'prefs' }, '{"lang":"en"}')).status).toBe(204);
    const sameAgent = JSON.stringify({ objectType: 'Agent', mbox: 'mailto:doc-owner@example.org', name: 'Other name' });
    expect((await doc('GET', 'agents/profile', { agent: sameAgent, profileId: 'prefs' })).body).toEqual({ lang: 'en' });
    expectLrsError(await doc('GET', 'agents/profile', { agent: JSON.stringify(mbox('someone-else')), profileId: 'prefs' }), 404);
    expectLrsError(await doc('PUT', 'agents/profile', { agent, profileId: 'prefs' }, '{"lang":"fr"}'), 409);
    expect((await doc('PUT', 'agents/profile', { agent, profileId: 'prefs' }, '{"lang":"fr"}', { 'if-none-match': 'W/"whatever"' })).status).toBe(204);
    expect((await doc('GET', 'agents/profile', { agent })).body).toEqual(['prefs']);
    expectLrsError(await doc('GET', 'agents/profile', { profileId: 'prefs' }), 400, /agent/);
  });
});
