import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileResponseSchema, zodResponseSerializer, type ZodSerializedRoute } from './serializer.js';

const silentLog = { error: () => undefined } as never;

/** The compiled function of a schema that must compile. */
function compiled(schema: z.ZodType) {
  const c = compileResponseSchema(schema);
  if (c.kind !== 'compiled') throw new Error(`fell back to zod: ${c.reason}`);
  return c.serialize;
}

const row = z.object({
  id: z.string(),
  n: z.number().int().nullable(),
  ratio: z.number(),
  done: z.boolean(),
  kind: z.enum(['A', 'B']),
  status: z.literal('ok'),
  note: z.string().optional(),
  tags: z.array(z.string()),
  extra: z.record(z.string(), z.unknown()),
  value: z.union([z.boolean(), z.number()]).optional(),
  child: z.object({ k: z.string() }).nullable(),
  children: z.array(z.object({ k: z.string() })).nullable(),
});
const page = z.object({ data: z.array(row), error: z.null(), meta: z.object({ total: z.number().int() }) });

describe('compiled response serializer', () => {
  it('writes what zod parse + JSON.stringify writes, for the schema subset it compiles', () => {
    const serialize = compiled(page);
    const samples = [
      { data: [], error: null, meta: { total: 0 } },
      {
        data: [
          {
            id: 'a"\\\n\u2028é😀',
            n: null,
            ratio: 0.5,
            done: false,
            kind: 'B',
            status: 'ok',
            tags: ['x', ''],
            extra: { nested: { deep: [1, 'two', null] }, empty: {} },
            value: true,
            child: { k: 'v' },
            children: [{ k: '1' }],
          },
          { id: '', n: -3, ratio: 1e21, done: true, kind: 'A', status: 'ok', note: 'n', tags: [], extra: {}, child: null, children: null, value: 2.5 },
        ],
        error: null,
        meta: { total: 2 },
      },
    ];
    for (const sample of samples) {
      expect(JSON.parse(serialize(sample))).toEqual(JSON.parse(JSON.stringify(page.parse(sample))));
    }
  });

  it('never writes a field the schema does not declare, at any depth', () => {
    const serialize = compiled(page);
    const leaky = {
      data: [
        {
          id: '1',
          n: 1,
          ratio: 1,
          done: true,
          kind: 'A',
          status: 'ok',
          tags: [],
          extra: { kept: 'records keep their keys' },
          child: { k: 'v', passwordHash: 'secret-1' },
          children: [{ k: 'v', token: 'secret-2' }],
          email: 'secret-3',
        },
      ],
      error: null,
      meta: { total: 1, internalCost: 'secret-4' },
      debug: 'secret-5',
    };
    const out = serialize(leaky);
    expect(out).not.toMatch(/secret/);
    expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(page.parse(leaky))));
  });

  it('falls back to zod for what parse rewrites or fast-json-stringify cannot express, and says why', () => {
    const cases: Array<[z.ZodType, RegExp]> = [
      [z.object({ s: z.string().transform((s) => s.length) }), /s: pipe/],
      [z.object({ s: z.string().trim() }), /s: a check that rewrites/],
      [z.object({ s: z.string().default('x') }), /s: default/],
      [z.object({ d: z.date() }), /d: date/],
      [z.object({ u: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) }), /u: a union of other/],
      [z.object({ c: z.coerce.number() }), /c: coercion/],
      [z.object({ t: z.tuple([z.string()]) }), /t: tuple/],
    ];
    for (const [schema, reason] of cases) {
      const c = compileResponseSchema(schema);
      expect(c.kind).toBe('zod');
      expect(c.kind === 'zod' && c.reason).toMatch(reason);
    }
  });

  it('compiles each schema object once', () => {
    const schema = z.object({ a: z.string() });
    expect(compileResponseSchema(schema)).toBe(compileResponseSchema(schema));
  });
});

describe('zodResponseSerializer', () => {
  const schema = z.object({ data: z.object({ n: z.number() }), error: z.null() });
  const route = { schema, method: 'GET', url: '/x', httpStatus: '200' } as never;

  it('strict: fails on a mismatch and on an undeclared field; writes the compiled output otherwise', () => {
    const serialize = zodResponseSerializer('strict', silentLog)(route);
    expect(serialize({ data: { n: 1 }, error: null })).toBe('{"data":{"n":1},"error":null}');
    expect(() => serialize({ data: { n: 'one' }, error: null })).toThrow(/does not match its schema/);
    expect(() => serialize({ data: { n: 1, secret: 'x' }, error: null })).toThrow(/does not match its schema/);
  });

  it('log: drops undeclared fields without a zod pass; logs what the compiled serializer cannot write and sends it as is', () => {
    const logged: unknown[] = [];
    const serialize = zodResponseSerializer('log', { error: (obj: unknown) => logged.push(obj) } as never)(route);
    expect(serialize({ data: { n: 1, secret: 'x' }, error: null })).toBe('{"data":{"n":1},"error":null}');
    expect(logged).toEqual([]);
    expect(JSON.parse(serialize({ data: { n: 'not a number' }, error: null }))).toEqual({ data: { n: 'not a number' }, error: null });
    expect(logged).toMatchObject([{ url: '/x', issues: [{ path: 'data.n' }] }]);
  });

  it('records the routes that fall back to zod', () => {
    const fallbacks: ZodSerializedRoute[] = [];
    const withDate = z.object({ data: z.object({ at: z.date() }), error: z.null() });
    const serialize = zodResponseSerializer('log', silentLog, fallbacks)({ schema: withDate, method: 'GET', url: '/d', httpStatus: '200' } as never);
    expect(fallbacks).toEqual([{ method: 'GET', url: '/d', status: '200', reason: 'data.at: date' }]);
    expect(serialize({ data: { at: new Date(0) }, error: null })).toBe('{"data":{"at":"1970-01-01T00:00:00.000Z"},"error":null}');
  });
});
