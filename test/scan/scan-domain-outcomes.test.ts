/**
 * The synthesized ScanDomain definition (exactly what `cdk synth` produces), executed by
 * aws-local-stepfunctions with every Task bound to its real handler, against the vendor simulator and
 * s3rver on loopback (setup: scan-execution-fixture.ts). Here: the definition
 * itself and the ways a scan ends (success, vendor failure, timeout), each run once, with what it
 * stores and the metrics the handlers record for it. Waits and retry intervals are overridden to
 * 0 ms; the poll step still counts the seconds each wait asked for.
 */
import { describe, expect, it } from 'vitest';
import { createMetricsRecorder, METRIC } from '#lambdas/platform/metrics';
import { SCAN_METRIC } from '#lambdas/registry';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import {
  DEFAULT_POLL_SETTINGS,
  estimateHistoryEvents,
  HISTORY_EVENTS_OUTSIDE_LOOP,
  HISTORY_EVENTS_PER_POLL_ITERATION,
  MAX_DENSE_POLLS,
  type PollSettings,
  STEP_FUNCTIONS_HISTORY_EVENT_LIMIT,
  worstCaseLoopIterations,
} from '#lambdas/scan/poll-schedule';
import type { ScanManifest } from '#lambdas/scan/write-scan-manifest';
import type { AslDefinition, AslState } from '../../local/synth/definitions.ts';
import { sha256Hex } from '../kit/digest.ts';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { enteredStates, executionEnd, expectClosedDimensions, retriedStates } from '../local/harness.ts';
import {
  definition,
  execute,
  failedOutcome,
  logger,
  loop,
  RESULTS,
  s3,
  sim,
  useScanExecution,
} from './scan-execution-fixture.ts';

useScanExecution();

/** The metrics the handlers record during one run, summed by name. */
function metricsOf(recorder: ReturnType<typeof createMetricsRecorder>) {
  const named = (name: string) => recorder.recorded.filter((metric) => metric.name === name);
  const total = (name: string) => named(name).reduce((sum, metric) => sum + metric.value, 0);
  return { named, total };
}

describe('the synthesized ScanDomain definition', () => {
  const state = (name: string): AslState => {
    const found = definition.States[name];
    if (!found) throw new Error(`no state ${name}`);
    return found;
  };
  const retryErrors = (s: AslState): string[] =>
    ((s.Retry as { ErrorEquals: string[] }[] | undefined) ?? []).flatMap((r) => r.ErrorEquals);
  const catchTarget = (s: AslState): unknown => s.Catch;
  const branchState = (name: string): AslState => {
    const branches = state('FetchOutputs').Branches as AslDefinition[];
    const found = branches.map((b) => b.States[name]).find(Boolean);
    if (!found) throw new Error(`no branch state ${name}`);
    return found;
  };

  it('retries StartScan only on errors that prove the scan was not started', () => {
    // Assess: the rules the branches below rely on, as the CDK synthesizes them
    // A 401 proves it too (the vendor refused the request): retried across a key rotation. A 429
    // is not retried here: StartScan answers it with the wait WaitForStartSlot makes.
    expect(retryErrors(state('StartScan')).sort()).toEqual([
      'Lambda.TooManyRequestsException',
      'VendorAuthError',
    ]);
  });

  it('retries the idempotent tasks on Lambda service errors and transient vendor errors', () => {
    // Assess: the rules the branches below rely on, as the CDK synthesizes them
    const transient = [
      'Lambda.ServiceException',
      'Lambda.TooManyRequestsException',
      'VendorThrottledError',
      'VendorUnavailableError',
      'VendorTimeoutError',
      'VendorNetworkError',
    ];
    for (const name of ['PollScanStatus', 'WriteManifest', 'RecordFailure']) {
      expect(retryErrors(state(name)), name).toEqual(expect.arrayContaining(transient));
    }
    for (const name of ['FetchReport', 'FetchLogs', 'FetchDebug']) {
      expect(retryErrors(branchState(name)), name).toEqual(expect.arrayContaining(transient));
    }
    for (const name of ['StartScan', 'PollScanStatus', 'WriteManifest', 'RecordFailure']) {
      expect(retryErrors(state(name)), name).not.toContain('VendorHttpError');
      expect(retryErrors(state(name)), name).not.toContain('InvalidInputError');
      expect(retryErrors(state(name)), name).not.toContain('States.ALL');
    }
  });

  it('catches every error of each step into its own failure label, recorded before the Fail state', () => {
    // Assess: the rules the branches below rely on, as the CDK synthesizes them
    const labels: Record<string, string> = {
      StartScan: 'MarkScanRejected',
      PollScanStatus: 'MarkPollFailed',
      FetchOutputs: 'MarkOutputFetchFailed',
      WriteManifest: 'MarkManifestFailed',
    };
    for (const [name, mark] of Object.entries(labels)) {
      expect(catchTarget(state(name)), name).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: mark },
      ]);
      expect(state(mark)).toMatchObject({
        Type: 'Pass',
        Result: { error: mark.replace(/^Mark/, '') },
        ResultPath: '$.failure',
        Next: 'RecordFailure',
      });
    }
    expect(state('RecordFailure').Next).toBe('Failed');
    expect(state('Failed')).toMatchObject({
      Type: 'Fail',
      ErrorPath: '$.failure.error',
      CausePath: '$.failure.cause',
    });
    // The wait's only error is its elapsed heartbeat timeout (or the task timeout behind it),
    // which is no failure: it leads to the execution's own poll.
    expect(state('WaitForScan')).toMatchObject({
      Type: 'Task',
      HeartbeatSecondsPath: '$.poll.nextWaitSeconds',
      Catch: [
        { ErrorEquals: ['States.HeartbeatTimeout', 'States.Timeout'], Next: 'PollScanStatus' },
        { ErrorEquals: ['States.ALL'], Next: 'WaitForScanUnrecorded' },
      ],
    });
  });
});

