/**
 * Statements resource, POST and PUT (xAPI 1.0.3 Communication 2.1.1, 2.1.2): storing single
 * statements and batches, ids, stored and authority set by the LRS, conflicts, and every rule
 * of the statement format (Data 2.4) answering 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { rawRows } from '../../../src/platform/db/client.js';
import { activityId, expectLrsError, issueCredential, lrs, mbox, post, statement, uuid, verb, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;

beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t, { name: 'Authoring tool' });
});
afterAll(async () => t.close());

const get = async (id: string) => {
  const res = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: id } });
  expect(res.status, res.raw).toBe(200);
  return res.body;
};

describe('POST /statements', () => {
  it('stores one statement and answers its id; the LRS sets id, stored, authority, version and timestamp', async () => {
    const res = await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: statement() });
    expect(res.status, res.raw).toBe(200);
    expect(res.headers['x-experience-api-version']).toBe('1.0.3');
    expect(res.body).toHaveLength(1);
    const stored = await get(res.body[0]);
    expect(stored.id).toBe(res.body[0]);
    expect(stored.stored).toBe('2026-03-02T09:00:00.000Z');
    expect(stored.timestamp).toBe(stored.stored);
    expect(stored.version).toBe('1.0.0');
    expect(stored.authority).toEqual({ objectType: 'Agent', name: 'Authoring tool', account: { homePage: 'http://lms.test/xapi/credentials', name: cred.key } });
    expect(stored.actor).toEqual(mbox('alice'));
  });

  it('stores a batch in order and keeps the ids given', async () => {
    const ids = [uuid(), uuid(), uuid()];
    const res = await post(
      t,
      cred.authorization,
      ids.map((id) => statement({ id })),
    );
    expect(res).toEqual(ids);
    const rows = await rawRows<{ n: number }>(t.db, sql`select count(*)::int as n from xapi_statements where id = any(${`{${ids.join(',')}}`}::uuid[])`);
    expect(rows[0]!.n).toBe(3);
  });

  it('replaces a stored and authority sent by the client', async () => {
    const [id] = await post(t, cred.authorization, statement({ stored: '2001-01-01T00:00:00Z', authority: mbox('mallory') }));
    const s = await get(id!);
    expect(s.stored).toBe('2026-03-02T09:00:00.000Z');
    expect(s.authority.account.name).toBe(cred.key);
  });

  it('keeps an identical statement sent again (same id) and refuses a different one with 409', async () => {
    const id = uuid();
    await post(t, cred.authorization, statement({ id, timestamp: '2026-03-01T10:00:00Z' }));
    expect(await post(t, cred.authorization, statement({ id, timestamp: '2026-03-01T11:00:00+01:00' }))).toEqual([id]);
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: statement({ id, verb: verb('attempted') }) }), 409);
  });

  it('rejects a batch with one id twice with 400 (Communication 2.1.1), identical statements or not, and stores none of it', async () => {
    const other = uuid();
    const twice = uuid();
    const res = await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: [statement({ id: other }), statement({ id: twice }), statement({ id: twice })] });
    expectLrsError(res, 400, new RegExp(`${twice} appears more than once`));
    const clash = uuid();
    // Ids are UUIDs: the same one in another case is the same id.
    expectLrsError(
      await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: [statement({ id: clash }), statement({ id: clash.toUpperCase(), verb: verb('attempted') })] }),
      400,
    );
    for (const id of [other, twice, clash]) expect((await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: id } })).status).toBe(404);
  });

  it('stores nothing of a batch with one bad statement', async () => {
    const good = uuid();
    expectLrsError(
      await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: [statement({ id: good }), statement({ verb: { id: 'not an iri' } })] }),
      400,
      /statements\.1\.verb\.id/,
    );
    expect((await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: good } })).status).toBe(404);
  });

  it('takes no parameters, needs a JSON or multipart/mixed body, and refuses malformed JSON', async () => {
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: statement(), query: { statementId: uuid() } }), 400);
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, payload: JSON.stringify(statement()), headers: { 'content-type': 'text/plain' } }), 400);
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, payload: '{"actor":', headers: { 'content-type': 'application/json' } }), 400);
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: [] }), 400);
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, payload: '{"a":"x\\u0000y"}', headers: { 'content-type': 'application/json' } }), 400);
  });
});

describe('PUT /statements', () => {
  it('stores with the given statementId (204), again identically (204), differently (409)', async () => {
    const id = uuid();
    const first = await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: id }, body: statement() });
    expect(first.status, first.raw).toBe(204);
    expect((await get(id)).id).toBe(id);
    expect((await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: id }, body: statement({ id }) })).status).toBe(204);
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: id }, body: statement({ verb: verb('failed') }) }), 409);
  });

  it('needs statementId (a UUID), one statement, and the same id in the body', async () => {
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, body: statement() }), 400, /statementId/);
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: 'nope' }, body: statement() }), 400);
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: uuid() }, body: [statement()] }), 400);
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: uuid() }, body: statement({ id: uuid() }) }), 400);
    expectLrsError(await lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: uuid(), verb: 'x' }, body: statement() }), 400);
  });
});

describe('X-Experience-API-Consistent-Through (Communication 2.1.3.s2.b5)', () => {
  it('is on every answer of the statements resource: writes, reads, 404, 400, 401, 405, 409', async () => {
    const through = '2026-03-02T08:59:59.999Z';
    const id = uuid();
    const auth = cred.authorization;
    const answers = {
      'POST 200': await lrs(t, 'POST', 'statements', { auth, body: statement({ id }) }),
      'PUT 204': await lrs(t, 'PUT', 'statements', { auth, query: { statementId: uuid() }, body: statement() }),
      'GET 200': await lrs(t, 'GET', 'statements', { auth, query: { statementId: id } }),
      'GET 404': await lrs(t, 'GET', 'statements', { auth, query: { statementId: uuid() } }),
      'GET 400': await lrs(t, 'GET', 'statements', { auth, query: { limit: 'x' } }),
      'POST 400 malformed': await lrs(t, 'POST', 'statements', { auth, payload: '{"actor":', headers: { 'content-type': 'application/json' } }),
      'POST 400 no version': await lrs(t, 'POST', 'statements', { auth, body: statement(), noVersion: true }),
      'PUT 409': await lrs(t, 'PUT', 'statements', { auth, query: { statementId: id }, body: statement({ verb: verb('failed') }) }),
      'GET 401': await lrs(t, 'GET', 'statements', { query: { statementId: id } }),
      'DELETE 405': await lrs(t, 'DELETE', 'statements', { auth }),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([k, res]) => [k, [res.status, res.headers['x-experience-api-consistent-through']]]))).toEqual({
      'POST 200': [200, through],
      'PUT 204': [204, through],
      'GET 200': [200, through],
      'GET 404': [404, through],
      'GET 400': [400, through],
      'POST 400 malformed': [400, through],
      'POST 400 no version': [400, through],
      'PUT 409': [409, through],
      'GET 401': [401, through],
      'DELETE 405': [405, through],
    });
    // Not on other resources.
    const other = await lrs(t, 'GET', 'activities', { auth, query: { activityId: activityId('a1') } });
    expect(other.status).toBe(200);
    expect(other.headers['x-experience-api-consistent-through']).toBeUndefined();
  });
});

/** Each case: a statement that breaks one rule of the format, and the property the 400 names. */
const INVALID: Array<[string, Record<string, unknown>, RegExp]> = [
  ['unknown top-level property', { foo: 1 }, /statement\.foo/],
  ['id not a UUID', { id: 'abc' }, /statement\.id/],
  ['null property', { result: null }, /statement\.result/],
  ['actor missing', { actor: undefined }, /statement\.actor/],
  ['actor with two IFIs', { actor: { mbox: 'mailto:a@example.org', openid: 'http://openid.example.org/a' } }, /exactly one/],
  ['actor with no IFI', { actor: { name: 'x' } }, /exactly one/],
  ['mbox without mailto:', { actor: { mbox: 'a@example.org' } }, /mbox/],
  ['bad mbox_sha1sum', { actor: { mbox_sha1sum: 'xyz' } }, /mbox_sha1sum/],
  ['openid not an IRI', { actor: { openid: 'nope' } }, /openid/],
  ['account without homePage', { actor: { account: { name: 'x' } } }, /homePage/],
  ['account with an extra property', { actor: { account: { homePage: 'http://example.org', name: 'x', id: 1 } } }, /account\.id/],
  ['agent objectType wrong', { actor: { objectType: 'Person', mbox: 'mailto:a@example.org' } }, /objectType/],
  ['anonymous group without members', { actor: { objectType: 'Group', name: 'g' } }, /member/],
  ['group member that is a group', { actor: { objectType: 'Group', member: [{ objectType: 'Group', mbox: 'mailto:g@example.org' }] } }, /member\.0/],
  ['verb missing', { verb: undefined }, /statement\.verb/],
  ['verb id not an IRI', { verb: { id: 'completed' } }, /verb\.id/],
  ['verb display not a language map', { verb: { id: 'http://example.org/v', display: { 'not a tag!': 'x' } } }, /display/],
  ['verb display value not a string', { verb: { id: 'http://example.org/v', display: { en: 1 } } }, /display\.en/],
  ['object missing', { object: undefined }, /statement\.object/],
  ['activity without id', { object: { objectType: 'Activity' } }, /object\.id/],
  ['unknown objectType', { object: { objectType: 'Thing', id: activityId('x') } }, /objectType/],
  ['activity definition extra property', { object: { id: activityId('x'), definition: { colour: 'red' } } }, /definition\.colour/],
  ['definition type not an IRI', { object: { id: activityId('x'), definition: { type: 'course' } } }, /definition\.type/],
  ['interaction components without interactionType', { object: { id: activityId('x'), definition: { choices: [{ id: 'a' }] } } }, /interactionType/],
  ['unknown interactionType', { object: { id: activityId('x'), definition: { interactionType: 'essay' } } }, /interactionType/],
  ['components of another interaction type', { object: { id: activityId('x'), definition: { interactionType: 'likert', choices: [{ id: 'a' }] } } }, /choices/],
  ['duplicate component ids', { object: { id: activityId('x'), definition: { interactionType: 'choice', choices: [{ id: 'a' }, { id: 'a' }] } } }, /distinct/],
  ['correctResponsesPattern not strings', { object: { id: activityId('x'), definition: { interactionType: 'choice', correctResponsesPattern: [1] } } }, /correctResponsesPattern/],
  ['extension key not an IRI', { object: { id: activityId('x'), definition: { extensions: { colour: 'red' } } } }, /extension keys/],
  ['StatementRef with a bad id', { object: { objectType: 'StatementRef', id: 'x' } }, /object\.id/],
  ['StatementRef with an extra property', { object: { objectType: 'StatementRef', id: '9e2c3d05-0e22-4b4f-9a4f-1b2c3d4e5f60', definition: {} } }, /definition/],
  [
    'SubStatement with an id',
    { object: { objectType: 'SubStatement', id: '9e2c3d05-0e22-4b4f-9a4f-1b2c3d4e5f60', actor: mbox('b'), verb: verb('x'), object: { id: activityId('s') } } },
    /object\.id/,
  ],
  [
    'nested SubStatement',
    {
      object: {
        objectType: 'SubStatement',
        actor: mbox('b'),
        verb: verb('x'),
        object: { objectType: 'SubStatement', actor: mbox('c'), verb: verb('y'), object: { id: activityId('s') } },
      },
    },
    /SubStatement/,
  ],
  ['agent object without objectType is an activity without id', { object: { mbox: 'mailto:b@example.org' } }, /object\.mbox/],
  ['score scaled above 1', { result: { score: { scaled: 1.5 } } }, /scaled/],
  ['score raw below min', { result: { score: { raw: 1, min: 2, max: 5 } } }, /raw/],
  ['score raw above max', { result: { score: { raw: 6, min: 2, max: 5 } } }, /raw/],
  ['score min not below max', { result: { score: { min: 5, max: 5 } } }, /min/],
  ['success not a boolean', { result: { success: 'yes' } }, /success/],
  ['response not a string', { result: { response: 3 } }, /response/],
  ['duration not ISO 8601', { result: { duration: '3 minutes' } }, /duration/],
  ['empty duration', { result: { duration: 'PT' } }, /duration/],
  ['result extension key not an IRI', { result: { extensions: { k: 1 } } }, /extension keys/],
  ['registration not a UUID', { context: { registration: 'abc' } }, /registration/],
  ['team that is an agent', { context: { team: mbox('t') } }, /team/],
  ['contextActivities unknown kind', { context: { contextActivities: { sibling: { id: activityId('p') } } } }, /sibling/],
  ['contextActivities item without id', { context: { contextActivities: { parent: [{ objectType: 'Activity' }] } } }, /parent\.0\.id/],
  ['revision with an agent object', { object: { objectType: 'Agent', mbox: 'mailto:o@example.org' }, context: { revision: 'r1' } }, /revision/],
  ['platform with a StatementRef object', { object: { objectType: 'StatementRef', id: '9e2c3d05-0e22-4b4f-9a4f-1b2c3d4e5f60' }, context: { platform: 'web' } }, /platform/],
  ['context language not a tag', { context: { language: 'english!' } }, /language/],
  ['context statement not a StatementRef', { context: { statement: { id: '9e2c3d05-0e22-4b4f-9a4f-1b2c3d4e5f60' } } }, /context\.statement/],
  ['timestamp without time zone', { timestamp: '2026-03-01T10:00:00' }, /timestamp/],
  ['timestamp with -00:00', { timestamp: '2026-03-01T10:00:00-00:00' }, /timestamp/],
  ['timestamp not a date', { timestamp: 'yesterday' }, /timestamp/],
  ['version 2.0', { version: '2.0.0' }, /version/],
  ['version 0.95', { version: '0.95' }, /version/],
  ['authority group of three', { authority: { objectType: 'Group', member: [mbox('a'), mbox('b'), mbox('c')] } }, /authority/],
  [
    'attachment without display',
    { attachments: [{ usageType: 'http://example.org/u', contentType: 'text/plain', length: 1, sha2: 'a'.repeat(64), fileUrl: 'http://example.org/f' }] },
    /display/,
  ],
  [
    'attachment with a bad sha2',
    { attachments: [{ usageType: 'http://example.org/u', display: { en: 'x' }, contentType: 'text/plain', length: 1, sha2: 'xyz', fileUrl: 'http://example.org/f' }] },
    /sha2/,
  ],
  [
    'attachment length negative',
    { attachments: [{ usageType: 'http://example.org/u', display: { en: 'x' }, contentType: 'text/plain', length: -1, sha2: 'a'.repeat(64), fileUrl: 'http://example.org/f' }] },
    /length/,
  ],
  [
    'attachment contentType not a media type',
    { attachments: [{ usageType: 'http://example.org/u', display: { en: 'x' }, contentType: 'text', length: 1, sha2: 'a'.repeat(64), fileUrl: 'http://example.org/f' }] },
    /contentType/,
  ],
  ['voided verb with an activity object', { verb: { id: 'http://adlnet.gov/expapi/verbs/voided' } }, /voiding statement/],
];

