/**
 * The synthesized ScanDomain definition (exactly what `cdk synth` produces), executed by
 * aws-local-stepfunctions with every Task bound to its real handler, against the vendor simulator and
 * s3rver on loopback: every branch (success, retry, catch, timeout). Waits and retry intervals are
 * overridden to 0 ms; the poll step still counts the seconds each wait asked for.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { VendorClients } from '#lambdas/platform/vendor-api/index';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import type { ScanManifest } from '#lambdas/scan/manifest';
import {
  DEFAULT_POLL_SETTINGS,
  estimateHistoryEvents,
  HISTORY_EVENTS_OUTSIDE_LOOP,
  type PollSettings,
  STEP_FUNCTIONS_HISTORY_EVENT_LIMIT,
  worstCaseLoopIterations,
} from '#lambdas/scan/poll-schedule';
import type { AslDefinition, AslState } from '../../local/definitions.ts';
import { type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { createMemoryLogger, type MemoryLogger } from '../helpers/memory-logger.ts';
import {
  enteredStates,
  executeScan,
  executionEnd,
  type Handler,
  type LocalRun,
  listKeys,
  readJson,
  readObject,
  retriedStates,
  type ScanExecutionSetup,
  sha256Hex,
  synthesizedScanMachine,
  vendorClientsFor,
} from './harness.ts';

const RESULTS = 'scan-results';
/** Short waits and a short deadline; with waits overridden to 0 ms only the arithmetic remains. */
const QUICK_POLL: PollSettings = {
  minWaitSeconds: 1,
  maxWaitSeconds: 2,
  growthFactor: 1.5,
  deadlineSeconds: 60,
};
/** A frozen clock: the deadline then depends on the scheduled waits alone, as in the worst case. */
const NOW = new Date('2026-11-20T10:00:00.000Z');
const clock = () => NOW;

let definition: AslDefinition;
let machine: StateMachine;
let s3: S3rverFixture;
let sim: VendorSimulator;
let clients: VendorClients;
let logger: MemoryLogger;

beforeAll(async () => {
  ({ definition, machine } = await synthesizedScanMachine());
  s3 = await startS3rver({ buckets: [RESULTS] });
});

beforeEach(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 2, failingDomains: ['broken.example.com'] });
  clients = vendorClientsFor(sim);
  logger = createMemoryLogger();
});

afterEach(async () => {
  await clients.close();
  await sim.close();
});

afterAll(async () => {
  await s3.close();
});

/** Runs one domain through the synthesized definition with this file's simulator, s3rver and clock. */
function execute(
  domain: string,
  options: {
    poll?: PollSettings;
    clients?: VendorClients;
    /** The S3 client the handlers use (e.g. one that refuses some writes). */
    s3Client?: S3Client;
    wrap?: ScanExecutionSetup['wrap'];
  } = {},
): Promise<LocalRun> {
  return executeScan(
    {
      definition,
      machine,
      s3: options.s3Client ?? s3.client,
      resultsBucket: RESULTS,
      scanClient: (options.clients ?? clients).scan,
      poll: options.poll ?? QUICK_POLL,
      logger,
      clock,
      ...(options.wrap ? { wrap: options.wrap } : {}),
    },
    domain,
  );
}

/** The Fail state's Cause, which RecordFailure made a JSON ScanOutcome. */
function failedOutcome(run: LocalRun, error: string): ScanOutcome {
  const end = executionEnd(run.events);
  expect(end).toMatchObject({ status: 'failed', error });
  return JSON.parse(end.cause ?? '') as ScanOutcome;
}

/** A bound handler that first fails the way the Lambda service (not our code) fails. */
function failingFirst(handler: Handler | undefined, errorName: string, times = 1): Handler {
  if (!handler) throw new Error('handler is not bound');
  let failures = 0;
  return async (input) => {
    if (failures < times) {
      failures += 1;
      const error = new Error(`${errorName} (injected by the test)`);
      error.name = errorName;
      throw error;
    }
    return handler(input);
  };
}

/** A client for the same s3rver that refuses PutObject for matching keys, as S3 would with AccessDenied. */
function refusingPuts(keys: RegExp): S3Client {
  const client = s3.createClient();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: unknown }).Key;
      if (context.commandName === 'PutObjectCommand' && typeof key === 'string' && keys.test(key)) {
        const error = new Error(`Access Denied (injected by the test for ${key})`);
        error.name = 'AccessDenied';
        throw error;
      }
      return next(args);
    },
    { step: 'initialize', name: 'refusePuts' },
  );
  return client;
}

