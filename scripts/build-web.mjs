#!/usr/bin/env node
// Builds the web app (web/) with Vite.
//   node scripts/build-web.mjs                 build into web/dist
//   node scripts/build-web.mjs --out dist/web  build there (`npm run build`: next to the compiled server)
//   node scripts/build-web.mjs --if-stale      only when the output is missing or was built from other sources
//                                              (`npm start`): a hash of web/ sources and the lockfile, kept in
//                                              <out>/.source-hash, so a checkout or a pull that changes nothing
//                                              in the app does not rebuild it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
const INPUTS = ['web/src', 'web/public', 'web/index.html', 'web/vite.config.ts', 'web/tsconfig.json', 'package-lock.json'];

async function filesUnder(path) {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => null);
  if (entries === null) return existsSync(path) ? [path] : [];
  const nested = await Promise.all(entries.map((e) => filesUnder(join(path, e.name))));
  return nested.flat();
}

async function sourceHash() {
  const hash = createHash('sha256');
  const files = (await Promise.all(INPUTS.map((p) => filesUnder(join(ROOT, p))))).flat().sort();
  for (const file of files) {
    hash
      .update(relative(ROOT, file))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  }
  return hash.digest('hex');
}

const { values } = parseArgs({ options: { out: { type: 'string', default: 'web/dist' }, 'if-stale': { type: 'boolean', default: false } } });
const outDir = resolve(ROOT, values.out);
const stampFile = join(outDir, '.source-hash');
const hash = await sourceHash();

if (values['if-stale'] && existsSync(join(outDir, 'index.html'))) {
  const built = await readFile(stampFile, 'utf8').catch(() => '');
  if (built.trim() === hash) {
    console.log(`[web] ${relative(ROOT, outDir)} is up to date`);
    process.exit(0);
  }
}

console.log(`[web] building the web app into ${relative(ROOT, outDir)} …`);
const started = Date.now();
const { build } = await import('vite');
await build({ configFile: join(ROOT, 'web/vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
await writeFile(stampFile, `${hash}\n`);
console.log(`[web] built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