describe('a scan that succeeds', () => {
  it('outputs a succeeded ScanOutcome after writing report, logs and debug and a manifest that matches them, counted as started and succeeded', async () => {
    // Act
    const recorder = createMetricsRecorder();
    const run = await execute('shop.example.com', { metrics: recorder });

    // Assess: the output
    const end = executionEnd(run.events);
    expect(end.status).toBe('succeeded');
    const outcome = end.output as ScanOutcome;
    expect(outcome).toMatchObject({ domain: 'shop.example.com', state: 'succeeded' });
    expect(outcome.scanUuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(outcome.outputPrefix).toBe(`scans/shop.example.com/2026/11/20/${outcome.scanUuid}/`);
    expect(outcome.manifestKey).toBe(`${outcome.outputPrefix}manifest.json`);
    expect(run.result).toEqual({
      domain: 'shop.example.com',
      executionName: expect.any(String),
      outcome,
      error: undefined,
    });

    // Assess: the manifest names the three objects with the sizes and digests of the stored bytes
    const manifest = await readJson<ScanManifest>(s3.client, RESULTS, outcome.manifestKey ?? '');
    expect(manifest).toMatchObject({ domain: 'shop.example.com', scanUuid: outcome.scanUuid });
    expect(manifest.objects.map((o) => o.name)).toEqual(['report', 'logs', 'debug']);
    for (const object of manifest.objects) {
      const bytes = await readObject(s3.client, RESULTS, object.key);
      expect(bytes.length, object.key).toBe(object.size);
      expect(sha256Hex(bytes), object.key).toBe(object.sha256);
      expect(object.size).toBeGreaterThan(0);
    }
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '')).toEqual(
      [...manifest.objects.map((o) => o.key), outcome.manifestKey].sort(),
    );

    // Assess: the path through the definition
    const polls = sim.requestCount('GET /status/{uuid}');
    expect(polls).toBe(2);
    expect(run.path).toEqual([
      'StartScan',
      'StartThrottled?',
      ...loop(polls),
      'FetchOutputs',
      'WriteManifest',
    ]);
    expect(
      enteredStates(run.events)
        .filter((name) => name.startsWith('Fetch') && name !== 'FetchOutputs')
        .sort(),
    ).toEqual(['FetchDebug', 'FetchLogs', 'FetchReport']);
    expect(retriedStates(run.events)).toEqual([]);
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(logger.text()).not.toContain(sim.apiKey);

    // Assess: the metrics, its duration and the bytes of each stored output
    const { named, total } = metricsOf(recorder);
    expect(total(SCAN_METRIC.scansStarted)).toBe(1);
    expect(total(SCAN_METRIC.scansSucceeded)).toBe(1);
    expect(total(SCAN_METRIC.scansFailed) + total(SCAN_METRIC.scansTimedOut)).toBe(0);
    expect(named(SCAN_METRIC.scanDuration)[0]).toMatchObject({
      unit: 'Seconds',
      dimensions: { workflow: 'scan', outcome: 'succeeded' },
    });
    const bytes = named(METRIC.bytesStored);
    expect(bytes.map((metric) => metric.dimensions.output).sort()).toEqual(['debug', 'logs', 'report']);
    for (const metric of bytes) expect(metric.value).toBeGreaterThan(0);
    expectClosedDimensions(recorder.recorded);
  });
});

