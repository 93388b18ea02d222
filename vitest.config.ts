import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two cores here and in CI: two files at a time keeps PGlite start-up from starving tests.
    maxWorkers: 2,
  },
});
