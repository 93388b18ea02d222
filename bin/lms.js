#!/usr/bin/env node
// The `lms` CLI. In production (NODE_ENV=production, or LMS_DIST=1) it runs the compiled
// dist/main.js (`npm run build`); otherwise the TypeScript in src/ through tsx's loader, so a
// fresh clone needs no build step. LMS_DIST=0 forces the TypeScript sources.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/main.js', import.meta.url);
const choice = process.env.LMS_DIST;
const useDist = choice === '1' || (choice !== '0' && process.env.NODE_ENV === 'production');

// First, before the service loads: keeps process.nextTick on V8's fast path for the life of the
// process (src/platform/runtime/tick-object-maps.ts says why).
if (useDist) {
  if (!existsSync(fileURLToPath(dist))) {
    console.error('[lms] dist/main.js not found: run `npm run build` first (or set LMS_DIST=0 to run the TypeScript sources through tsx)');
    process.exit(1);
  }
  const { keepTickObjectMaps } = await import('../dist/platform/runtime/tick-object-maps.js');
  keepTickObjectMaps();
  await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { keepTickObjectMaps } = await import('../src/platform/runtime/tick-object-maps.ts');
  keepTickObjectMaps();
  await import('../src/main.ts');
}