function loop(polls: number): string[] {
  return Array.from({ length: polls }, () => ['WaitForScan', 'PollScanStatus', 'ScanFinished?']).flat();
}

/** The failure.json of a scan that never got an output prefix (rejected before or at the vendor). */
async function rejectedFailureRecords(domainFolder: string): Promise<string[]> {
  const keys = await listKeys(s3.client, RESULTS, `scans/${domainFolder}/`);
  return keys.filter((key) => /\/rejected-[0-9a-f]{16}\/failure\.json$/.test(key));
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
    // A 401 proves it too (the vendor refused the request): retried across a key rotation.
    expect(retryErrors(state('StartScan')).sort()).toEqual([
      'Lambda.TooManyRequestsException',
      'VendorAuthError',
      'VendorThrottledError',
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
    expect(state('WaitForScan')).toMatchObject({ Type: 'Wait', SecondsPath: '$.poll.nextWaitSeconds' });
  });
});

describe('a scan that succeeds', () => {
  it('outputs a succeeded ScanOutcome after writing report, logs and debug and a manifest that matches them', async () => {
    // Act
    const run = await execute('shop.example.com');

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
    expect(run.path).toEqual(['StartScan', ...loop(polls), 'FetchOutputs', 'WriteManifest', 'ScanSucceeded']);
    expect(
      enteredStates(run.events)
        .filter((name) => name.startsWith('Fetch') && name !== 'FetchOutputs')
        .sort(),
    ).toEqual(['FetchDebug', 'FetchLogs', 'FetchReport']);
    expect(retriedStates(run.events)).toEqual([]);
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(logger.text()).not.toContain(sim.apiKey);
  });
});

describe('a scan the vendor reports as failed', () => {
  it('fails with ScanFailed, a failed ScanOutcome as the cause and failure.json under the scan prefix', async () => {
    // Act
    const run = await execute('broken.example.com');

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
  });
});

describe('a scan whose status never becomes terminal', () => {
  it('times out with ScanTimedOut once the scheduled waits reach the deadline', async () => {
    // Prepare
    const poll: PollSettings = {
      minWaitSeconds: 1,
      maxWaitSeconds: 10,
      growthFactor: 1.5,
      deadlineSeconds: 120,
    };
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });

    // Act
    const run = await execute('slow.example.com', { poll });

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
    // The estimate is an upper bound whose loop part is exact; only its allowance outside the loop is generous.
    expect(run.historyEvents).toBeLessThanOrEqual(estimate);
    expect(run.historyEvents).toBeGreaterThan(estimate - HISTORY_EVENTS_OUTSIDE_LOOP);
  });
});

describe('a throttled start', () => {
  it('is retried by the state machine once the client gives up, and the scan then succeeds', async () => {
    // Prepare: more 429s than the client's own 2 attempts, so the Lambda throws VendorThrottledError
    const throttled = 3;
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: throttled,
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });

    // Act
    const run = await execute('busy.example.com');

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual(['StartScan']);
    const failed = run.events.find((e) => e.type === 'StateFailed' && e.state.name === 'StartScan');
    expect(failed).toMatchObject({ Error: 'VendorThrottledError' });
    expect(sim.requestCount('POST /scan')).toBe(throttled + 1);
  });
});

describe('a start the vendor refuses for good', () => {
  it('is not retried: ScanRejected after exactly one POST /scan, with a failure record', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: 5,
      fault: { type: 'status', status: 400, body: '{"error":"bad domain"}' },
    });

    // Act
    const run = await execute('refused.example.com');

    // Assess
    const outcome = failedOutcome(run, 'ScanRejected');
    expect(outcome).toMatchObject({
      domain: 'refused.example.com',
      state: 'rejected',
      error: { name: 'VendorHttpError' },
    });
    expect(outcome.scanUuid).toBeUndefined();
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(retriedStates(run.events)).toEqual([]);
    expect(run.path).toEqual(['StartScan', 'MarkScanRejected', 'RecordFailure', 'Failed']);
    const records = await rejectedFailureRecords('refused.example.com');
    expect(records).toHaveLength(1);
    expect(await readJson(s3.client, RESULTS, records[0] ?? '')).toMatchObject({
      failure: 'ScanRejected',
      outcome,
    });
  });

  it('rejects an invalid domain without calling the vendor, with a failure record', async () => {
    // Act
    const run = await execute('not a domain!');

    // Assess
    const outcome = failedOutcome(run, 'ScanRejected');
    expect(outcome).toMatchObject({ state: 'rejected', error: { name: 'InvalidInputError' } });
    expect(sim.requestCount('POST /scan')).toBe(0);
    expect(retriedStates(run.events)).toEqual([]);
    const records = await rejectedFailureRecords('invalid');
    expect(records).toHaveLength(1);
    expect(await readJson(s3.client, RESULTS, records[0] ?? '')).toMatchObject({ failure: 'ScanRejected' });
  });
});

