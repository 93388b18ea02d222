/**
 * LRS tenancy: statements, documents, activities, agents and attachments belong to the
 * institution of the credential (or session) that stored them. Another institution's callers
 * see none of it, cannot tell it exists (the same statement id is free in each institution),
 * and cannot change it (voiding across institutions does nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { NORTH_ADMIN_ID, NORTH_STUDENT_ID, SECOND_INSTITUTION } from '../../../src/dev/crm-sim/fixtures.js';
import { activityId, expectLrsError, issueCredential, lrs, mbox, mixed, post, sha256, statement, uuid, verb, type Credential } from './lrs.js';

let t: TestApp;
let a: Credential;
let b: Credential;
const SECRET = `secret-${uuid()}`;
const ACT = activityId(`tenant-${uuid()}`);
const AGENT = JSON.stringify(mbox('tenant-person'));
let stmtId: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await issueCredential(t);
  b = await issueCredential(t, { institutionId: SECOND_INSTITUTION.id, adminId: NORTH_ADMIN_ID });
  const attachment = `attachment ${SECRET}`;
  const body = mixed(
    statement({
      actor: { ...mbox('tenant-person'), name: SECRET },
      object: { id: ACT, definition: { name: { en: SECRET } } },
      result: { response: SECRET },
      attachments: [{ usageType: 'http://example.org/u', display: { en: 'a' }, contentType: 'text/plain', length: attachment.length, sha2: sha256(attachment) }],
    }),
    [{ data: attachment }],
  );
  const res = await lrs(t, 'POST', 'statements', { auth: a.authorization, payload: body.payload, headers: body.headers });
  expect(res.status, res.raw).toBe(200);
  stmtId = res.body[0];
  for (const [path, query] of [
    ['activities/state', { activityId: ACT, agent: AGENT, stateId: 's' }],
    ['activities/profile', { activityId: ACT, profileId: 'p' }],
    ['agents/profile', { agent: AGENT, profileId: 'p' }],
  ] as const) {
    const put = await lrs(t, 'PUT', path, { auth: a.authorization, query, body: { secret: SECRET } });
    expect(put.status, put.raw).toBe(204);
  }
});
afterAll(async () => t.close());

describe("another institution's callers", () => {
  it('see none of the statements: not by id, not by query, not in any format', async () => {
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: b.authorization, query: { statementId: stmtId } }), 404);
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: b.authorization, query: { voidedStatementId: stmtId } }), 404);
    const queries: Array<Record<string, string>> = [
      {},
      { agent: AGENT },
      { activity: ACT, related_activities: 'true' },
      { verb: 'http://adlnet.gov/expapi/verbs/experienced', format: 'canonical' },
      { attachments: 'true' },
    ];
    for (const query of queries) {
      const res = await lrs(t, 'GET', 'statements', { auth: b.authorization, query });
      expect(res.status, res.raw).toBe(200);
      expect(res.raw).not.toContain(SECRET);
      expect(res.raw).not.toContain(stmtId);
    }
  });

  it('see none of the documents, activities, agent names or attachments', async () => {
    for (const [path, query] of [
      ['activities/state', { activityId: ACT, agent: AGENT, stateId: 's' }],
      ['activities/profile', { activityId: ACT, profileId: 'p' }],
      ['agents/profile', { agent: AGENT, profileId: 'p' }],
    ] as const) {
      expectLrsError(await lrs(t, 'GET', path, { auth: b.authorization, query }), 404);
    }
    // The activity itself is answered to anyone (xAPI's SHOULD), but without A's definition.
    const activity = await lrs(t, 'GET', 'activities', { auth: b.authorization, query: { activityId: ACT } });
    expect(activity.body).toEqual({ objectType: 'Activity', id: ACT });
    expect(activity.raw).not.toContain(SECRET);
    for (const [path, query] of [
      ['activities/state', { activityId: ACT, agent: AGENT }],
      ['activities/profile', { activityId: ACT }],
      ['agents/profile', { agent: AGENT }],
    ] as const) {
      expect((await lrs(t, 'GET', path, { auth: b.authorization, query })).body).toEqual([]);
    }
    const person = await lrs(t, 'GET', 'agents', { auth: b.authorization, query: { agent: AGENT } });
    expect(person.raw).not.toContain(SECRET);
    // A's attachment bytes are not B's: B must send them
    const attachment = `attachment ${SECRET}`;
    const res = await lrs(t, 'POST', 'statements', {
      auth: b.authorization,
      body: statement({
        attachments: [{ usageType: 'http://example.org/u', display: { en: 'a' }, contentType: 'text/plain', length: attachment.length, sha2: sha256(attachment) }],
      }),
    });
    expectLrsError(res, 400, /missing/);
  });

  it('cannot tell a statement id exists (the same id is free), cannot void or change A’s records', async () => {
    const ids = await post(t, b.authorization, statement({ id: stmtId, verb: verb('different') }));
    expect(ids).toEqual([stmtId]);
    await post(t, b.authorization, statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: stmtId } }));
    const mine = await lrs(t, 'GET', 'statements', { auth: a.authorization, query: { statementId: stmtId } });
    expect(mine.status).toBe(200);
    expect(mine.body.result.response).toBe(SECRET);
    expect((await lrs(t, 'DELETE', 'activities/state', { auth: b.authorization, query: { activityId: ACT, agent: AGENT } })).status).toBe(204);
    const state = await lrs(t, 'GET', 'activities/state', { auth: a.authorization, query: { activityId: ACT, agent: AGENT, stateId: 's' } });
    expect(state.raw).toContain(SECRET);
    // B's own statement with that id is B's: A still gets its own
    const bView = await lrs(t, 'GET', 'statements', { auth: b.authorization, query: { voidedStatementId: stmtId } });
    expect(bView.body.verb.id).toBe('http://adlnet.gov/expapi/verbs/different');
  });

  it("a session of the other institution works in its own institution only, and A's credential cannot be deleted by B's admin", async () => {
    const north = `Bearer ${await t.token({ role: 'STUDENT', id: NORTH_STUDENT_ID, institutionId: SECOND_INSTITUTION.id })}`;
    expectLrsError(await lrs(t, 'GET', 'statements', { auth: north, query: { statementId: stmtId } }), 404);
    const admin = await t.token({ role: 'ADMIN', id: NORTH_ADMIN_ID, institutionId: SECOND_INSTITUTION.id });
    const del = await t.request('DELETE', `/api/xapi/credentials/${a.id}`, { token: admin });
    expect(del.status).toBe(404);
    const list = await t.request('GET', '/api/xapi/credentials', { token: admin });
    expect(list.raw).not.toContain(a.key);
    expect((await lrs(t, 'GET', 'statements', { auth: a.authorization, query: { statementId: stmtId } })).status).toBe(200);
  });
});
