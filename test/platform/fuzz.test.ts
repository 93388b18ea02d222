/**
 * Hostile-input sweep: every documented route (from /openapi.json), every body property, query
 * parameter and path parameter, with NUL bytes, 100k-character strings, lone surrogates, deeply
 * nested JSON, wrong types, odd dates, and malformed multipart; as an ADMIN and as an enrolled
 * STUDENT of the demo institution with real ids, so requests reach deep code.
 *
 * Every answer must be below 500 and, when an error, in the envelope (on the xAPI LRS, the documented
 * exception, a plain-text xAPI error with the version header). Inputs the boundary
 * refuses for every route (NUL, lone surrogates, nesting deeper than 64, impossible dates) must
 * never succeed.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DEMO_ADMIN_ID } from '../../src/dev/crm-sim/fixtures.js';
import {
  buildFixture,
  documentedRoutes,
  fillPath,
  multipartBody,
  resolvePathParams,
  sampleFromSchema,
  VTT,
  type Fixture,
  type JsonSchema,
  type RouteInfo,
} from '../helpers/routes.js';

/** A hostile value as raw JSON text (so lone surrogates stay unpaired escapes). */
interface Hostile {
  name: string;
  json: string;
  /** The boundary refuses it wherever it appears: the answer must not be 2xx. */
  refused?: boolean;
  /** An impossible timestamp: must not be accepted where the schema wants a date-time. */
  badDate?: boolean;
}

const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

const BODY_VALUES: Hostile[] = [
  { name: 'NUL', json: '"a\\u0000b"', refused: true },
  { name: '100k chars', json: JSON.stringify('x'.repeat(100_000)) },
  { name: 'lone high surrogate', json: '"\\ud800"', refused: true },
  { name: 'lone low surrogate', json: '"a\\udc00b"', refused: true },
  { name: 'number for string', json: '12345' },
  { name: 'huge number', json: '1e400' },
  { name: 'unsafe integer', json: '9007199254740993' },
  { name: 'negative', json: '-1' },
  { name: 'object', json: '{"$gt":""}' },
  { name: 'array', json: '[1,"x",null]' },
  { name: 'null', json: 'null' },
  { name: 'boolean', json: 'false' },
  { name: 'empty string', json: '""' },
  { name: 'deep array value', json: deepArray(5000), refused: true },
  { name: 'deep object value', json: deepObject(5000), refused: true },
  { name: 'year 0000', json: '"0000-01-01T00:00:00Z"', badDate: true },
  { name: 'month 13', json: '"2026-13-45T00:00:00Z"', badDate: true },
  { name: 'date only month 13', json: '"2026-13-45"', badDate: true },
  { name: 'max JS date', json: '"+275760-09-13T00:00:00.000Z"', badDate: true },
  { name: 'Feb 30', json: '"2026-02-30T10:00:00Z"', badDate: true },
  { name: 'negative year', json: '"-000001-01-01T00:00:00Z"', badDate: true },
  { name: 'bad offset', json: '"2026-03-02T10:00:00+99:99"', badDate: true },
];

const URL_VALUES: Array<{ name: string; raw: string; refused?: boolean }> = [
  { name: 'NUL', raw: 'a%00b', refused: true },
  { name: 'lone surrogate (CESU bytes)', raw: '%ED%A0%80' },
  { name: 'bad percent escape', raw: '%E0%A4%A' },
  { name: 'long', raw: 'x'.repeat(5000) },
  { name: 'dot segments', raw: '..%2F..%2Fetc%2Fpasswd' },
  { name: 'year 0000', raw: '0000-01-01T00:00:00Z' },
  { name: 'month 13', raw: '2026-13-45' },
  { name: 'max JS date', raw: '%2B275760-09-13T00:00:00.000Z' },
  { name: 'negative', raw: '-1' },
  { name: 'huge number', raw: '1e400' },
  { name: 'NaN', raw: 'NaN' },
];

const WHOLE_BODIES: Hostile[] = [
  { name: 'deep array', json: deepArray(5000), refused: true },
  { name: 'deep object', json: deepObject(5000), refused: true },
  { name: 'array body', json: '[]' },
  { name: 'string body', json: '"x"' },
  { name: 'number body', json: '1' },
  { name: 'null body', json: 'null' },
  { name: 'malformed', json: '{"a":' },
  { name: 'NUL key', json: '{"a\\u0000":1}', refused: true },
  { name: 'lone surrogate key', json: '{"\\udfff":1}', refused: true },
  { name: '__proto__', json: '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}' },
];

