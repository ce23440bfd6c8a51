/**
 * Poll cost: state transitions per scan of the synthesized ScanDomain state machine, for scans that
 * last 1 min, 30 min and 6 h, with the adaptive waits against fixed 30 s polling (the same
 * definition configured with min = max = 30 s), measured in the same run, at one end time per
 * duration: the scale bench reads its history events. `npm run bench -- poll` sweeps end times
 * instead (bench/poll-sweep.ts, which shares the virtual clock and vendor below).
 *
 * Time is simulated: every Wait is overridden to 0 ms and a virtual clock advances by the seconds
 * the wait asked for. The vendor is a virtual-time stand-in whose scan completes once the clock
 * passes the scan's duration; everything else (definition, handlers, S3 writes) is real.
 */
import { Readable } from 'node:stream';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { StateMachine } from 'aws-local-stepfunctions';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import type { ScanApi } from '#lambdas/scan/deps';
import { EARLY_END_SCHEDULE, nextCheckAge } from '#lambdas/scan/early-end-watch';
import { learnedDurationsKey } from '#lambdas/scan/learned-durations';
import { DEFAULT_POLL_SETTINGS, type PollSettings } from '#lambdas/scan/poll-schedule';
import { parseWaitingKey } from '#lambdas/scan/waiting-records';
import type { ScanStatus } from '#lambdas/vendor-api/scan/types';
import type { VendorDownload } from '#lambdas/vendor-api/transport/types';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import { WAIT_STATE } from '../local/runner/early-end-watch.ts';
import { bindScanHandlers, runScanExecution } from '../local/runner/pipeline.ts';
import { startS3rver } from '../local/services/s3/embedded-s3.ts';
import { type AslDefinition, scanDomainStateMachine } from '../local/synth/definitions.ts';
import { cachedTemplate } from '../local/synth/synth-cache.ts';

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

export class VirtualClock {
  private nowMs = Date.parse('2026-11-21T00:00:00Z');
  now = () => new Date(this.nowMs);
  advance(seconds: number) {
    this.nowMs += seconds * 1000;
  }
}

