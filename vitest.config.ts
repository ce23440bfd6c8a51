import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Loopback servers (simulator, s3rver) and local state-machine runs need more than the 5 s default.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Memory-bound tests collect garbage before sampling, so they measure what is held, not when
    // V8 last ran a scavenge (which depends on the load on a shared machine).
    execArgv: ['--expose-gc'],
    setupFiles: ['test/setup.ts'],
  },
});
