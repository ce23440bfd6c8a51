import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that synthesize the whole CDK stack through test/kit/synth.ts; they share one module graph
 * per worker (see below).
 */
const SYNTH_TESTS = ['test/**/*.cdk.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    // Loopback servers (simulator, s3rver) and local state-machine runs need more than the 5 s default.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Memory-bound tests collect garbage before sampling, so they measure what is held, not when
    // V8 last ran a scavenge (which depends on the load on a shared machine).
    execArgv: ['--expose-gc'],
    setupFiles: ['test/setup.ts'],
    // As under `npm start` (local/cli/main.ts): the X-Ray SDK that every handler's Tracer imports
    // otherwise follows every promise of the worker through an async hook, though the Tracer is off
    // outside Lambda. Measured on test/scan and test/breach: 7 % of their CPU.
    env: { AWS_XRAY_MANUAL_MODE: 'true' },
    // The run's folder for cloud assemblies, removed at the end (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Files share one module graph per worker (below), so what a test patches for the whole process
    // goes back after it: spies, process.env stubs, stubbed globals. aws-sdk-client-mock's patched
    // classes, fake timers and module mocks are covered by test/architecture/shared-workers.test.ts.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    // Workers per project (vitest's default would be availableParallelism - 1 = 1). The CDK files
    // run first, on 2 workers: synthesis is CPU-bound and each worker synthesizes every
    // configuration its files ask for, so a third worker only adds syntheses (the cdk project alone,
    // 2 workers: 30 s wall, 58 s of CPU, 2 s of it idle). The other files run after them on 3
    // workers: the CLI, rotation and docs files wait on real time (child processes, a slow vendor,
    // a propagation window, retry backoff), and on 2 workers those waits left a core idle for about
    // 110 of a run's 477 core-seconds. Measured on a quiet 2-core machine, whole suite, fresh clone
    // (2026-11-28): 2 and 2 workers 225 s wall; 3 and 3, 203 s (the CDK files' CPU 40 s to 63 s);
    // 2 then 3, 180 s with 335 s of CPU; 2 then 4, 180 s with 345 s. Projects with different worker
    // counts must run in different groups (`sequence.groupOrder`).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'cdk',
          include: SYNTH_TESTS,
          // Each file used to import aws-cdk-lib afresh and synthesize the same stack again. Without
          // per-file isolation a worker loads aws-cdk-lib once and test/kit/synth.ts's `synth`
          // memo serves one synthesis per configuration to every file. None of these files mocks
          // modules or changes process.env, and the shared synthesis is frozen and locked.
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
          // A worker's first synthesis runs cold (aws-cdk-lib's lazy modules, no JIT yet): under the
          // shared machine's load (load average 15-20 on 2 cores) a beforeAll that synthesizes took
          // over the 60 s default.
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit',
          sequence: { groupOrder: 1 },
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SYNTH_TESTS],
          // Importing the SDK clients, the local runner and aws-local-stepfunctions afresh for every
          // file was a third of the suite's time (vitest's "import": 154 s of 351 s on 2 workers).
          // What a file patches for the whole process it puts back (see restoreMocks above).
          isolate: false,
        },
      },
    ],
  },
});
