/**
 * Statements resource, GET (xAPI 1.0.3 Communication 2.1.3): one statement by statementId or
 * voidedStatementId, filtered queries with every parameter, `more` paging stable under
 * inserts, formats, the consistency header, voiding and the StatementRef filter rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { activityId, expectLrsError, issueCredential, lrs, mbox, post, statement, uuid, verb, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;
const q = (query: Record<string, string>) => lrs(t, 'GET', 'statements', { auth: cred.authorization, query });
const ids = (res: { body: any }) => res.body.statements.map((s: { id: string }) => s.id);

beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t);
});
afterAll(async () => t.close());

describe('GET one statement', () => {
  it('by statementId, with X-Experience-API-Consistent-Through and Last-Modified; unknown is 404', async () => {
    const [id] = await post(t, cred.authorization, statement());
    const res = await q({ statementId: id! });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
    expect(new Date(res.headers['x-experience-api-consistent-through']).toISOString()).toBe('2026-03-02T08:59:59.999Z');
    expect(res.headers['last-modified']).toBe(new Date('2026-03-02T09:00:00Z').toUTCString());
    expectLrsError(await q({ statementId: uuid() }), 404);
  });

  it('refuses other parameters with statementId, both ids at once, and a bad id', async () => {
    const [id] = await post(t, cred.authorization, statement());
    expectLrsError(await q({ statementId: id!, verb: 'http://example.org/v' }), 400);
    expectLrsError(await q({ statementId: id!, voidedStatementId: id! }), 400);
    expectLrsError(await q({ statementId: 'x' }), 400);
    expect((await q({ statementId: id!, format: 'ids', attachments: 'false' })).status).toBe(200);
  });
});

describe('voiding', () => {
  it('a voided statement leaves queries and statementId, and is found by voidedStatementId', async () => {
    const [target] = await post(t, cred.authorization, statement({ verb: verb('to-void') }));
    const [voiding] = await post(t, cred.authorization, statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: target } }));
    expectLrsError(await q({ statementId: target! }), 404);
    const found = await q({ voidedStatementId: target! });
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(target);
    expectLrsError(await q({ voidedStatementId: voiding! }), 404);
    const list = await q({ verb: 'http://adlnet.gov/expapi/verbs/to-void' });
    // the voiding statement refers to a statement with that verb: it is returned, the voided one is not
    expect(ids(list)).toEqual([voiding]);
  });

  it('a voiding statement may not void a voiding statement; voiding an unknown id is allowed and applies when it arrives', async () => {
    const [target] = await post(t, cred.authorization, statement());
    const [voiding] = await post(t, cred.authorization, statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: target } }));
    expectLrsError(
      await lrs(t, 'POST', 'statements', {
        auth: cred.authorization,
        body: statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: voiding } }),
      }),
      400,
      /voiding statement/,
    );
    const later = uuid();
    await post(t, cred.authorization, statement({ verb: { id: 'http://adlnet.gov/expapi/verbs/voided' }, object: { objectType: 'StatementRef', id: later } }));
    await post(t, cred.authorization, statement({ id: later }));
    expectLrsError(await q({ statementId: later }), 404);
    expect((await q({ voidedStatementId: later })).status).toBe(200);
  });
});

describe('filtered queries', () => {
  let fixture: Record<string, string>;
  const reg = uuid();
  beforeAll(async () => {
    t.clock.set('2026-04-01T10:00:00.000Z');
    const [a] = await post(t, cred.authorization, statement({ actor: mbox('qa'), verb: verb('answered'), object: { id: activityId('q1') }, context: { registration: reg } }));
    t.clock.set('2026-04-01T11:00:00.000Z');
    const [b] = await post(
      t,
      cred.authorization,
      statement({ actor: mbox('qb'), verb: verb('answered'), object: { id: activityId('q2') }, context: { contextActivities: { parent: [{ id: activityId('q1') }] } } }),
    );
    t.clock.set('2026-04-01T12:00:00.000Z');
    const [c] = await post(t, cred.authorization, statement({ actor: mbox('qb'), verb: verb('commented'), object: mbox('qa'), context: { instructor: mbox('qi') } }));
    const [d] = await post(
      t,
      cred.authorization,
      statement({ actor: mbox('qc'), verb: verb('answered'), object: { objectType: 'SubStatement', actor: mbox('qa'), verb: verb('planned'), object: { id: activityId('q3') } } }),
    );
    fixture = { a: a!, b: b!, c: c!, d: d! };
  });

  it('agent: actor or object; related_agents adds instructor, team, authority and SubStatements', async () => {
    expect(ids(await q({ agent: JSON.stringify(mbox('qa')) }))).toEqual([fixture.c, fixture.a]);
    expect(ids(await q({ agent: JSON.stringify({ mbox: 'mailto:qa@example.org' }), related_agents: 'true' }))).toEqual([fixture.d, fixture.c, fixture.a]);
    expect(ids(await q({ agent: JSON.stringify(mbox('qi')) }))).toEqual([]);
    expect(ids(await q({ agent: JSON.stringify(mbox('qi')), related_agents: 'true' }))).toEqual([fixture.c]);
  });

  it('verb, activity with related_activities, registration', async () => {
    expect(ids(await q({ verb: 'http://adlnet.gov/expapi/verbs/answered', agent: JSON.stringify(mbox('qb')) }))).toEqual([fixture.b]);
    expect(ids(await q({ activity: activityId('q1') }))).toEqual([fixture.a]);
    expect(ids(await q({ activity: activityId('q1'), related_activities: 'true' }))).toEqual([fixture.b, fixture.a]);
    expect(ids(await q({ activity: activityId('q3'), related_activities: 'true' }))).toEqual([fixture.d]);
    expect(ids(await q({ registration: reg }))).toEqual([fixture.a]);
  });

  it('since (exclusive) and until (inclusive) on stored, ascending, limit', async () => {
    const answered = { verb: 'http://adlnet.gov/expapi/verbs/answered' };
    expect(ids(await q({ ...answered, since: '2026-04-01T10:00:00Z' }))).toEqual([fixture.d, fixture.b]);
    expect(ids(await q({ ...answered, until: '2026-04-01T11:00:00Z' }))).toEqual([fixture.b, fixture.a]);
    expect(ids(await q({ ...answered, ascending: 'true' }))).toEqual([fixture.a, fixture.b, fixture.d]);
    const one = await q({ ...answered, limit: '1' });
    expect(ids(one)).toEqual([fixture.d]);
    expect(one.body.more).toMatch(/^\/api\/xapi\/statements\?more=/);
  });

  it('refuses unknown parameters and malformed values with 400', async () => {
    const cases: Array<Record<string, string>> = [
      { foo: 'bar' },
      { agent: 'not json' },
      { agent: JSON.stringify({ name: 'no ifi' }) },
      { verb: 'not an iri' },
      { activity: 'nope' },
      { registration: 'nope' },
      { since: '2026-04-01' },
      { until: 'tomorrow' },
      { limit: '-1' },
      { format: 'full' },
      { ascending: 'yes' },
      { related_agents: '1' },
      { more: 'garbage' },
    ];
    for (const bad of cases) expectLrsError(await q(bad), 400);
    const repeated = await t.app.inject({
      method: 'GET',
      url: '/api/xapi/statements?verb=http://a.example/v&verb=http://b.example/v',
      headers: { authorization: cred.authorization, 'x-experience-api-version': '1.0.3' },
    });
    expect(repeated.statusCode).toBe(400);
  });
});

describe('more links', () => {
  it('pages through everything once, and statements stored meanwhile do not shift the pages', async () => {
    const v = verb(`paged-${uuid()}`);
    t.clock.set('2026-05-01T10:00:00.000Z');
    const stored = await post(
      t,
      cred.authorization,
      Array.from({ length: 7 }, () => statement({ verb: v })),
    );
    const seen: string[] = [];
    let res = await q({ verb: v.id, limit: '3' });
    seen.push(...ids(res));
    // a new statement arrives between pages: it is newer than the query's first page, not in the later ones
    const [late] = await post(t, cred.authorization, statement({ verb: v }));
    while (res.body.more) {
      res = await lrs(t, 'GET', res.body.more.replace('/api/xapi/', ''), { auth: cred.authorization });
      expect(res.status, res.raw).toBe(200);
      seen.push(...ids(res));
    }
    expect(seen).toEqual([...stored].reverse());
    expect(seen).not.toContain(late);

    const asc: string[] = [];
    let page = await q({ verb: v.id, limit: '4', ascending: 'true' });
    asc.push(...ids(page));
    while (page.body.more) {
      page = await lrs(t, 'GET', page.body.more.replace('/api/xapi/', ''), { auth: cred.authorization });
      asc.push(...ids(page));
    }
    expect(asc).toEqual([...stored, late]);
  });

  it('limit 0 means the server maximum (100)', async () => {
    const v = verb(`max-${uuid()}`);
    await post(
      t,
      cred.authorization,
      Array.from({ length: 101 }, () => statement({ verb: v })),
    );
    const res = await q({ verb: v.id, limit: '0' });
    expect(res.body.statements).toHaveLength(100);
    expect(res.body.more).not.toBe('');
  });
});

describe('formats', () => {
  it('ids keeps only identifiers; canonical uses the canonical definition and one language per map', async () => {
    const act = activityId(`fmt-${uuid()}`);
    await post(t, cred.authorization, statement({ object: { id: act, definition: { name: { 'en-US': 'Old name', fr: 'Nom' } } } }));
    const [id] = await post(
      t,
      cred.authorization,
      statement({
        actor: { objectType: 'Agent', name: 'Alice', mbox: 'mailto:alice@example.org' },
        verb: { id: 'http://example.org/verbs/tried', display: { 'en-US': 'tried', 'fr-FR': 'essayé' } },
        object: { id: act, definition: { name: { 'en-US': 'New name' }, description: { 'en-US': 'D' } } },
      }),
    );
    const exact = await q({ statementId: id! });
    expect(exact.body.object.definition.name).toEqual({ 'en-US': 'New name' });

    const onlyIds = await q({ statementId: id!, format: 'ids' });
    expect(onlyIds.body.actor).toEqual({ objectType: 'Agent', mbox: 'mailto:alice@example.org' });
    expect(onlyIds.body.verb).toEqual({ id: 'http://example.org/verbs/tried' });
    expect(onlyIds.body.object).toEqual({ objectType: 'Activity', id: act });

    const canonical = await lrs(t, 'GET', 'statements', {
      auth: cred.authorization,
      query: { statementId: id!, format: 'canonical' },
      headers: { 'accept-language': 'fr-FR, en;q=0.5' },
    });
    expect(canonical.body.verb.display).toEqual({ 'fr-FR': 'essayé' });
    // the merged definition: names of both statements, one language picked
    expect(canonical.body.object.definition.name).toEqual({ fr: 'Nom' });
    expect(canonical.body.object.definition.description).toEqual({ 'en-US': 'D' });
    const activity = await lrs(t, 'GET', 'activities', { auth: cred.authorization, query: { activityId: act } });
    expect(activity.body.definition.name).toEqual({ 'en-US': 'New name', fr: 'Nom' });
  });
});

describe('the StatementRef filter rule', () => {
  it('returns statements that refer (through a chain) to a matching statement', async () => {
    const v = verb(`ref-${uuid()}`);
    const [base] = await post(t, cred.authorization, statement({ verb: v }));
    const [ref1] = await post(t, cred.authorization, statement({ verb: verb('liked'), object: { objectType: 'StatementRef', id: base } }));
    const [ref2] = await post(t, cred.authorization, statement({ verb: verb('shared'), object: { objectType: 'StatementRef', id: ref1 } }));
    expect(ids(await q({ verb: v.id }))).toEqual([ref2, ref1, base]);
    expect(ids(await q({ verb: v.id, limit: '2' }))).toEqual([ref2, ref1]);
  });
});