describe('statement format rules (each a 400)', () => {
  it.each(INVALID)('%s', async (_name, change, message) => {
    const s: Record<string, unknown> = { ...statement(), ...change };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete s[k];
    const res = await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: s });
    expectLrsError(res, 400, message);
  });

  it('accepts every object type, a full result and context, language tags and durations', async () => {
    const ref = (await post(t, cred.authorization, statement()))[0]!;
    const valid = [
      statement({ object: { objectType: 'Agent', mbox: 'mailto:bob@example.org' } }),
      statement({ object: { objectType: 'Group', name: 'Team', member: [mbox('m1')] } }),
      statement({ object: { objectType: 'StatementRef', id: ref } }),
      statement({
        object: {
          objectType: 'SubStatement',
          actor: { objectType: 'Agent', mbox_sha1sum: 'a'.repeat(40) },
          verb: verb('planned'),
          object: { id: activityId('sub') },
          context: { contextActivities: { parent: { id: activityId('p') } } },
        },
      }),
      statement({
        actor: { objectType: 'Group', name: 'Identified', account: { homePage: 'http://example.org', name: 'grp' }, member: [] },
        result: {
          score: { scaled: -0.5, raw: 2, min: 0, max: 10 },
          success: true,
          completion: false,
          response: 'ok',
          duration: 'P1DT2H3M4.5S',
          extensions: { 'http://example.org/x': { a: 1 } },
        },
        context: {
          registration: uuid(),
          instructor: { openid: 'http://openid.example.org/i' },
          team: { objectType: 'Group', member: [mbox('t1')] },
          contextActivities: {
            parent: { id: activityId('p') },
            grouping: [{ id: activityId('g') }],
            category: [{ id: activityId('c'), definition: { type: 'http://example.org/profile' } }],
          },
          revision: 'r2',
          platform: 'web',
          language: 'zh-Hant-TW',
          statement: { objectType: 'StatementRef', id: ref },
          extensions: { 'urn:example:ext': null },
        },
        timestamp: '2026-03-01T10:00:00.123+05:30',
        version: '1.0.3',
      }),
      statement({
        object: {
          id: activityId('q'),
          definition: { interactionType: 'matching', source: [{ id: 's1', description: { en: 'S' } }], target: [{ id: 't1' }], correctResponsesPattern: ['s1[.]t1'] },
        },
      }),
      statement({ result: { duration: 'P1W' } }),
    ];
    const ids = await post(t, cred.authorization, valid);
    expect(ids).toHaveLength(valid.length);
    // single context activities are returned as arrays of one
    const full = await get(ids[4]!);
    expect(full.context.contextActivities.parent).toEqual([{ id: activityId('p') }]);
    expect(full.result.score.scaled).toBe(-0.5);
  });
});

