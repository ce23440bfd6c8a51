/**
 * The pipeline's metrics, recorded by the real handlers while the synthesized ScanDomain definition
 * runs against the simulator and s3rver: what an operator's dashboard and alarms will read. Also the
 * Powertools side: the embedded-metric-format lines a Lambda writes, with only closed dimensions.
 */
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetricsRecorder, METRIC, type RecordedMetric } from '#lambdas/platform/metrics';
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
import { executeScan, executionEnd, synthesizedScanMachine, vendorClientsFor } from './harness.ts';

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
const total = (name: string) => named(name).reduce((sum, metric) => sum + metric.value, 0);

/** No dimension value may be a domain, a scan id, an email or anything else open-ended. */
function expectClosedDimensions(metrics: readonly RecordedMetric[]): void {
  const allowed: Record<string, RegExp> = {
    workflow: /^(scan|list|breach|rotation)$/,
    operation: /^(scan|keys|breach)\.[a-zA-Z]+$/,
    outcome: /^[A-Za-z_]+$/,
    output: /^(report|logs|debug)$/,
  };
  for (const metric of metrics) {
    for (const [key, value] of Object.entries(metric.dimensions)) {
      expect(allowed[key], `dimension ${key}`).toBeDefined();
      expect(String(value)).toMatch(allowed[key] as RegExp);
      expect(String(value)).not.toContain('example.com');
    }
  }
}

describe('scan metrics', () => {
  it('counts a started and succeeded scan, its duration, and the bytes of each stored output', async () => {
    // Act
    const result = await run('metrics.example.com');

    // Assess
    expect(executionEnd(result.events).status).toBe('succeeded');
    expect(total(SCAN_METRIC.scansStarted)).toBe(1);
    expect(total(SCAN_METRIC.scansSucceeded)).toBe(1);
    expect(total(SCAN_METRIC.scansFailed) + total(SCAN_METRIC.scansTimedOut)).toBe(0);
    const [duration] = named(SCAN_METRIC.scanDuration);
    expect(duration).toMatchObject({
      unit: 'Seconds',
      dimensions: { workflow: 'scan', outcome: 'succeeded' },
    });
    const bytes = named(METRIC.bytesStored);
    expect(bytes.map((metric) => metric.dimensions.output).sort()).toEqual(['debug', 'logs', 'report']);
    for (const metric of bytes) expect(metric.value).toBeGreaterThan(0);
    expectClosedDimensions(recorder.recorded);
  });

  it('counts a scan the vendor fails as failed, named by its failure', async () => {
    // Act
    await run('broken.example.com');

    // Assess
    expect(total(SCAN_METRIC.scansStarted)).toBe(1);
    expect(named(SCAN_METRIC.scansFailed)).toEqual([
      expect.objectContaining({ value: 1, dimensions: { workflow: 'scan', outcome: 'ScanFailed' } }),
    ]);
    expect(total(SCAN_METRIC.scansSucceeded)).toBe(0);
    expectClosedDimensions(recorder.recorded);
  });

  it('counts a scan past its deadline as timed out, not failed', async () => {
    // Prepare: the vendor never finishes within a 2-second deadline
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });

    // Act
    await run('slow.example.com', { ...POLL, deadlineSeconds: 2 });

    // Assess
    expect(total(SCAN_METRIC.scansTimedOut)).toBe(1);
    expect(total(SCAN_METRIC.scansFailed)).toBe(0);
    expect(named(SCAN_METRIC.scanDuration)[0]?.dimensions.outcome).toBe('timed_out');
  });

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