let t: TestApp;
let fixture: Fixture;
let routes: RouteInfo[];
let tokens: Array<{ label: string; token: string }>;

beforeAll(async () => {
  t = await createTestApp();
  fixture = await buildFixture(t);
  routes = await documentedRoutes(t);
  // Destructive routes last (deepest first), so the fixture lives as long as possible.
  const rank = (r: RouteInfo) => (r.method === 'DELETE' ? 1 : 0);
  routes.sort((a, b) => rank(a) - rank(b) || (a.method === 'DELETE' ? b.path.length - a.path.length : 0));
  tokens = [
    { label: 'ADMIN', token: await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID }) },
    { label: 'STUDENT', token: await t.token({ role: 'STUDENT', id: fixture.studentId }) },
  ];
});

afterAll(async () => {
  await t?.close();
});

/**
 * The tokens worth fuzzing a route with: a caller whose valid request is refused for their
 * role (403 FORBIDDEN) stops at the permission check, so only the ADMIN goes on. DELETE routes
 * are not probed (the probe would delete the record).
 */
async function tokensFor(route: RouteInfo) {
  if (route.method === 'DELETE') return tokens;
  const out = [];
  for (const who of tokens) {
    if (who.label === 'ADMIN') {
      out.push(who);
      continue;
    }
    const c = casesFor(route).find((x) => x.where.startsWith('header'))!;
    const res = await t.app.inject({
      method: route.method as never,
      url: c.url,
      headers: { authorization: `Bearer ${who.token}`, ...(isLrs(route) ? LRS_HEADERS : {}), ...c.headers },
      ...(c.payload !== undefined ? { payload: c.payload } : {}),
    });
    if (res.statusCode !== 403 || (!res.body.includes('"FORBIDDEN"') && !isLrs(route))) out.push(who);
  }
  return out;
}

/** The xAPI LRS (not its credential routes): outside the envelope, with xAPI's version header and plain-text errors. */
const isLrs = (route: RouteInfo) => route.path.startsWith('/api/xapi/') && !route.path.startsWith('/api/xapi/credentials');
const LRS_HEADERS = { 'x-experience-api-version': '1.0.3' };

/** A valid body for the LRS's statement routes: the fuzzing student's own statement, so requests reach storage. */
function lrsBody(route: RouteInfo): unknown {
  if (route.path !== '/api/xapi/statements') return undefined;
  return {
    actor: JSON.parse(fixture.xapiAgent),
    verb: { id: 'http://adlnet.gov/expapi/verbs/experienced', display: { en: 'experienced' } },
    object: { objectType: 'Activity', id: fixture.xapiActivityId, definition: { name: { en: 'Lesson' } } },
    result: { score: { scaled: 0.5 }, duration: 'PT1M' },
    context: { contextActivities: { parent: [{ id: fixture.xapiActivityId }] } },
  };
}

interface Case {
  route: RouteInfo;
  where: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
  refused?: boolean;
}

const PLACEHOLDER = '"__FUZZ_VALUE__"';

function pathValues(route: RouteInfo) {
  return resolvePathParams(route.path, fixture).values;
}

function baseQuery(route: RouteInfo): Record<string, string> {
  const q: Record<string, string> = {};
  for (const p of route.query) if (p.required) q[p.name] = String(sampleFromSchema(p.schema, fixture, p.name));
  return q;
}

const qs = (q: Record<string, string>) => {
  const s = Object.entries(q)
    .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
    .join('&');
  return s ? `?${s}` : '';
};
const encodeQuery = (q: Record<string, string>) => Object.fromEntries(Object.entries(q).map(([k, v]) => [k, encodeURIComponent(v)]));

const isDateSchema = (s: JsonSchema | undefined): boolean => Boolean(s && (s.format === 'date-time' || s.format === 'date' || (s.anyOf ?? s.oneOf ?? []).some(isDateSchema)));

