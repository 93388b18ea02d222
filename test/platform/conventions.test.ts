/**
 * House conventions the compiler does not check (DESIGN.md §3): every domain with routes keeps
 * its zod schemas in `<domain>.schemas.ts`, so route files hold a schema reference and one
 * service call each, and declare no schema of their own.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULES = new URL('../../src/modules/', import.meta.url).pathname;
const domains = readdirSync(MODULES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .filter((name) => existsSync(join(MODULES, name, `${name}.routes.ts`)));

describe('module conventions', () => {
  it('sees the domains', () => {
    expect(domains.length).toBeGreaterThanOrEqual(20);
    expect(domains).toContain('cron');
  });

  it('every domain with routes has its <domain>.schemas.ts', () => {
    expect(domains.filter((name) => !existsSync(join(MODULES, name, `${name}.schemas.ts`)))).toEqual([]);
  });

  it('no route file declares zod schemas (they live in the schemas file)', () => {
    const inline = domains.filter((name) => /from 'zod'/.test(readFileSync(join(MODULES, name, `${name}.routes.ts`), 'utf8')));
    expect(inline).toEqual([]);
  });
});
