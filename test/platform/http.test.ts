import { API_HEADERS } from '../../src/platform/http/response-headers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { paginationFields, pageMeta, toPage } from '../../src/platform/http/pagination.js';
import { paged } from '../../src/platform/http/envelope.js';
import { multipart } from '../helpers/multipart.js';

let t: TestApp;
let student: string;

beforeAll(async () => {
  t = await createTestApp({
    env: { CORS_ORIGINS: 'https://app.example.edu', BODY_LIMIT_BYTES: '2048' },
    extraRoutes: (app) => {
      const typed = app.withTypeProvider<ZodTypeProvider>();
      typed.get('/api/test/boom', async () => {
        throw new Error('secret internal detail');
      });
      // PostgreSQL restarting, as Drizzle reports it: the driver's error as the cause.
      typed.get('/api/test/db-down', async () => {
        throw Object.assign(new Error('Failed query: select 1'), { cause: Object.assign(new Error('the database system is shutting down'), { code: '57P03' }) });
      });
      // A deadlock victim, as Drizzle reports it.
      typed.get('/api/test/deadlock', async () => {
        throw Object.assign(new Error('Failed query: update x'), { cause: Object.assign(new Error('deadlock detected'), { code: '40P01' }) });
      });
      typed.get('/api/test/db-lost', async () => {
        throw new Error('Connection terminated unexpectedly');
      });
      typed.post('/api/test/echo', { schema: { body: z.object({ title: z.string().min(1), count: z.number().int() }) } }, async (req) => ({ data: req.body, error: null }));
      typed.get(
        '/api/test/wrong-shape',
        { schema: { response: { 200: z.object({ data: z.object({ n: z.number() }), error: z.null() }) } } },
        async () => ({ data: { n: 'not a number' }, error: null }) as never,
      );
      typed.get('/api/test/extra-field', { schema: { response: { 200: z.object({ data: z.object({ n: z.number() }), error: z.null() }) } } }, async () => ({
        data: { n: 1, secret: 'hidden' },
        error: null,
      }));
      typed.get('/api/test/items', { schema: { querystring: z.object({ ...paginationFields }) } }, async (req) => {
        const page = toPage(req.query);
        const all = Array.from({ length: 250 }, (_, i) => i);
        return paged(all.slice((page.page - 1) * page.perPage, page.page * page.perPage), pageMeta(page, all.length));
      });
    },
  });
  student = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
});
afterAll(() => t.close());

