import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepTickObjectMaps } from './tick-object-maps.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MODULE = fileURLToPath(new URL('./tick-object-maps.ts', import.meta.url));

/**
 * A child process that runs ticks with full garbage collections between them (none while a tick
 * object is alive), then prints V8's feedback for `process.nextTick` (`%DebugPrint`, natives
 * syntax). Its argument `keep` calls keepTickObjectMaps() first.
 */
const PROBE = `
const { keepTickObjectMaps } = await import(${JSON.stringify(MODULE)});
if (process.argv[2] === 'keep') keepTickObjectMaps();
const ticks = () => new Promise((resolve) => {
  let left = 200;
  const next = () => (--left === 0 ? resolve() : process.nextTick(next));
  process.nextTick(next);
});
for (let round = 0; round < 6; round++) {
  await ticks();
  await new Promise((resolve) => setImmediate(resolve));
  globalThis.gc();
}
await ticks();
%DebugPrint(process.nextTick);
`;

/** The states of the tick literal's property definitions in nextTick's feedback, e.g. ['MONOMORPHIC', …]. */
async function literalFeedback(dir: string, mode: 'keep' | 'plain'): Promise<string[]> {
  // Into a file: V8 prints through C's stdout, which a pipe can lose at exit.
  const output = join(dir, `${mode}.txt`);
  const file = await open(output, 'w');
  try {
    const child = spawn(process.execPath, ['--expose-gc', '--allow-natives-syntax', '--import', 'tsx', join(dir, 'probe.mjs'), mode], {
      cwd: ROOT,
      stdio: ['ignore', file.fd, 'inherit'],
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  } finally {
    await file.close();
  }
  return [...(await readFile(output, 'utf8')).matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
}

describe('keepTickObjectMaps', () => {
  it('holds one of Node’s tick objects, the same one on every call', () => {
    const kept = keepTickObjectMaps() as Record<string | symbol, unknown>;
    expect(Object.keys(kept)).toEqual(['callback', 'args']);
    expect(Object.getOwnPropertySymbols(kept).map((s) => s.description)).toEqual(['async_id_symbol', 'trigger_async_id_symbol']);
    expect(keepTickObjectMaps()).toBe(kept);
  });

  // The feedback layout printed is V8's of Node 20, the version the service runs on (package.json engines).
  describe.runIf(process.versions.node.startsWith('20.'))('against full garbage collections (Node 20)', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lms-tick-maps-'));
      await writeFile(join(dir, 'probe.mjs'), PROBE);
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('without it, the tick literal’s feedback goes megamorphic once a collection frees its maps', async () => {
      const states = await literalFeedback(dir, 'plain');
      expect(states).toHaveLength(4);
      expect(states).toContain('MEGAMORPHIC');
    });

    it('with it, every property of the tick literal stays monomorphic', async () => {
      expect(await literalFeedback(dir, 'keep')).toEqual(['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);
    });
  });
});
