/**
 * Poll cost: state transitions per scan of the synthesized ScanDomain state machine, for scans that
 * last 1 min, 30 min and 6 h, with the adaptive waits against fixed 30 s polling (the same
 * definition configured with min = max = 30 s), measured in the same run.
 *
 * Time is simulated: every Wait is overridden to 0 ms and a virtual clock advances by the seconds
 * the wait asked for. The vendor is a virtual-time stand-in whose scan completes once the clock
 * passes the scan's duration; everything else (definition, handlers, S3 writes) is real.
 */
import { Readable } from 'node:stream';
import { StateMachine } from 'aws-local-stepfunctions';
import type { ScanStatus, VendorDownload } from '#lambdas/platform/vendor-api/types';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import type { ScanApi } from '#lambdas/scan/deps';
import { DEFAULT_POLL_SETTINGS, type PollSettings } from '#lambdas/scan/poll-schedule';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/index.ts';
import { scanDomainStateMachine } from '../local/definitions.ts';
import { startS3rver } from '../local/embedded-s3.ts';
import { bindScanHandlers, runScanExecution } from '../local/pipeline.ts';
import { cachedTemplate } from '../local/synth-cache.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * The fields Powertools Logger adds to every line in Lambda, with values as long as a deployed
 * function's: the lines the bench counts are as long as the ones CloudWatch Logs ingests.
 */
const POWERTOOLS_LINE_FIELDS = {
  timestamp: '2026-11-27T10:00:00.000Z',
  service: 'security-pipeline-scan',
  cold_start: false,
  function_arn:
    'arn:aws:lambda:us-east-1:123456789012:function:SecurityPipeline-ScanDomainPollScanStatusFun-AbCdEfGhIjKl',
  function_memory_size: '256',
  function_name: 'SecurityPipeline-ScanDomainPollScanStatusFun-AbCdEfGhIjKl',
  function_request_id: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  sampling_rate: 0,
  xray_trace_id: '1-6746f000-0123456789abcdef01234567',
};

class VirtualClock {
  private nowMs = Date.parse('2026-11-21T00:00:00Z');
  now = () => new Date(this.nowMs);
  advance(seconds: number) {
    this.nowMs += seconds * 1000;
  }
}

/** A vendor whose scan is running until `durationSeconds` of virtual time have passed. */
function virtualTimeVendor(
  clock: VirtualClock,
  durationSeconds: number,
): ScanApi & { detectedAt?: Date; startedAt?: Date } {
  const download = (body: string, contentType: string): VendorDownload => ({
    body: Readable.from([Buffer.from(body)]),
    contentType,
    contentLength: Buffer.byteLength(body),
    etag: undefined,
    contentEncoding: undefined,
    finalUrl: 'virtual://vendor',
    redirects: 0,
  });
  const vendor: ScanApi & { detectedAt?: Date; startedAt?: Date } = {
    async startScan() {
      vendor.startedAt = clock.now();
      return { uuid: '00000000-0000-4000-8000-000000000001', raw: {} };
    },
    async getStatus(): Promise<ScanStatus> {
      const elapsed = (clock.now().getTime() - (vendor.startedAt?.getTime() ?? 0)) / 1000;
      const done = elapsed >= durationSeconds;
      if (done && !vendor.detectedAt) vendor.detectedAt = clock.now();
      const raw = JSON.stringify({ status: done ? 'completed' : 'running' });
      return {
        state: done ? 'succeeded' : 'running',
        vendorStatus: done ? 'completed' : 'running',
        progress: undefined,
        raw,
        contentType: 'application/json',
      };
    },
    // Every output of the table (lambdas/scan/scan-outputs.ts) answers a small JSON body.
    getOutput: async (output) => download(`{"${output.name}":true}`, 'application/json'),
    deleteScan: async () => ({}),
    // Every start answers here, so nothing is ever settled from the listing.
    listScans: async () => ({ raw: { scans: [] } }),
  };
  return vendor;
}

export interface PollCostRow {
  readonly scanSeconds: number;
  readonly adaptiveTransitions: number;
  readonly fixedTransitions: number;
  readonly ratio: number;
  readonly adaptiveDetectionLagSeconds: number;
  readonly allowedLagSeconds: number;
  readonly adaptiveHistoryEvents: number;
}

