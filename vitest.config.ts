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
    // The run's folder for cloud assemblies, removed at the end (test/global-setup.ts).
    globalSetup: ['test/global-setup.ts'],
    // Files share one module graph per worker (below), so what a test patches for the whole process
    // goes back after it: spies, process.env stubs, stubbed globals. aws-sdk-client-mock's patched
    // classes, fake timers and module mocks are covered by test/architecture/shared-workers.test.ts.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    // Vitest's default here is availableParallelism - 1 = 1 worker. Measured on the shared 2-core
    // machine (load average 16-24 from other users, so wall times are noisy; CPU is user + sys):
    //  - test/vendor (loopback I/O, 14 files): 1 worker 384 s wall, 2 workers 177 s, same 24 s CPU;
    //  - test/cdk (CPU-bound synthesis, 27 files, 405 tests): 1 worker 343 s wall / 68 s CPU,
    //    2 workers 356 s / 97 s, 3 workers 485 s / 130 s with a starved test past its timeout.
    // So 2: the I/O-bound files halve, the CPU-bound ones barely lose, and 3 starves the CDK files.
    // On a quiet machine (load average about 1), the whole suite with the non-isolated projects
    // below: 2 workers 217 s, 3 workers 197 s (1.7 cores busy either way), not worth the starvation.
    // One count for both projects: projects with different counts cannot share a group and would
    // run one after the other.
    maxWorkers: 2,
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
