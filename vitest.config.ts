import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Most suites wait on servers, child processes and databases rather than compute: on a 2-core machine vitest's
// default (one worker per core less one) ran the files one at a time with a core idle. Three at once there
// (docs/operations.md, "Tests and CI"); VITEST_WORKERS overrides.
const workers = Number(process.env.VITEST_WORKERS ?? Math.min(6, availableParallelism() + 1));

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', 'data/**'],
    pool: 'forks',
    maxWorkers: workers,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
