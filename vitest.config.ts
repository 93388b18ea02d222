import { defineConfig } from 'vitest/config';

/**
 * Three projects run by `npm test` (`npm run test:unit|test:integration|test:process` one each),
 * and the browser tests, run by `npm run test:e2e` only (they need Debian's chromium; .ci/run
 * installs it and runs them):
 * - unit: no database (pure rules, config, storage drivers, the CRM client against the in-process simulator);
 * - process: tests that spawn the real `bin/lms.js` (or build it) as a child process;
 * - integration: everything else under test/: HTTP-level tests on a test app and a database;
 * - e2e: test/e2e/: the web app in headless chromium against `lms start` (see test/e2e/global-setup.ts).
 * A new test file lands in integration unless it is listed below.
 */
const UNIT = [
  'src/**/*.test.ts',
  'test/platform/config.test.ts',
  'test/platform/conventions.test.ts',
  'test/platform/crm/client.test.ts',
  'test/platform/storage/*.test.ts',
  'test/platform/mail/*.test.ts',
  'test/platform/push/*.test.ts',
  'test/dev/crm-sim.test.ts',
  'test/dev/smtp-sink.test.ts',
  'test/platform/recorder/*.test.ts',
];
const E2E = ['test/e2e/**/*.test.ts'];
const PROCESS = [
  'test/platform/shutdown.test.ts',
  'test/platform/start-recording.test.ts',
  'test/platform/build.test.ts',
  'test/platform/vapid-cli.test.ts',
  'test/platform/worker-kill.test.ts',
  'test/platform/dev-clis.test.ts',
];

export default defineConfig({
  test: {
    // Low enough that a slow test shows up as a failure, with room for a loaded 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores here and in CI: two files at a time keeps PGlite start-up from starving tests.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, isolate: false } },
      {
        extends: true,
        // Migrates once per run; every test app starts from a copy of the migrated database.
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...PROCESS, ...E2E], globalSetup: ['test/global-setup.ts'], isolate: false },
      },
      // The child processes bring their own database; they take longer to start.
      { extends: true, test: { name: 'process', include: PROCESS, testTimeout: 60_000, hookTimeout: 180_000 } },
      // One service and one browser for the whole project; the journeys run in order.
      {
        extends: true,
        test: { name: 'e2e', include: E2E, globalSetup: ['test/e2e/global-setup.ts'], testTimeout: 90_000, hookTimeout: 180_000, fileParallelism: false },
      },
    ],
  },
});