/** Body properties to fuzz: top level, and one level into objects and array items. */
function bodyPaths(schema: JsonSchema): Array<{ path: string[]; schema: JsonSchema }> {
  const out: Array<{ path: string[]; schema: JsonSchema }> = [];
  const objectOf = (s: JsonSchema): JsonSchema | undefined => (s?.type === 'object' ? s : (s?.anyOf ?? s?.oneOf ?? []).find((x: JsonSchema) => x.type === 'object'));
  const walk = (s: JsonSchema, prefix: string[], depth: number) => {
    const obj = objectOf(s);
    if (!obj?.properties || depth > 2) return;
    for (const [k, v] of Object.entries(obj.properties as Record<string, JsonSchema>)) {
      out.push({ path: [...prefix, k], schema: v });
      const items = v.type === 'array' ? v.items : undefined;
      if (items) walk(items, [...prefix, k, '0'], depth + 1);
      else walk(v, [...prefix, k], depth + 1);
    }
  };
  walk(schema, [], 0);
  return out;
}

function setAt(obj: any, path: string[], value: unknown) {
  let cur = obj;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      cur[key] = value;
      return;
    }
    if (cur[key] === null || typeof cur[key] !== 'object') cur[key] = /^\d+$/.test(path[i + 1]!) ? [] : {};
    cur = cur[key];
  }
}