/** A vendor whose scan is running until `durationSeconds` of virtual time have passed. */
export function virtualTimeVendor(
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

/** Where {@link virtualScan} runs: the synthesized definition, its engine and a results bucket. */
export interface VirtualScanSetup {
  readonly definition: AslDefinition;
  readonly machine: StateMachine;
  readonly s3: S3Client;
  readonly bucket: string;
}

export interface VirtualScanResult {
  readonly transitions: number;
  readonly historyEvents: number;
  /** From the vendor finishing to the poll that saw it, in seconds. */
  readonly lagSeconds: number;
  /** The scan's age at every poll, in seconds. */
  readonly pollAges: readonly number[];
  /** The early-end watcher's vendor status checks of this scan (0 without the watcher). */
  readonly watcherChecks: number;
  /** The scan's age at each of those checks. */
  readonly watcherCheckAges: readonly number[];
  /** Whether the watcher's release ended a wait (the scan was noticed by its check). */
  readonly released: boolean;
}

/**
 * The early-end watcher as deployed, in virtual time: passes every 30 s of the scan's age from
 * `phaseSeconds` (its start falls anywhere in a minute's two passes), each deciding with
 * earlyEndCheckDue (nextCheckAge), and a release reaching the execution `releaseSeconds` after the
 * check that saw the end (SendTaskSuccess, the next state).
 */
export interface WatcherModel {
  readonly phaseSeconds: number;
  readonly releaseSeconds: number;
}

/** Where the model's phase starts for an end time: spread over the pass interval, repeatable. */
export function watcherAt(endSeconds: number): WatcherModel {
  return { phaseSeconds: (endSeconds * 7) % EARLY_END_SCHEDULE.passIntervalSeconds, releaseSeconds: 1 };
}

/**
 * Earlier scans a learned scan was planned from, as fractions of its duration: a vendor's
 * durations vary, so the learned window is a spread, not the exact answer.
 */
/** The domain every virtual scan scans, and where its learned durations are stored. */
export const BENCH_DOMAIN = 'bench.example.com';
export const BENCH_LEARNED_KEY = learnedDurationsKey(BENCH_DOMAIN);

export const LEARNED_HISTORY = [0.9, 1.1, 1.0, 0.95] as const;

/** Teaches `setup`'s learned durations four earlier scans of about `durationSeconds` (LEARNED_HISTORY). */
export async function teachDurations(setup: VirtualScanSetup, durationSeconds: number): Promise<void> {
  for (const fraction of LEARNED_HISTORY) {
    await virtualScan(setup, Math.round(durationSeconds * fraction), DEFAULT_POLL_SETTINGS);
  }
}

/**
 * One scan of `bench.example.com` that the vendor finishes after `scanSeconds` of virtual time,
 * through the real definition, handlers and S3 (so StartScan plans from, and WriteManifest
 * teaches, the learned durations in `bucket`).
 */
export async function virtualScan(
  setup: VirtualScanSetup,
  scanSeconds: number,
  poll: PollSettings,
  watcher?: WatcherModel,
): Promise<VirtualScanResult> {
  const clock = new VirtualClock();
  const vendor = virtualTimeVendor(clock, scanSeconds);
  const handlers = bindScanHandlers(
    setup.definition,
    // WaitForScan's heartbeat timeout at 0 ms, like the run's other waits (the clock moves below).
    {
      s3: setup.s3,
      resultsBucket: setup.bucket,
      scanClient: vendor,
      poll,
      logger: silent,
      waitOverrideMs: 0,
    },
    clock.now,
  );
  const pollStatus = handlers.PollScanStatus;
  const waitForScan = handlers.WaitForScan;
  if (!pollStatus || !waitForScan) throw new Error('PollScanStatus or WaitForScan is not bound');
  const age = () => (clock.now().getTime() - (vendor.startedAt?.getTime() ?? 0)) / 1000;
  // The watcher's checks, by the scan's age: the first one that sees the end releases the wait.
  const checks: number[] = [];
  let released = false;
  const releaseWithin = (from: number, to: number): number | undefined => {
    if (!watcher) return undefined;
    for (;;) {
      const next = nextCheckAge(checks.at(-1), watcher.phaseSeconds, EARLY_END_SCHEDULE);
      if (next > to) return undefined;
      checks.push(next);
      if (next >= scanSeconds && next > from) return next;
    }
  };
  // WaitForScan's heartbeat timeout is 0 ms here: the virtual time passes in the poll step, to the
  // watcher's release when it comes first, or by the planned wait.
  handlers.WaitForScan = async (input) => {
    const planned = (input as { Key?: string }).Key;
    const record = planned === undefined ? undefined : parseWaitingKey(planned);
    const waitSeconds = record?.kind === 'wait' ? record.waitSeconds : 0;
    const check = releaseWithin(age(), age() + waitSeconds);
    if (check === undefined) return waitForScan(input);
    released = true;
    return { ageSeconds: check + (watcher?.releaseSeconds ?? 0) };
  };
  const pollAges: number[] = [];
  handlers.PollScanStatus = async (input) => {
    const state = input as unknown as ScanInProgress & { release?: { ageSeconds: number } };
    if (state.release) clock.advance(state.release.ageSeconds - age());
    else clock.advance(state.poll.nextWaitSeconds);
    pollAges.push(age());
    return pollStatus(input);
  };
  const { result, transitions, historyEvents } = await runScanExecution(
    setup.machine,
    setup.definition,
    handlers,
    { domain: BENCH_DOMAIN, executionName: `bench-${scanSeconds}`, runId: 'bench' },
    { waitOverrideMs: 0, onProgress: () => {} },
  );
  if (result.outcome?.state !== 'succeeded') {
    throw new Error(`bench scan of ${scanSeconds}s did not succeed: ${JSON.stringify(result)}`);
  }
  const noticed = ((vendor.detectedAt?.getTime() ?? 0) - (vendor.startedAt?.getTime() ?? 0)) / 1000;
  // Checks after the scan was noticed never happen: its records are gone.
  const watcherCheckAges = checks.filter((check) => check < noticed);
  return {
    transitions,
    historyEvents,
    lagSeconds: noticed - scanSeconds,
    pollAges,
    watcherChecks: watcherCheckAges.length,
    watcherCheckAges,
    released,
  };
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
    // Each run starts from nothing learned, so the adaptive scan is not planned from the fixed one.
    const run = async (scanSeconds: number, poll: PollSettings) => {
      await s3.client.send(new DeleteObjectCommand({ Bucket: 'bench-results', Key: BENCH_LEARNED_KEY }));
      return virtualScan({ definition, machine, s3: s3.client, bucket: 'bench-results' }, scanSeconds, poll);
    };
    const rows: PollCostRow[] = [];
    for (const scanSeconds of durations) {
      // Fixed 30 s polling cannot keep the production 24 h deadline under the history budget (the
      // settings guard refuses it), so the baseline gets scan length + 10 min: enough to finish, and
      // a deadline does not change the transitions of a scan that completes before it.
      const fixed = await run(scanSeconds, {
        minWaitSeconds: 30,
        maxWaitSeconds: 30,
        growthFactor: 1,
        deadlineSeconds: scanSeconds + 600,
      });
      const adaptive = await run(scanSeconds, DEFAULT_POLL_SETTINGS);
      rows.push({
        scanSeconds,
        adaptiveTransitions: adaptive.transitions,
        fixedTransitions: fixed.transitions,
        ratio: adaptive.transitions / fixed.transitions,
        adaptiveDetectionLagSeconds: adaptive.lagSeconds,
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
  /** Virtual seconds from StartScan to the poll that saw the scan finished. */
  readonly noticedAtSeconds: number;
  /** Execution history events: one CloudWatch Logs line each at the state machines' level ALL. */
  readonly historyEvents: number;
  /** Bytes of the structured log lines the handlers wrote (JSON, one line each), measured. */
  readonly handlerLogBytes: number;
  /** Per Task state: invocations and the summed local wall time (ms) of its handler. */
  readonly tasks: Readonly<Record<string, { invocations: number; totalMs: number }>>;
  /** S3 requests by command name. */
  readonly s3Requests: Readonly<Record<string, number>>;
}

/**
 * Runs one scan of `scanSeconds` (virtual time, default polling) and records its work. It is
 * planned from four earlier scans of the domain within ±10 % of its duration (not recorded), as
 * the scans of a scheduled list are once they run again. A domain's first scan costs what the poll
 * bench prints as unlearned.
 */
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
    await teachDurations({ definition, machine, s3: s3.client, bucket: 'bench-results' }, scanSeconds);
    for (const command of Object.keys(s3Requests)) delete s3Requests[command];
    const clock = new VirtualClock();
    const startedAtMs = clock.now().getTime();
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
        waitOverrideMs: 0,
      },
      clock.now,
    );
    const tasks: Record<string, { invocations: number; totalMs: number }> = {};
    const handlers: typeof bound = {};
    for (const [state, handler] of Object.entries(bound)) {
      // WaitForScan is Step Functions' own S3 call, no Lambda: its request is in s3Requests.
      if (state === WAIT_STATE) {
        handlers[state] = handler;
        continue;
      }
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
      { domain: BENCH_DOMAIN, executionName: `cost-${scanSeconds}`, runId: 'cost' },
      { waitOverrideMs: 0, onProgress: () => {} },
    );
    if (result.result.outcome?.state !== 'succeeded')
      throw new Error(`cost scan of ${scanSeconds}s did not succeed`);
    return {
      transitions: result.transitions,
      noticedAtSeconds: (clock.now().getTime() - startedAtMs) / 1000,
      historyEvents: result.historyEvents,
      handlerLogBytes,
      tasks,
      s3Requests,
    };
  } finally {
    await s3.close();
  }
}
