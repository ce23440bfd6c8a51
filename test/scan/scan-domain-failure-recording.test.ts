/**
 * The end of the synthesized ScanDomain failure path when RecordFailure itself cannot run: the
 * execution must still end in the Fail state with the scan's own failure label, not as the
 * recorder's raw task error (which the list run could not classify).
 */
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { VendorClients } from '#lambdas/platform/vendor-api/index';
import type { AslDefinition } from '../../local/definitions.ts';
import { type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import {
  executeScan,
  executionEnd,
  type Handler,
  type LocalRun,
  retriedStates,
  synthesizedScanMachine,
  vendorClientsFor,
} from '../local/harness.ts';

const RESULTS = 'unrecorded-results';

let definition: AslDefinition;
let machine: StateMachine;
let s3: S3rverFixture;
let sim: VendorSimulator;
let clients: VendorClients;

beforeAll(async () => {
  ({ definition, machine } = await synthesizedScanMachine());
  s3 = await startS3rver({ buckets: [RESULTS] });
}, 180_000);

beforeEach(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 1, failingDomains: ['broken.example.com'] });
  clients = vendorClientsFor(sim);
});

afterEach(async () => {
  await clients.close();
  await sim.close();
});

afterAll(async () => {
  await s3.close();
});

/** A recorder that always throws `errorName`, counting its calls. */
function brokenRecorder(errorName: string): { handler: Handler; calls: () => number } {
  let calls = 0;
  return {
    handler: async () => {
      calls += 1;
      const error = new Error(`${errorName} (injected by the test)`);
      error.name = errorName;
      throw error;
    },
    calls: () => calls,
  };
}

function execute(domain: string, recorder: Handler): Promise<LocalRun> {
  return executeScan(
    {
      definition,
      machine,
      s3: s3.client,
      resultsBucket: RESULTS,
      scanClient: clients.scan,
      poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 },
      logger: createMemoryLogger(),
      clock: () => new Date('2026-11-20T10:00:00.000Z'),
      wrap: (bound) => ({ ...bound, RecordFailure: recorder }),
    },
    domain,
  );
}

describe('RecordFailure failing itself', () => {
  it('still ends in Failed with the scan failure label, saying it was not recorded and why', async () => {
    const recorder = brokenRecorder('TypeError');

    const run = await execute('broken.example.com', recorder.handler);

    const end = executionEnd(run.events);
    expect(end).toMatchObject({ status: 'failed', error: 'ScanFailed' });
    expect(end.cause).toContain('not recorded: RecordFailure failed with TypeError');
    expect(run.path.slice(-4)).toEqual(['MarkScanFailed', 'RecordFailure', 'FailureNotRecorded', 'Failed']);
    expect(recorder.calls()).toBe(1);
  });

  it('retries a Lambda service error first, then keeps the label once the retries are spent', async () => {
    const recorder = brokenRecorder('Lambda.ServiceException');

    const run = await execute('broken.example.com', recorder.handler);

    expect(executionEnd(run.events)).toMatchObject({ status: 'failed', error: 'ScanFailed' });
    expect(retriedStates(run.events)).toContain('RecordFailure');
    expect(recorder.calls()).toBeGreaterThan(1);
    expect(run.path.at(-1)).toBe('Failed');
  });
});
