/**
 * The pipeline's metrics, recorded by the real handlers while the synthesized ScanDomain definition
 * runs against the simulator and s3rver: what an operator's dashboard and alarms will read. The
 * counts of each way a scan ends are checked on that outcome's one run
 * (test/scan/scan-domain-outcomes.test.ts); here, the vendor retries. Also the Powertools side: the
 * embedded-metric-format lines a Lambda writes, with only closed dimensions.
 */
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetricsRecorder, METRIC } from '#lambdas/platform/metrics';
import {
  createLazyHandler,
  createObservability,
  powertoolsMetrics,
  vendorMetricsObserver,
} from '#lambdas/platform/runtime/observability';
import { SCAN_METRIC } from '#lambdas/registry';
import type { PollSettings } from '#lambdas/scan/poll-schedule';
import type { VendorClients } from '#lambdas/vendor-api/clients';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import type { AslDefinition } from '../../local/synth/definitions.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { executeScan, expectClosedDimensions, synthesizedScanMachine, vendorClientsFor } from './harness.ts';

const RESULTS = 'metrics-results';
const POLL: PollSettings = { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 60 };

let definition: AslDefinition;
let machine: StateMachine;
let s3: S3rverFixture;
let sim: VendorSimulator;
let clients: VendorClients;
let recorder: ReturnType<typeof createMetricsRecorder>;

beforeAll(async () => {
  ({ definition, machine } = await synthesizedScanMachine());
  s3 = await startS3rver({ buckets: [RESULTS] });
});

beforeEach(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 2, failingDomains: ['broken.example.com'] });
  recorder = createMetricsRecorder();
  clients = vendorClientsFor(sim, { maxAttempts: 3, observer: vendorMetricsObserver(recorder) });
});

afterEach(async () => {
  await clients.close();
  await sim.close();
});

afterAll(async () => {
  await s3.close();
});

function run(domain: string, poll: PollSettings = POLL) {
  return executeScan(
    {
      definition,
      machine,
      s3: s3.client,
      resultsBucket: RESULTS,
      scanClient: clients.scan,
      poll,
      logger: createMemoryLogger(),
      clock: () => new Date(),
      metrics: recorder,
    },
    domain,
  );
}

const named = (name: string) => recorder.recorded.filter((metric) => metric.name === name);

describe('scan metrics', () => {
  it('counts vendor retries by operation and outcome, and the final failure when retries run out', async () => {
    // Prepare: two 503s on /status are retried inside the call; five 429s on /report outlast it
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: 2,
      fault: { type: 'status', status: 503 },
    });
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 3,
      fault: { type: 'status', status: 429 },
    });

    // Act
    await run('retried.example.com');

    // Assess
    const retries = named(METRIC.vendorRetries);
    expect(retries.filter((m) => m.dimensions.operation === 'scan.getStatus')).toEqual([
      expect.objectContaining({ dimensions: { operation: 'scan.getStatus', outcome: 'unavailable' } }),
      expect.objectContaining({ dimensions: { operation: 'scan.getStatus', outcome: 'unavailable' } }),
    ]);
    expect(retries.filter((m) => m.dimensions.operation === 'scan.getReport').length).toBe(2);
    expect(named(METRIC.vendorErrors)).toEqual([
      expect.objectContaining({ dimensions: { operation: 'scan.getReport', outcome: 'throttled' } }),
    ]);
    expectClosedDimensions(recorder.recorded);
  });
});

describe('the Lambda entry point', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('flushes what an invocation recorded as embedded-metric-format lines, with closed dimensions only', async () => {
    // Prepare: capture what Powertools writes to stdout
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const tools = createObservability({
      POWERTOOLS_SERVICE_NAME: 'metrics-test',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    const lambda = createLazyHandler({
      observability: () => tools,
      deps: (t) => powertoolsMetrics(t.metrics),
      handler: (metrics) => async (event: { bytes: number }) => {
        metrics.record(METRIC.bytesStored, event.bytes, 'Bytes', { workflow: 'scan', output: 'report' });
        metrics.record(SCAN_METRIC.scansSucceeded, 1, 'Count', { workflow: 'scan' });
        return 'done';
      },
    });

    // Act
    await lambda({ bytes: 4096 });
    vi.restoreAllMocks();

    // Assess
    const emf = lines
      .flatMap((line) => line.split('\n'))
      .filter((line) => line.includes('"_aws"'))
      .map(
        (line) =>
          JSON.parse(line) as Record<string, unknown> & {
            _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
          },
      );
    const stored = emf.find((entry) => entry[METRIC.bytesStored] !== undefined);
    expect(stored).toMatchObject({
      BytesStored: 4096,
      workflow: 'scan',
      output: 'report',
      service: 'metrics-test',
    });
    expect(stored?._aws.CloudWatchMetrics[0]?.Namespace).toBe('SecurityPipeline');
    expect(stored?._aws.CloudWatchMetrics[0]?.Dimensions[0]?.sort()).toEqual([
      'output',
      'service',
      'workflow',
    ]);
    expect(emf.some((entry) => entry[SCAN_METRIC.scansSucceeded] === 1)).toBe(true);
  });
});
