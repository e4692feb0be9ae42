import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'plugins/**/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'dist/**'],
    setupFiles: ['reflect-metadata'],
    // Suites start real servers and spawn processes: give them room on a 2-core machine.
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