describe('a start whose answer was lost', () => {
  it('adopts the scan the start created in the same execution, not left for reconciliation', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      fault: { type: 'status', status: 503, phase: 'after' },
    });

    // Act
    const run = await execute('adopted.example.com');

    // Assess
    const end = executionEnd(run.events);
    const held = sim.scansOf('adopted.example.com');
    expect(held).toHaveLength(1);
    expect(run.path).not.toContain('MarkScanRejected');
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(end).toMatchObject({
      status: 'succeeded',
      output: { state: 'succeeded', scanUuid: held[0]?.uuid, settledStart: 'adopted' },
    });
  });

  it('is rejected as unresolved when the listing cannot be read, with the one scan left for reconciliation', async () => {
    // Prepare
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'status', status: 503 },
    });

    // Act
    const run = await execute('unresolved.example.com');

    // Assess
    const outcome = failedOutcome(run, 'ScanRejected');
    expect(outcome).toMatchObject({ state: 'rejected', error: { name: 'ScanStartUnresolvedError' } });
    expect(outcome.error?.message).toContain('the scan listing could not be read');
    expect(sim.scansOf('unresolved.example.com')).toHaveLength(1);
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(await rejectedFailureRecords('unresolved.example.com')).toHaveLength(1);
  });
});

describe('transient errors while polling', () => {
  it('retries PollScanStatus after 503s exhaust the client (VendorUnavailableError) and succeeds', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: 2,
      fault: { type: 'status', status: 503 },
    });

    // Act
    const run = await execute('flaky.example.com');

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual(['PollScanStatus']);
    expect(run.events.find((e) => e.type === 'StateFailed')).toMatchObject({
      state: { name: 'PollScanStatus' },
      Error: 'VendorUnavailableError',
    });
    const polls = run.path.filter((name) => name === 'PollScanStatus').length;
    expect(sim.requestCount('GET /status/{uuid}')).toBe(polls + 2);
    expect(sim.requestCount('POST /scan')).toBe(1);
  });

  it('retries PollScanStatus after hung requests time out (VendorTimeoutError) and succeeds', async () => {
    // Prepare
    const impatient = vendorClientsFor(sim, { requestTimeoutMs: 250 });
    sim.addFault({ api: 'scan', method: 'GET', path: '/status/', times: 2, fault: { type: 'hang' } });

    // Act
    const run = await execute('hanging.example.com', { clients: impatient }).finally(() => impatient.close());

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual(['PollScanStatus']);
    expect(run.events.find((e) => e.type === 'StateFailed')).toMatchObject({
      state: { name: 'PollScanStatus' },
      Error: 'VendorTimeoutError',
    });
  });
});

describe('an output download that keeps breaking mid-body', () => {
  it('fails with OutputFetchFailed after the retries, leaving no manifest, no report and a failure record', async () => {
    // Prepare: more resets than FetchReport's 1 + 5 attempts
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 50,
      fault: { type: 'reset-mid-body', afterBytes: 4096 },
    });

    // Act
    const run = await execute('cut.example.com');

    // Assess
    const outcome = failedOutcome(run, 'OutputFetchFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'VendorNetworkError' } });
    expect(outcome.manifestKey).toBeUndefined();
    expect(retriedStates(run.events).filter((name) => name === 'FetchReport')).toHaveLength(5);
    expect(sim.requestCount('GET /report/{uuid}')).toBe(6);
    const prefix = outcome.outputPrefix ?? '';
    expect(prefix).toMatch(/^scans\/cut\.example\.com\//);
    const keys = await listKeys(s3.client, RESULTS, prefix);
    expect(keys).toContain(`${prefix}failure.json`);
    expect(keys).not.toContain(`${prefix}manifest.json`);
    expect(keys.filter((key) => key.startsWith(`${prefix}report.`))).toEqual([]);
    const record = await readJson<{ failure: string; outcome: ScanOutcome }>(
      s3.client,
      RESULTS,
      `${prefix}failure.json`,
    );
    expect(record).toMatchObject({
      failure: 'OutputFetchFailed',
      outcome: { error: { name: 'VendorNetworkError' } },
    });
    expect(run.path.slice(-4)).toEqual(['FetchOutputs', 'MarkOutputFetchFailed', 'RecordFailure', 'Failed']);
  });
});