function casesFor(route: RouteInfo): Case[] {
  const cases: Case[] = [];
  const values = pathValues(route);
  const url = fillPath(route.path, values);
  const query = baseQuery(route);
  const isJson = route.body && route.body.contentType !== 'multipart/form-data';
  const validBody = isJson ? (lrsBody(route) ?? sampleFromSchema(route.body!.schema, fixture)) : undefined;
  const validJson = validBody === undefined ? undefined : JSON.stringify(validBody);
  const jsonHeaders = { 'content-type': 'application/json' };

  // path parameters
  for (const name of route.pathParams) {
    for (const v of URL_VALUES) {
      const u = route.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === name ? v.raw : encodeURIComponent(values[n] ?? 'x')));
      cases.push({ route, where: `path ${name}=${v.name}`, url: u + qs(encodeQuery(query)), headers: isJson ? jsonHeaders : undefined, payload: validJson, refused: v.refused });
    }
  }
  // query parameters
  for (const p of route.query) {
    for (const v of URL_VALUES) {
      cases.push({
        route,
        where: `query ${p.name}=${v.name}`,
        url: url + qs({ ...encodeQuery(query), [p.name]: v.raw }),
        headers: isJson ? jsonHeaders : undefined,
        payload: validJson,
        refused: v.refused,
      });
    }
    cases.push({
      route,
      where: `query ${p.name} repeated`,
      url: `${url}${qs(encodeQuery(query)) || '?'}&${p.name}=1&${p.name}=2`,
      headers: isJson ? jsonHeaders : undefined,
      payload: validJson,
    });
    cases.push({
      route,
      where: `query ${p.name} 100k`,
      url: url + qs({ ...encodeQuery(query), [p.name]: 'y'.repeat(100_000) }),
      headers: isJson ? jsonHeaders : undefined,
      payload: validJson,
    });
  }
  const u = url + qs(encodeQuery(query));
  // body properties
  if (isJson) {
    for (const { path, schema } of bodyPaths(route.body!.schema)) {
      for (const v of BODY_VALUES) {
        const body = structuredClone(validBody) as Record<string, unknown>;
        setAt(body, path, '__FUZZ_VALUE__');
        const payload = JSON.stringify(body).replace(PLACEHOLDER, v.json);
        const refused = v.refused || (v.badDate && isDateSchema(schema));
        cases.push({ route, where: `body ${path.join('.')}=${v.name}`, url: u, headers: jsonHeaders, payload, refused });
      }
    }
  }
  // whole bodies, on every route but GET (whose body is never read), also where none is expected
  if (route.method !== 'GET' && route.body?.contentType !== 'multipart/form-data') {
    for (const v of WHOLE_BODIES) cases.push({ route, where: `whole body ${v.name}`, url: u, headers: jsonHeaders, payload: v.json, refused: v.refused });
    cases.push({ route, where: 'body with wrong content type', url: u, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1&b=%00' });
    cases.push({ route, where: 'json body with charset latin1', url: u, headers: { 'content-type': 'application/json; charset=latin1' }, payload: validJson ?? '{}' });
  }
  // headers that reach the database (content type of a stored object) and the request id
  cases.push({ route, where: 'header x-request-id with NUL-like', url: u, headers: { ...(isJson ? jsonHeaders : {}), 'x-request-id': 'a\u0001b' }, payload: validJson });
  if (route.body?.contentType === 'multipart/form-data') cases.push(...multipartCases(route, u));
  return cases;
}

function multipartCases(route: RouteInfo, url: string): Case[] {
  const good = (extra: Array<{ name: string; value: string }> = [], fileName = 'track.vtt', data: string | Buffer = VTT) =>
    multipartBody([{ name: 'file', filename: fileName, data }, { name: 'language', value: 'en' }, { name: 'label', value: 'English' }, ...extra]);
  const cases: Case[] = [];
  const add = (where: string, m: { payload: Buffer; headers: Record<string, string> }, refused?: boolean) =>
    cases.push({ route, where: `multipart ${where}`, url, headers: m.headers, payload: m.payload, refused });
  const base = good();
  add('no boundary', { payload: base.payload, headers: { 'content-type': 'multipart/form-data' } });
  add('wrong boundary', { payload: base.payload, headers: { 'content-type': 'multipart/form-data; boundary=nope' } });
  add('truncated', { payload: base.payload.subarray(0, Math.floor(base.payload.length / 2)), headers: base.headers });
  add('no closing boundary', { payload: base.payload.subarray(0, base.payload.length - 20), headers: base.headers });
  add('garbage', { payload: Buffer.from('\u0000\u0001garbage--\r\n\r\n'), headers: base.headers });
  add('empty', { payload: Buffer.alloc(0), headers: base.headers });
  add('header without disposition', {
    payload: Buffer.from(`--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n`),
    headers: { 'content-type': 'multipart/form-data; boundary=B' },
  });
  add(
    'NUL in label',
    multipartBody([
      { name: 'file', filename: 'track.vtt', data: VTT },
      { name: 'language', value: 'en' },
      { name: 'label', value: 'a\u0000b' },
    ]),
    true,
  );
  add(
    'NUL in language',
    multipartBody([
      { name: 'file', filename: 'track.vtt', data: VTT },
      { name: 'language', value: 'e\u0000n' },
      { name: 'label', value: 'L' },
    ]),
    true,
  );
  add('NUL in blockId', good([{ name: 'blockId', value: 'b\u0000' }]), true);
  add('NUL in file name', good([], 'a\u0000.vtt'));
  add('NUL in file content', good([], 'track.vtt', `WEBVTT\n\n00:00.000 --> 00:01.000\na\u0000b\n`));
  add(
    'invalid UTF-8 in label',
    multipartBody([
      { name: 'file', filename: 'track.vtt', data: VTT },
      { name: 'language', value: 'en' },
      { name: 'label', value: '\udc00' },
    ]),
  );
  add(
    '100k label',
    multipartBody([
      { name: 'file', filename: 'track.vtt', data: VTT },
      { name: 'language', value: 'en' },
      { name: 'label', value: 'x'.repeat(100_000) },
    ]),
  );
  add(
    'two files',
    multipartBody([
      { name: 'file', filename: 'a.vtt', data: VTT },
      { name: 'file', filename: 'b.vtt', data: VTT },
      { name: 'language', value: 'en' },
      { name: 'label', value: 'L' },
    ]),
  );
  add('file over 1 MB', good([], 'track.vtt', `WEBVTT\n\n${'x'.repeat(1_100_000)}`));
  add('binary file', good([], 'track.vtt', Buffer.from([0xff, 0xfe, 0x00, 0x00, 0xd8, 0x00])));
  add('30 fields', multipartBody([{ name: 'file', filename: 'a.vtt', data: VTT }, ...Array.from({ length: 30 }, (_, i) => ({ name: `f${i}`, value: 'v' }))]));
  return cases;
}

/** The LRS answers errors in xAPI's form: a status and a plain-text message, never the envelope. */
function lrsProblem(res: { statusCode: number; body: string; headers: Record<string, unknown> }): string | null {
  if (res.headers['x-experience-api-version'] !== '1.0.3') return 'no X-Experience-API-Version header';
  if (res.statusCode < 400) return null;
  if (!String(res.headers['content-type'] ?? '').startsWith('text/plain')) return 'LRS error is not text/plain';
  if (res.body.length === 0 || res.body.includes('"error":')) return 'LRS error body is empty or an envelope';
  return null;
}

function envelopeProblem(res: { statusCode: number; body: string; headers: Record<string, unknown> }): string | null {
  if (res.statusCode < 400) return null;
  let body: any;
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'error body is not JSON';
  }
  if (body?.data !== null || typeof body?.error?.code !== 'string' || typeof body?.error?.message !== 'string') {
    return 'error body is not the envelope';
  }
  return null;
}