describe('concurrent writes (serialised per institution; run on PostgreSQL in CI)', () => {
  it('concurrent PUTs of one id: identical ones all succeed, different ones store exactly one', async () => {
    const same = uuid();
    const identical = await Promise.all(
      Array.from({ length: 6 }, () => lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: same }, body: statement() })),
    );
    expect(identical.map((r) => r.status)).toEqual(Array(6).fill(204));
    const id = uuid();
    const different = await Promise.all(
      Array.from({ length: 6 }, (_, i) => lrs(t, 'PUT', 'statements', { auth: cred.authorization, query: { statementId: id }, body: statement({ verb: verb(`v${i}`) }) })),
    );
    expect(different.filter((r) => r.status === 204)).toHaveLength(1);
    expect(different.filter((r) => r.status === 409)).toHaveLength(5);
  });

  it('concurrent batches: every statement once in an ascending walk, stored never decreasing along it', async () => {
    const v = verb(`race-${uuid()}`);
    const batches = await Promise.all(
      Array.from({ length: 8 }, () =>
        post(
          t,
          cred.authorization,
          Array.from({ length: 5 }, () => statement({ verb: v })),
        ),
      ),
    );
    const seen: Array<{ id: string; stored: string }> = [];
    let page = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { verb: v.id, ascending: 'true', limit: '7' } });
    for (;;) {
      seen.push(...page.body.statements.map((s: { id: string; stored: string }) => ({ id: s.id, stored: s.stored })));
      if (!page.body.more) break;
      page = await lrs(t, 'GET', page.body.more.replace('/api/xapi/', ''), { auth: cred.authorization });
    }
    expect(new Set(seen.map((s) => s.id))).toEqual(new Set(batches.flat()));
    expect(seen).toHaveLength(40);
    const stored = seen.map((s) => Date.parse(s.stored));
    expect(stored).toEqual([...stored].sort((a, b) => a - b));
  });
});