export async function measurePollCost(
  durations: readonly number[] = [60, 1800, 6 * 3600],
): Promise<PollCostRow[]> {
  const definition = scanDomainStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  const s3 = await startS3rver({ buckets: ['bench-results'] });
  try {
    const run = async (scanSeconds: number, poll: PollSettings) => {
      const clock = new VirtualClock();
      const vendor = virtualTimeVendor(clock, scanSeconds);
      const handlers = bindScanHandlers(
        definition,
        { s3: s3.client, resultsBucket: 'bench-results', scanClient: vendor, poll, logger: silent },
        clock.now,
      );
      // The Wait state is overridden to 0 ms; the poll step is where the virtual time passes.
      const poll0 = handlers.PollScanStatus;
      if (!poll0) throw new Error('PollScanStatus is not bound');
      handlers.PollScanStatus = async (input) => {
        clock.advance((input as unknown as ScanInProgress).poll.nextWaitSeconds);
        return poll0(input);
      };
      let transitions = 0;
      const result = await runScanExecution(
        machine,
        definition,
        handlers,
        { domain: 'bench.example.com', executionName: `bench-${scanSeconds}`, runId: 'bench' },
        {
          waitOverrideMs: 0,
          onProgress: () => {},
        },
      );
      transitions = result.transitions;
      if (result.result.outcome?.state !== 'succeeded') {
        throw new Error(`bench scan of ${scanSeconds}s did not succeed: ${JSON.stringify(result.result)}`);
      }
      const lag =
        ((vendor.detectedAt?.getTime() ?? 0) - (vendor.startedAt?.getTime() ?? 0)) / 1000 - scanSeconds;
      return { transitions, historyEvents: result.historyEvents, lag };
    };
    const rows: PollCostRow[] = [];
    for (const scanSeconds of durations) {
      // Fixed 30 s polling cannot keep the production 24 h deadline under the history budget (the
      // settings guard refuses it), so the baseline gets scan length + 1 h: enough to finish, and
      // a deadline does not change the transitions of a scan that completes before it.
      const fixed = await run(scanSeconds, {
        minWaitSeconds: 30,
        maxWaitSeconds: 30,
        growthFactor: 1,
        deadlineSeconds: scanSeconds + 3600,
      });
      const adaptive = await run(scanSeconds, DEFAULT_POLL_SETTINGS);
      rows.push({
        scanSeconds,
        adaptiveTransitions: adaptive.transitions,
        fixedTransitions: fixed.transitions,
        ratio: adaptive.transitions / fixed.transitions,
        adaptiveDetectionLagSeconds: adaptive.lag,
        allowedLagSeconds: Math.max(60, scanSeconds * 0.1),
        adaptiveHistoryEvents: adaptive.historyEvents,
      });
    }
    return rows;
  } finally {
    await s3.close();
  }
}

/** What one scan of `scanSeconds` did: Lambda invocations and their local durations, S3 requests. */
export interface ScanWork {
  readonly transitions: number;
  /** Execution history events: one CloudWatch Logs line each at the state machines' level ALL. */
  readonly historyEvents: number;
  /** Bytes of the structured log lines the handlers wrote (JSON, one line each), measured. */
  readonly handlerLogBytes: number;
  /** Per Task state: invocations and the summed local wall time (ms) of its handler. */
  readonly tasks: Readonly<Record<string, { invocations: number; totalMs: number }>>;
  /** S3 requests by command name. */
  readonly s3Requests: Readonly<Record<string, number>>;
}

/** Runs one scan of `scanSeconds` (virtual time, default polling) and records its work. */
export async function measureScanWork(scanSeconds: number): Promise<ScanWork> {
  const definition = scanDomainStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  const s3 = await startS3rver({ buckets: ['bench-results'] });
  const s3Requests: Record<string, number> = {};
  s3.client.middlewareStack.add(
    (next, context) => (args) => {
      s3Requests[context.commandName ?? 'unknown'] = (s3Requests[context.commandName ?? 'unknown'] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countS3Requests' },
  );
  try {
    const clock = new VirtualClock();
    const vendor = virtualTimeVendor(clock, scanSeconds);
    // Each handler log line as Powertools writes it (one JSON object per line), counted in bytes.
    let handlerLogBytes = 0;
    const counting = Object.fromEntries(
      (['debug', 'info', 'warn', 'error'] as const).map((level) => [
        level,
        (message: string, extra?: Record<string, unknown>) => {
          handlerLogBytes += Buffer.byteLength(
            `${JSON.stringify({ level: level.toUpperCase(), message, ...extra, ...POWERTOOLS_LINE_FIELDS })}\n`,
          );
        },
      ]),
    ) as unknown as typeof silent;
    const bound = bindScanHandlers(
      definition,
      {
        s3: s3.client,
        resultsBucket: 'bench-results',
        scanClient: vendor,
        poll: DEFAULT_POLL_SETTINGS,
        logger: counting,
      },
      clock.now,
    );
    const tasks: Record<string, { invocations: number; totalMs: number }> = {};
    const handlers: typeof bound = {};
    for (const [state, handler] of Object.entries(bound)) {
      handlers[state] = async (input) => {
        if (state === 'PollScanStatus')
          clock.advance((input as unknown as ScanInProgress).poll.nextWaitSeconds);
        const started = performance.now();
        try {
          return await handler(input);
        } finally {
          const entry = tasks[state] ?? { invocations: 0, totalMs: 0 };
          entry.invocations += 1;
          entry.totalMs += performance.now() - started;
          tasks[state] = entry;
        }
      };
    }
    const result = await runScanExecution(
      machine,
      definition,
      handlers,
      { domain: 'bench.example.com', executionName: `cost-${scanSeconds}`, runId: 'cost' },
      { waitOverrideMs: 0, onProgress: () => {} },
    );
    if (result.result.outcome?.state !== 'succeeded')
      throw new Error(`cost scan of ${scanSeconds}s did not succeed`);
    return {
      transitions: result.transitions,
      historyEvents: result.historyEvents,
      handlerLogBytes,
      tasks,
      s3Requests,
    };
  } finally {
    await s3.close();
  }
}