/**
 * The routes are walked in parts, one test each and in order (DELETE routes last), so the
 * per-test timeout keeps its meaning as routes are added: a part holds at most
 * MAX_ROUTES_PER_PART routes ('sent them all' fails, asking for more parts, once it would not).
 */
const PARTS = 12;
const MAX_ROUTES_PER_PART = 16;
const failures = new Map<string, string>();
let sent = 0;

describe('hostile inputs on every documented route', () => {
  for (let part = 0; part < PARTS; part++) {
    it(`never answer 5xx, errors are in the envelope, and boundary-refused inputs never succeed (routes, part ${part + 1} of ${PARTS})`, async () => {
      const from = Math.floor((part * routes.length) / PARTS);
      const to = Math.floor(((part + 1) * routes.length) / PARTS);
      const before = failures.size;
      for (const route of routes.slice(from, to)) {
        if (route.path === '/api/dev/seed') continue; // seeds a whole demo institution; takes no input
        const cases = casesFor(route);
        for (const who of await tokensFor(route)) {
          for (const c of cases) {
            const res = await t.app.inject({
              method: route.method as never,
              url: c.url,
              headers: { authorization: `Bearer ${who.token}`, ...(isLrs(route) ? LRS_HEADERS : {}), ...c.headers },
              ...(c.payload !== undefined ? { payload: c.payload } : {}),
            });
            sent++;
            const key = `${route.method} ${route.path} [${c.where}]`;
            const problems: string[] = [];
            if (res.statusCode >= 500) problems.push(`status ${res.statusCode}`);
            const env = isLrs(route) ? lrsProblem(res) : envelopeProblem(res);
            if (env) problems.push(env);
            if (c.refused && res.statusCode < 300) problems.push(`accepted (${res.statusCode}) an input the boundary must refuse`);
            if (problems.length > 0 && !failures.has(key)) {
              failures.set(key, `${key} as ${who.label}: ${problems.join('; ')} — ${res.body.slice(0, 200)}`);
            }
          }
        }
      }
      const list = [...failures.values()].slice(before);
      expect(list, `${list.length} failing inputs:\n${list.join('\n')}`).toEqual([]);
    });
  }

  it('sent them all', () => {
    if (process.env.FUZZ_REPORT) writeFileSync(process.env.FUZZ_REPORT, [...failures.values()].join('\n'));
    expect(sent).toBeGreaterThan(500);
    expect(Math.ceil(routes.length / PARTS), `${routes.length} routes in ${PARTS} parts: raise PARTS`).toBeLessThanOrEqual(MAX_ROUTES_PER_PART);
    console.info(`fuzz: ${sent} requests over ${routes.length} routes`);
    // About a hundred requests per route: the time grows with the API, not with a slowdown.
  }, 120_000);
});