describe('Lambda service errors', () => {
  it('retries StartScan after Lambda.TooManyRequestsException (the function never ran)', async () => {
    // Act
    const run = await execute('throttled-lambda.example.com', {
      wrap: (bound) => ({
        ...bound,
        StartScan: failingFirst(bound.StartScan, 'Lambda.TooManyRequestsException'),
      }),
    });

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual(['StartScan']);
    expect(sim.requestCount('POST /scan')).toBe(1);
  });

  it('retries PollScanStatus after Lambda.ServiceException', async () => {
    // Act
    const run = await execute('service-error.example.com', {
      wrap: (bound) => ({
        ...bound,
        PollScanStatus: failingFirst(bound.PollScanStatus, 'Lambda.ServiceException'),
      }),
    });

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual(['PollScanStatus']);
  });

  it('does not retry StartScan after Lambda.ServiceException (the POST may have been sent): ScanRejected', async () => {
    // Act
    const run = await execute('unsure.example.com', {
      wrap: (bound) => ({ ...bound, StartScan: failingFirst(bound.StartScan, 'Lambda.ServiceException') }),
    });

    // Assess
    const outcome = failedOutcome(run, 'ScanRejected');
    expect(outcome).toMatchObject({ state: 'rejected', error: { name: 'Lambda.ServiceException' } });
    expect(retriedStates(run.events)).toEqual([]);
    expect(sim.requestCount('POST /scan')).toBe(0);
    expect(await rejectedFailureRecords('unsure.example.com')).toHaveLength(1);
  });
});

describe('polling that keeps failing', () => {
  it('gives up after the Retry attempts with PollFailed and records the failure under the scan prefix', async () => {
    // Prepare: every status request answers 503
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'status', status: 503 },
    });

    // Act
    const run = await execute('down.example.com');

    // Assess: 1 + 5 invocations, each with the client's 2 attempts
    const outcome = failedOutcome(run, 'PollFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'VendorUnavailableError' } });
    expect(retriedStates(run.events)).toEqual(Array.from({ length: 5 }, () => 'PollScanStatus'));
    expect(sim.requestCount('GET /status/{uuid}')).toBe(12);
    expect(run.path).toEqual([
      'StartScan',
      'WaitForScan',
      'PollScanStatus',
      'MarkPollFailed',
      'RecordFailure',
      'Failed',
    ]);
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '-')).toEqual([
      `${outcome.outputPrefix}failure.json`,
    ]);
  });

  it('does not retry a permanent status error (HTTP 404): PollFailed at once', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: 1,
      fault: { type: 'status', status: 404 },
    });

    // Act
    const run = await execute('gone.example.com');

    // Assess
    const outcome = failedOutcome(run, 'PollFailed');
    expect(outcome.error?.name).toBe('VendorHttpError');
    expect(retriedStates(run.events)).toEqual([]);
    expect(sim.requestCount('GET /status/{uuid}')).toBe(1);
  });
});

describe('a manifest that cannot be written', () => {
  it('fails with ManifestFailed: the outputs stay, but without manifest.json the scan is not complete', async () => {
    // Prepare
    const refusing = refusingPuts(/\/manifest\.json$/);

    // Act
    const run = await execute('readonly.example.com', { s3Client: refusing });

    // Assess
    const outcome = failedOutcome(run, 'ManifestFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'AccessDenied' } });
    expect(retriedStates(run.events)).toEqual([]);
    const prefix = outcome.outputPrefix ?? '-';
    expect(await listKeys(s3.client, RESULTS, prefix)).toEqual(
      ['debug.ndjson', 'failure.json', 'logs.txt', 'report.json'].map((file) => `${prefix}${file}`),
    );
    expect(run.path.slice(-5)).toEqual([
      'FetchOutputs',
      'WriteManifest',
      'MarkManifestFailed',
      'RecordFailure',
      'Failed',
    ]);
  });
});

describe('a failure record that cannot be written', () => {
  it('still ends the execution with the error and outcome of the scan, and logs the lost record', async () => {
    // Prepare
    const refusing = refusingPuts(/\/failure\.json$/);

    // Act
    const run = await execute('broken.example.com', { s3Client: refusing });

    // Assess
    const outcome = failedOutcome(run, 'ScanFailed');
    expect(outcome).toMatchObject({
      domain: 'broken.example.com',
      state: 'failed',
      error: { name: 'ScanFailed' },
    });
    expect(await listKeys(s3.client, RESULTS, outcome.outputPrefix ?? '-')).toEqual([]);
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'Could not write the failure record',
    ]);
  });
});