describe('a scan the vendor reports as failed', () => {
  it('fails with ScanFailed, a failed ScanOutcome as the cause and failure.json under the scan prefix, counted as failed', async () => {
    // Act
    const recorder = createMetricsRecorder();
    const run = await execute('broken.example.com', { metrics: recorder });

    // Assess
    const outcome = failedOutcome(run, 'ScanFailed');
    expect(outcome).toMatchObject({
      domain: 'broken.example.com',
      state: 'failed',
      error: { name: 'ScanFailed' },
    });
    expect(outcome.manifestKey).toBeUndefined();
    expect(outcome.outputPrefix).toBe(`scans/broken.example.com/2026/11/20/${outcome.scanUuid}/`);
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '')).toEqual([
      `${outcome.outputPrefix}failure.json`,
    ]);
    const record = await readJson<{ failure: string; outcome: ScanOutcome }>(
      s3.client,
      RESULTS,
      `${outcome.outputPrefix}failure.json`,
    );
    expect(record).toMatchObject({ failure: 'ScanFailed', outcome });
    expect(run.path.slice(-4)).toEqual(['ScanFinished?', 'MarkScanFailed', 'RecordFailure', 'Failed']);
    expect(run.path).not.toContain('FetchOutputs');
    expect(run.result.outcome).toEqual(outcome);
    const { named, total } = metricsOf(recorder);
    expect(total(SCAN_METRIC.scansStarted)).toBe(1);
    expect(named(SCAN_METRIC.scansFailed)).toEqual([
      expect.objectContaining({ value: 1, dimensions: { workflow: 'scan', outcome: 'ScanFailed' } }),
    ]);
    expect(total(SCAN_METRIC.scansSucceeded)).toBe(0);
    expectClosedDimensions(recorder.recorded);
  });
});

describe('a scan whose status never becomes terminal', () => {
  it('times out with ScanTimedOut once the scheduled waits reach the deadline, counted as timed out, not failed', async () => {
    // Prepare
    const poll: PollSettings = {
      minWaitSeconds: 1,
      maxWaitSeconds: 10,
      growthFactor: 1.5,
      deadlineSeconds: 120,
    };
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });

    // Act
    const recorder = createMetricsRecorder();
    const run = await execute('slow.example.com', { poll, metrics: recorder });

    // Assess
    const outcome = failedOutcome(run, 'ScanTimedOut');
    expect(outcome).toMatchObject({ state: 'timed_out', error: { name: 'ScanTimedOut' } });
    expect(outcome.manifestKey).toBeUndefined();
    expect(outcome.error?.message).toContain('did not finish within 120 s');
    const polls = run.path.filter((name) => name === 'PollScanStatus').length;
    expect(polls).toBe(worstCaseLoopIterations(poll));
    expect(sim.requestCount('GET /status/{uuid}')).toBe(polls);
    expect(run.path.slice(-3)).toEqual(['MarkScanTimedOut', 'RecordFailure', 'Failed']);
    const record = await readJson<{
      failure: string;
      poll: { deadlineExceeded: boolean; waitedSeconds: number };
    }>(s3.client, RESULTS, `${outcome.outputPrefix}failure.json`);
    expect(record.failure).toBe('ScanTimedOut');
    expect(record.poll.deadlineExceeded).toBe(true);
    expect(record.poll.waitedSeconds).toBe(120);
    const { named, total } = metricsOf(recorder);
    expect(total(SCAN_METRIC.scansTimedOut)).toBe(1);
    expect(total(SCAN_METRIC.scansFailed)).toBe(0);
    expect(named(SCAN_METRIC.scanDuration)[0]?.dimensions.outcome).toBe('timed_out');
  });

  it('stays far below the 25,000 history events at the production settings (24 h deadline)', {
    timeout: 20_000,
  }, async () => {
    // Prepare
    sim.scriptScan('forever.example.com', { outcome: 'never-finish' });

    // Act
    const run = await execute('forever.example.com', { poll: DEFAULT_POLL_SETTINGS });

    // Assess
    const outcome = failedOutcome(run, 'ScanTimedOut');
    expect(outcome.state).toBe('timed_out');
    const polls = sim.requestCount('GET /status/{uuid}');
    const estimate = estimateHistoryEvents(DEFAULT_POLL_SETTINGS);
    console.info(
      `24 h never-finishing scan at the default poll settings: ${polls} polls, ${run.historyEvents} history events ` +
        `(estimate ${estimate}, limit ${STEP_FUNCTIONS_HISTORY_EVENT_LIMIT}), ${run.transitions} transitions`,
    );
    expect(polls).toBe(worstCaseLoopIterations(DEFAULT_POLL_SETTINGS));
    expect(run.historyEvents).toBeLessThan(STEP_FUNCTIONS_HISTORY_EVENT_LIMIT / 2);
    // The estimate is an upper bound whose loop part is exact for an unlearned scan; only its
    // allowance outside the loop and for a learned scan's dense polls is generous.
    expect(run.historyEvents).toBeLessThanOrEqual(estimate);
    expect(run.historyEvents).toBeGreaterThan(
      estimate - HISTORY_EVENTS_OUTSIDE_LOOP - MAX_DENSE_POLLS * HISTORY_EVENTS_PER_POLL_ITERATION,
    );
  });
});