describe('the input guard (one place for every route)', () => {
  let f: Fixture; // a fresh one: the sweep above deletes records
  beforeAll(async () => {
    f = await buildFixture(t);
  });
  const post = async (payload: string) => {
    const token = await t.token({ role: 'STUDENT', id: f.studentId });
    return t.app.inject({
      method: 'POST',
      url: `/api/lessons/${f.lessonId}/notes`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload,
    });
  };
  const expect400 = (res: { statusCode: number; json: () => any }, field?: string) => {
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    if (field) expect(res.json().error.details.fields[0].field).toBe(field);
  };

  it('refuses NUL and lone surrogates in body strings and keys, naming the field', async () => {
    expect400(await post('{"content":"a\\u0000b"}'), 'body.content');
    expect400(await post('{"content":"\\ud800x"}'), 'body.content');
    expect400(await post('{"content":"ok","x\\u0000":1}'), 'body');
  });

  it('accepts text with paired surrogates (emoji) and other control characters', async () => {
    const res = await post('{"content":"fine \\ud83d\\ude00 \\u0001 tab\\t"}');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.content).toContain('😀');
  });

  it('bounds JSON nesting at 64 levels', async () => {
    const nested = (n: number) => `{"content":"x","data":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect400(await post(nested(65)));
    // 64 levels pass the guard (the note schema then ignores the unknown field)
    expect((await post(nested(64))).statusCode).toBe(201);
  });

  it('refuses NUL in query strings and path parameters', async () => {
    const token = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    const q = await t.app.inject({ method: 'GET', url: '/api/courses?search=a%00b', headers: { authorization: `Bearer ${token}` } });
    expect400(q, 'querystring.search');
    const p = await t.app.inject({ method: 'GET', url: '/api/courses/a%00b', headers: { authorization: `Bearer ${token}` } });
    expect400(p, 'params.id');
  });

  it('refuses impossible timestamps and accepts real ones', async () => {
    const token = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    const patch = (unlockAt: string) =>
      t.app.inject({
        method: 'PATCH',
        url: `/api/lessons/${f.lessonId}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ unlockAt }),
      });
    // The last two are in years 10000 and 0000 once converted to UTC.
    for (const bad of [
      '0000-01-01T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '+275760-09-13T00:00:00.000Z',
      '9999-12-31T23:00:00-01:00',
      '0001-01-01T00:30:00+01:00',
    ]) {
      expect400(await patch(bad));
    }
    for (const good of ['0001-01-01T00:00:00Z', '2028-02-29T10:00:00+05:30', '9999-12-31T23:59:59.999Z', '9999-12-31T23:00:00+01:00', '0001-01-01T00:30:00-01:00']) {
      const res = await patch(good);
      expect(res.statusCode, `${good}: ${res.body}`).toBe(200);
    }
  });

  it('takes bounds at the ends of the calendar: a whole-day `to` of 9999-12-31, a filter offset beyond PostgreSQL’s ±15:59', async () => {
    const token = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    for (const url of ['/api/audit-log?to=9999-12-31', '/api/live-sessions?to=9999-12-31']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
    const run = (filters: unknown[]) =>
      t.app.inject({
        method: 'POST',
        url: '/api/analytics/reports/run',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ definition: { entity: 'enrollments', columns: ['id'], filters } }),
      });
    const zoned = await run([{ field: 'enrolledAt', op: 'gt', value: '2026-03-01T10:00:00+16:00' }]);
    expect(zoned.statusCode, zoned.body).toBe(200);
    // Numbers its 32-bit integer and 4-byte float columns cannot hold are the caller's mistake, named.
    for (const filter of [
      { field: 'progress', op: 'eq', value: 2147483648 },
      { field: 'finalScore', op: 'gt', value: 1e308 },
      { field: 'finalScore', op: 'between', value: [5e-324, 1] },
    ]) {
      const res = await run([filter]);
      expect400(res, filter.op === 'between' ? 'body.definition.filters.0.value.0' : 'body.definition.filters.0.value');
    }
  });

  it('refuses a score too close to 0 for its 4-byte float column (5e-324), by field', async () => {
    const token = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/assignments/${f.assignmentId}/grade`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: `{"submissionId":"${f.submissionId}","score":5e-324}`,
    });
    expect400(res, 'body.score');
  });

  it('answers malformed URLs and over-long path parameters with 400 in the envelope', async () => {
    const token = await t.token({ role: 'ADMIN', id: DEMO_ADMIN_ID });
    for (const url of ['/api/courses/%E0%A4%A', `/api/courses/${'x'.repeat(200)}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      expect400(res);
    }
  });
});

describe('database refusals of input the guard missed', () => {
  it('are 400 VALIDATION_ERROR, not 500; other database errors stay 500', async () => {
    const app = await createTestApp({
      extraRoutes: (a) => {
        const dbError = (code: string) => Object.assign(new Error('Failed query: insert …'), { cause: Object.assign(new Error('db'), { code }) });
        a.get('/api/test/db-nul', { config: { auth: 'public' } }, async () => {
          throw dbError('22021'); // invalid byte sequence for encoding "UTF8": 0x00
        });
        a.get('/api/test/db-date', { config: { auth: 'public' } }, async () => {
          throw dbError('22008'); // date/time field value out of range
        });
        a.get('/api/test/db-zone', { config: { auth: 'public' } }, async () => {
          throw dbError('22009'); // time zone displacement out of range
        });
        a.get('/api/test/db-number', { config: { auth: 'public' } }, async () => {
          throw dbError('22003'); // numeric value out of range
        });
        a.get('/api/test/db-other', { config: { auth: 'public' } }, async () => {
          throw dbError('23505');
        });
      },
    });
    try {
      for (const url of ['/api/test/db-nul', '/api/test/db-date', '/api/test/db-zone', '/api/test/db-number']) {
        const res = await app.request('GET', url);
        expect(res.status, res.raw).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
      const other = await app.request('GET', '/api/test/db-other');
      expect(other.status).toBe(500);
      expect(other.body.error.code).toBe('INTERNAL_ERROR');
    } finally {
      await app.close();
    }
  });
});