describe('envelope', () => {
  it('wraps success in {data, error: null}', async () => {
    const res = await t.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { status: 'ok' }, error: null });
  });

  it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
    const res = await t.request('GET', '/api/nothing-here', { token: student });
    expect(res.status).toBe(404);
    expect(res.body.data).toBeNull();
    expect(res.body.error?.code).toBe('NOT_FOUND');
  });

  it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
    const res = await t.request('POST', '/api/test/echo', {
      token: student,
      body: '{"title": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
  });

  it('lists each failing field in error.details', async () => {
    const res = await t.request('POST', '/api/test/echo', { token: student, body: { title: '', count: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    const fields = res.body.error?.details.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['body.count', 'body.title']);
  });

  it('answers a body over the limit with 413', async () => {
    const res = await t.request('POST', '/api/test/echo', {
      token: student,
      body: { title: 'x'.repeat(5000), count: 1 },
    });
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await t.request('POST', '/api/test/echo', {
      token: student,
      body: 'title=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error?.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a bug with 500 INTERNAL_ERROR and no stack or message leak', async () => {
    const res = await t.request('GET', '/api/test/boom', { token: student, headers: { 'x-request-id': 'req-boom-1' } });
    expect(res.status).toBe(500);
    expect(res.body.error?.code).toBe('INTERNAL_ERROR');
    expect(res.raw).not.toContain('secret internal detail');
    expect(res.raw).not.toMatch(/at .*\.ts:\d+/);
    expect(res.body.error?.message).toContain('req-boom-1');
  });
});

describe('pagination', () => {
  it('defaults to page 1 and reports meta', async () => {
    const res = await t.request('GET', '/api/test/items', { token: student });
    expect(res.body.meta).toEqual({ total: 250, page: 1, perPage: 20, totalPages: 13 });
    expect(res.body.data).toHaveLength(20);
  });

  it('accepts perPage or limit up to 100', async () => {
    const a = await t.request('GET', '/api/test/items?perPage=100&page=3', { token: student });
    expect(a.body.meta).toEqual({ total: 250, page: 3, perPage: 100, totalPages: 3 });
    expect(a.body.data).toHaveLength(50);
    const b = await t.request('GET', '/api/test/items?limit=7', { token: student });
    expect(b.body.meta.perPage).toBe(7);
  });

  it('takes an empty value (a form field left blank) as absent: the defaults apply', async () => {
    const res = await t.request('GET', '/api/test/items?page=&perPage=&limit=', { token: student });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 250, page: 1, perPage: 20, totalPages: 13 });
    // The lists with pagination fields of their own too (the notifications default is 25).
    const notes = await t.request('GET', '/api/notifications?page=&limit=', { token: student });
    expect(notes.status, notes.raw).toBe(200);
  });

  it('refuses a page size over 100, page 0 and non-numbers', async () => {
    for (const q of ['perPage=101', 'limit=101', 'page=0', 'page=abc', 'perPage=0']) {
      const res = await t.request('GET', `/api/test/items?${q}`, { token: student });
      expect(res.status, q).toBe(400);
      expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('platform headers and versioning', () => {
  it('serves /api/v1/* by the same routes', async () => {
    const a = await t.request('GET', '/api/auth/session', { token: student });
    const b = await t.request('GET', '/api/v1/auth/session', { token: student });
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const nf = await t.request('GET', '/api/v1/nothing', { token: student });
    expect(nf.status).toBe(404);
  });

  it('puts a request id on every response and echoes a sent one', async () => {
    const a = await t.request('GET', '/healthz');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const b = await t.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(b.headers['x-request-id']).toBe('abc-123');
    const err = await t.request('GET', '/api/none', { headers: { 'x-request-id': 'abc-404' } });
    expect(err.headers['x-request-id']).toBe('abc-404');
  });

  it('sends security headers: the API part on JSON answers, all of them on documents', async () => {
    const documentOnly = [
      'cross-origin-opener-policy',
      'origin-agent-cluster',
      'referrer-policy',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ];
    const api = {
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'cross-origin-resource-policy': 'same-site',
    };
    for (const [path, status] of [
      ['/healthz', 200],
      ['/api/auth/session', 200],
      ['/api/none', 404],
    ] as const) {
      const res = await t.request('GET', path);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers, path).toMatchObject(api);
      for (const name of documentOnly) expect(res.headers[name], `${path}: ${name}`).toBeUndefined();
    }
    // A page a browser renders (the API reference) gets helmet's whole set.
    const page = await t.request('GET', '/docs/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers).toMatchObject({ ...api, 'referrer-policy': 'no-referrer', 'x-dns-prefetch-control': 'off', 'origin-agent-cluster': '?1' });
    for (const name of documentOnly) expect(page.headers[name], `/docs/: ${name}`).toBeDefined();
  });

  it('allows CORS only for configured origins', async () => {
    const ok = await t.request('GET', '/healthz', { headers: { origin: 'https://app.example.edu' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.edu');
    const no = await t.request('GET', '/healthz', { headers: { origin: 'https://evil.example' } });
    expect(no.headers['access-control-allow-origin']).toBeUndefined();
    // A web client on that origin may edit and delete, not only read (the plugin's default is GET, HEAD, POST).
    for (const method of ['PATCH', 'PUT', 'DELETE']) {
      const pre = await t.request('OPTIONS', '/api/lessons/abc/notes/def', {
        headers: { origin: 'https://app.example.edu', 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
      });
      expect(pre.status, method).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://app.example.edu');
      expect(String(pre.headers['access-control-allow-methods']).split(/,\s*/)).toContain(method);
      expect(pre.headers['access-control-allow-credentials']).toBe('true');
    }
    // and may read the request id and the rate-limit headers of an answer.
    expect(String(ok.headers['access-control-expose-headers']).split(/,\s*/)).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'ratelimit-remaining']));
  });

  it('keeps the xAPI LRS open to any origin also when CORS_ORIGINS limits the rest', async () => {
    const headers = { origin: 'https://content.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' };
    const lrs = await t.request('OPTIONS', '/api/xapi/statements', { headers });
    expect(lrs.status).toBe(204);
    expect(lrs.headers['access-control-allow-origin']).toBe('*');
    expect(lrs.headers['access-control-allow-credentials']).toBeUndefined();
    const api = await t.request('OPTIONS', '/api/auth/session', { headers: { ...headers, 'access-control-request-method': 'GET' } });
    expect(api.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a database that is restarting or unreachable is 503 SERVICE_UNAVAILABLE, not a 500', async () => {
    for (const path of ['/api/test/db-down', '/api/test/db-lost']) {
      const res = await t.request('GET', path, { token: student });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ data: null, error: { code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; retry shortly' } });
    }
  });

  it('answers a transaction PostgreSQL rolled back for a concurrent one (deadlock) with 503: nothing was written, retry', async () => {
    const res = await t.request('GET', '/api/test/deadlock', { token: student });
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The request collided with a concurrent one and changed nothing; retry it' });
  });

  it('reports readiness with the database', async () => {
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('ready');
  });

  it('is unready while draining for shutdown, and still serves everything else', async () => {
    t.app.draining = true;
    try {
      const ready = await t.request('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ data: null, error: { code: 'SERVICE_UNAVAILABLE', message: 'Shutting down' } });
      expect((await t.request('GET', '/healthz')).status).toBe(200);
      expect((await t.request('GET', '/api/auth/session', { token: student })).status).toBe(200);
    } finally {
      t.app.draining = false;
    }
    expect((await t.request('GET', '/readyz')).status).toBe(200);
  });
});

/** The hooks Fastify runs for `method url` on `app`, by lifecycle stage, as `printRoutes` names them. */
function hooksOf(method: string, url: string, app = t.app): Record<string, string[]> {
  const lines = app.printRoutes({ includeHooks: true, commonPrefix: false, method }).split('\n');
  // A route's line is `── /healthz (GET)`, or `── healthz (GET)` below the web app's `/`.
  const name = url.replace(/^\//, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const start = lines.findIndex((l) => new RegExp(`── /?${name} \\(${method}[,)]`).test(l));
  expect(start).toBeGreaterThanOrEqual(0);
  const hooks: Record<string, string[]> = {};
  for (const line of lines.slice(start + 1)) {
    const m = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!m) break;
    hooks[m[1]!] = JSON.parse(m[2]!);
  }
  return hooks;
}

describe('per-request pipeline', () => {
  // Each hook is work on every request of the route; plugins that matter to a few routes
  // (multipart, cookies) must not add theirs to all of them.
  it('runs only the response headers, CORS and the input guard on a public route', () => {
    expect(hooksOf('GET', '/healthz')).toEqual({
      onRequest: ['requestHeaders()', 'handleCors()'],
      preValidation: ['inputGuard()'],
      onSend: ['answerHeaders()'],
    });
  });

  it('adds authentication, the rate limiter and the tenant check on an /api route, and nothing else', () => {
    const hooks = hooksOf('GET', '/api/auth/session');
    expect(hooks.onRequest).toEqual(['requestHeaders()', 'handleCors()', 'authenticate()', expect.any(String)]);
    expect(hooks.preParsing).toEqual(['refusalHook()']);
    expect(hooks.preValidation).toEqual(['inputGuard()', 'tenantHook()']);
    expect(hooks.onSend).toEqual(['answerHeaders()']);
    expect(hooks.onResponse).toBeUndefined();
  });

  it('has no CORS hook without CORS_ORIGINS, and a preflight is the 405 of any method the path does not take', async () => {
    const plain = await createTestApp();
    try {
      expect(hooksOf('GET', '/healthz', plain.app).onRequest).toEqual(['requestHeaders()']);
      const res = await plain.request('OPTIONS', '/api/auth/session', {
        headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
      });
      expect(res.status).toBe(405);
      expect(res.body).toMatchObject({ data: null, error: { code: 'METHOD_NOT_ALLOWED' } });
      expect(res.headers.allow).toContain('GET');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['x-request-id']).toBeTruthy();
    } finally {
      await plain.close();
    }
  });

  it('parses multipart/form-data for the caption upload only: elsewhere it is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const { body, headers } = multipart([{ name: 'title', value: 'x' }]);
    const res = await t.request('POST', '/api/test/echo', { token: student, body, headers });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ data: null, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(hooksOf('POST', '/api/lessons/:id/captions').onResponse).toHaveLength(1);
  });

  it('reads the session cookie without a cookie plugin on every request', async () => {
    const cookie = await t.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
    const name = t.deps.config.SESSION_COOKIE_NAME;
    const res = await t.request('GET', '/api/auth/session', { headers: { cookie: `theme=dark; ${name}=${cookie}; other=1` } });
    expect(res.body.data).toMatchObject({ personId: 'c_demo_stu_01', role: 'STUDENT' });
  });

  it('puts the request id on answers refused before routing (a URL that does not decode)', async () => {
    const res = await t.request('GET', '/api/notes/%E0%A4%A', { headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.status).toBe(400);
    expect(res.headers['x-request-id']).toBe('bad-url-1');
    for (const [name, value] of Object.entries(API_HEADERS)) expect(res.headers[name], name).toBe(value);
  });
});

describe('response validation', () => {
  it('strict (tests): a response that does not match its schema fails the request with 500', async () => {
    const res = await t.request('GET', '/api/test/wrong-shape', { token: student });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect(res.raw).not.toContain('not a number');
  });

  it('strict: a field the schema does not name (a DTO leaking data) fails the request too', async () => {
    const res = await t.request('GET', '/api/test/extra-field', { token: student });
    expect(res.status).toBe(500);
    expect(res.raw).not.toContain('hidden');
  });

  it('log (default): the mismatch is logged and the data sent anyway', async () => {
    const lines: string[] = [];
    const lenient = await createTestApp({
      env: { RESPONSE_VALIDATION: 'log' },
      logger: { level: 'error', stream: { write: (line: string) => void lines.push(line) } },
      extraRoutes: (app) => {
        app
          .withTypeProvider<ZodTypeProvider>()
          .get(
            '/api/test/wrong-shape',
            { schema: { response: { 200: z.object({ data: z.object({ n: z.number() }), error: z.null() }) } } },
            async () => ({ data: { n: 'not a number' }, error: null }) as never,
          );
        app
          .withTypeProvider<ZodTypeProvider>()
          .get('/api/test/extra-field', { schema: { response: { 200: z.object({ data: z.object({ n: z.number() }), error: z.null() }) } } }, async () => ({
            data: { n: 1, secret: 'hidden' },
            error: null,
          }));
      },
    });
    try {
      const token = await lenient.token({ role: 'STUDENT', id: 'c_demo_stu_01' });
      const res = await lenient.request('GET', '/api/test/wrong-shape', { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { n: 'not a number' }, error: null });
      const extra = await lenient.request('GET', '/api/test/extra-field', { token });
      expect(extra.body).toEqual({ data: { n: 1 }, error: null });
      const logged = lines.map((l) => JSON.parse(l)).find((l) => /does not match its schema/.test(l.msg));
      expect(logged).toMatchObject({ level: 50, url: '/api/test/wrong-shape', httpStatus: '200' });
      expect(logged.issues[0].path).toBe('data.n');
    } finally {
      await lenient.close();
    }
  });
});

describe('docs', () => {
  it('serves OpenAPI 3.1 with every route and the security schemes', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.raw);
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['basicAuth', 'bearerAuth', 'cronSecret', 'sessionCookie']);
    expect(doc.paths['/api/auth/session'].get.responses['200']).toBeDefined();
    expect(doc.paths['/healthz']).toBeDefined();
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    expect([200, 301, 302]).toContain(docs.statusCode);
  });

  it('documents every registered /api route with its responses', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const routes = t.app.registeredRoutes.filter((r) => !r.url.startsWith('/api/test/'));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) {
      const path = r.url.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.url}`).toBeDefined();
      expect(Object.keys(op.responses ?? {}).length, `${r.method} ${r.url} responses`).toBeGreaterThan(0);
    }
  });

  it("documents the common error envelopes on every route, without overriding a route's own", async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const routes = t.app.registeredRoutes.filter((r) => !r.url.startsWith('/api/test/'));
    // The xAPI LRS is the documented exception to the envelope: its errors are plain text (xAPI's own form).
    const isLrs = (url: string) => url.startsWith('/api/xapi/') && !url.startsWith('/api/xapi/credentials');
    const lrsRoutes = routes.filter((r) => isLrs(r.url));
    expect(lrsRoutes.length).toBeGreaterThanOrEqual(10);
    for (const r of lrsRoutes) {
      const op = doc.paths[r.url][r.method.toLowerCase()];
      // GET /about needs no authorization and reads no parameter: it fails only when rate-limited or on a server error.
      for (const status of r.url === '/api/xapi/about' ? ['429', '500'] : ['400', '401', '404', '429', '500']) {
        expect(op.responses[status]?.content?.['text/plain']?.schema, `${r.method} ${r.url} ${status}`).toBeDefined();
        expect(op.responses[status]?.content?.['application/json'], `${r.method} ${r.url} ${status}`).toBeUndefined();
      }
      expect(op.description, `${r.method} ${r.url}`).toMatch(/not the service envelope/);
    }
    for (const r of routes.filter((x) => !isLrs(x.url))) {
      const op = doc.paths[r.url.replace(/:(\w+)/g, '{$1}')][r.method.toLowerCase()];
      // Routes that need no authentication (security [] or an optional {}) do not list 401 unless they say why (the webhook's signature).
      const authenticated = op.security.length > 0 && !op.security.some((s: object) => Object.keys(s).length === 0);
      for (const status of ['400', '403', '404', '409', '429', '500', ...(authenticated ? ['401'] : [])]) {
        const schema = op.responses[status]?.content?.['application/json']?.schema;
        expect(schema, `${r.method} ${r.url} ${status}`).toBeDefined();
        expect(Object.keys(schema.properties ?? {}).sort(), `${r.method} ${r.url} ${status}`).toEqual(['data', 'error']);
      }
    }
    // A route's own description of a status is kept.
    const upload = doc.paths['/api/lessons/{id}/captions'].post.responses;
    expect(upload['409'].description).toMatch(/^CONFLICT/);
    expect(upload['413'].description).toMatch(/^PAYLOAD_TOO_LARGE/);
    expect(doc.paths['/healthz'].get.responses['500']).toBeDefined();
  });

  it('documents the errors of each route: per-status codes, no 401 without authentication, 413/415 with a body, 402 where fees gate, 502/503 where they happen', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const op = (path: string, method: string) => doc.paths[path][method];
    // Each status names its codes (ERROR_STATUS) and documents error.code as their enum.
    const forbidden = op('/api/courses', 'post').responses['403'];
    expect(forbidden.description).toMatch(/^FORBIDDEN, TENANT_MISMATCH, ENROLLMENT_REQUIRED or LESSON_LOCKED/);
    expect(forbidden.content['application/json'].schema.properties.error.properties.code.enum).toEqual(['FORBIDDEN', 'TENANT_MISMATCH', 'ENROLLMENT_REQUIRED', 'LESSON_LOCKED']);
    expect(op('/api/courses', 'post').responses['409'].content['application/json'].schema.properties.error.properties.code.enum).toEqual([
      'ALREADY_ENROLLED',
      'COURSE_FULL',
      'ATTEMPT_LIMIT',
      'CONFLICT',
    ]);
    // Routes without authentication do not list 401 (the webhook does: a bad signature is 401).
    for (const [path, method] of [
      ['/api/certificates/verify', 'get'],
      ['/api/xapi/about', 'get'],
      ['/api/web/config', 'get'],
      ['/api/auth/session', 'get'],
      ['/api/files/raw/{tenant}/{kind}/{object}', 'get'],
      ['/healthz', 'get'],
      ['/readyz', 'get'],
    ]) {
      expect(op(path, method).responses['401'], `${method} ${path}`).toBeUndefined();
    }
    expect(op('/api/webhooks/meet-recording', 'post').responses['401'].description).toMatch(/^AUTH_REQUIRED: .*signature/);
    // xAPI statements use Basic auth (plain-text errors), cron routes the cron secret: both list 401.
    expect(op('/api/xapi/statements', 'post').responses['401']).toBeDefined();
    expect(op('/api/cron/assignment-reminders', 'get').responses['401'].description).toMatch(/CRON_SECRET/);
    // A JSON body can be too large or of another type.
    for (const [path, method] of [
      ['/api/courses', 'post'],
      ['/api/courses/{id}', 'patch'],
      ['/api/lessons/{id}/progress', 'post'],
      ['/api/notifications/preferences', 'delete'],
    ]) {
      expect(op(path, method).responses['413'].description, `${method} ${path}`).toMatch(/^PAYLOAD_TOO_LARGE/);
      expect(op(path, method).responses['415'].description, `${method} ${path}`).toMatch(/^UNSUPPORTED_MEDIA_TYPE/);
    }
    expect(op('/api/courses', 'get').responses['413']).toBeUndefined();
    // Every route the fee-gating rule guards lists 402 FEE_OVERDUE; routes it does not guard do not.
    const feeGated = [
      'getLesson',
      'learnLesson',
      'getAssignment',
      'submitAssignment',
      'updateLessonProgress',
      'updateLessonProgressBatch',
      'updatePdfProgress',
      'recordLearnerEvents',
      'recordInteraction',
      'answerBlock',
      'listLessonCaptions',
      'getLessonCaptionTranscript',
      'getQuiz',
      'startQuizAttempt',
      'submitQuizAttempt',
      'launchScorm',
      'scormPlayer',
      'trackScorm',
      'selfEnroll',
      'enrollLearningPath',
    ];
    const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((item) => Object.values(item));
    const byId = new Map(ops.map((o) => [o.operationId, o]));
    for (const id of feeGated) expect(byId.get(id)?.responses['402']?.description, id).toMatch(/^FEE_OVERDUE/);
    expect(
      ops
        .filter((o) => o.responses['402'])
        .map((o) => o.operationId)
        .sort(),
    ).toEqual([...feeGated].sort());
    // Upstream and timeout failures where they happen.
    expect(byId.get('createAnnouncement').responses['502'].description).toMatch(/^BAD_GATEWAY/);
    expect(byId.get('runReport').responses['503'].description).toMatch(/^SERVICE_UNAVAILABLE: .*statement_timeout/);
    expect(byId.get('getLessonCaptionTranscript').responses['502'].description).toMatch(/^INTERNAL_ERROR/);
    expect(byId.get('listCourses').responses['502']).toBeUndefined();
  });

  it('gives every operation a description, and every success response one of its own', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    // The test routes of this file (/api/test/…) are not the service's.
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([p]) => !p.startsWith('/api/test/'))) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.description?.length ?? 0, `${method} ${path} (${op.operationId}) has no description`).toBeGreaterThan(20);
        for (const [status, response] of Object.entries(op.responses as Record<string, { description: string }>)) {
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
        }
      }
    }
    expect(doc.paths['/api/courses'].post.responses['201'].description).toBe('Created');
    expect(doc.paths['/api/courses'].get.responses['200'].description).toBe('OK');
  });

  it("documents each list's default page size and that perPage wins over limit", async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const sizeParam = (path: string, name = 'perPage') => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    for (const [path, size] of [
      ['/api/courses', 20],
      ['/api/me/peer-reviews', 25],
      ['/api/audit-log', 50],
      ['/api/discussions/{id}', 50],
      ['/api/live-sessions/{id}/attendance', 50],
      ['/api/live-sessions/attendance-summary', 50],
      ['/api/assignments/{id}/peer-reviews', 50],
      ['/api/categories', 100],
    ] as const) {
      expect(sizeParam(path).description, path).toMatch(new RegExp(`\\(default ${size}\\); when both perPage and limit are sent, perPage wins`));
      expect(sizeParam(path, 'limit').description, path).toMatch(new RegExp(`default ${size}\\); perPage wins`));
    }
    // Notifications take limit first (perPage is its alias there).
    expect(sizeParam('/api/notifications', 'limit').description).toMatch(/default 25\); here limit wins/);
  });

  it('documents the certificate code as required; a missing one is still the service’s 400', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    const code = doc.paths['/api/certificates/verify'].get.parameters.find((p: { name: string }) => p.name === 'code');
    expect(code.required).toBe(true);
    for (const query of [undefined, { code: '' }, { code: '  ' }]) {
      const res = await t.request('GET', '/api/certificates/verify', { query });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message: 'code is required', details: { fields: [{ field: 'querystring.code', message: 'required' }] } });
    }
  });

  it('documents one deletion result, {id, deleted: true}, for every DELETE that removes', async () => {
    const doc = JSON.parse((await t.request('GET', '/openapi.json')).raw);
    // Archiving a course and unenrolling keep the row and answer it; resetting notification
    // preferences answers {reset: true} (spec 4.7).
    const keepsRow = new Set(['/api/courses/{id}', '/api/courses/{id}/enrollments/{studentId}', '/api/notifications/preferences']);
    // The xAPI LRS's document resources answer DELETE with 204 and no body (xAPI's form, outside the envelope).
    const deletes = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(
      ([path, ops]) => ops.delete && !keepsRow.has(path) && !(path.startsWith('/api/xapi/') && !path.startsWith('/api/xapi/credentials')),
    );
    expect(deletes.length).toBeGreaterThanOrEqual(5);
    for (const [path, ops] of deletes) {
      const data = ops.delete.responses['200'].content['application/json'].schema.properties.data;
      expect(Object.keys(data.properties).sort(), path).toEqual(['deleted', 'id']);
      expect(data.properties.deleted.type, path).toBe('boolean');
      expect(data.required?.sort(), path).toEqual(['deleted', 'id']);
    }
  });
});
