/**
 * The synthesized ScanDomain definition (exactly what `cdk synth` produces), executed by
 * aws-local-stepfunctions with every Task bound to its real handler, against the vendor simulator and
 * s3rver on loopback (setup: scan-execution-fixture.ts). Here: what the vendor
 * does wrong (throttling, refusals, lost answers, transient and broken downloads). Waits and retry intervals are
 * overridden to 0 ms; the poll step still counts the seconds each wait asked for.
 */
import { describe, expect, it } from 'vitest';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { listKeys, readJson } from '../kit/s3.ts';
import { executionEnd, retriedStates, vendorClientsFor } from '../local/harness.ts';
import {
  execute,
  failedOutcome,
  RESULTS,
  rejectedFailureRecords,
  s3,
  sim,
  useScanExecution,
} from './scan-execution-fixture.ts';

useScanExecution();

/** The failure record a failed scan left under its output prefix. */
function failureRecordAt(prefix: string) {
  return readJson<{ failure: string; outcome: ScanOutcome }>(s3.client, RESULTS, `${prefix}failure.json`);
}

/** The seconds each WaitForStartSlot asked for (the engine overrides the wait itself to 0 ms). */
function startSlotWaits(run: Awaited<ReturnType<typeof execute>>): number[] {
  return run.events.flatMap((e) =>
    e.type === 'StateEntered' && e.state.name === 'WaitForStartSlot'
      ? [(e.state.input as { startThrottle: { waitSeconds: number } }).startThrottle.waitSeconds]
      : [],
  );
}

describe('a throttled start', () => {
  it('is waited out by the state machine once the client gives up, and the scan then succeeds', async () => {
    // Prepare: more 429s than the client's own 2 attempts, so the first StartScan answers with a wait
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
    expect(retriedStates(run.events)).toEqual([]);
    expect(run.path.slice(0, 5)).toEqual([
      'StartScan',
      'StartThrottled?',
      'WaitForStartSlot',
      'StartScan',
      'StartThrottled?',
    ]);
    expect(startSlotWaits(run)).toHaveLength(1);
    expect(startSlotWaits(run)[0]).toBeGreaterThanOrEqual(1);
    expect(sim.requestCount('POST /scan')).toBe(throttled + 1);
    expect(sim.scansOf('busy.example.com')).toHaveLength(1);
  });

  it('waits at least a Retry-After longer than the client sleeps for, with one scan started', async () => {
    // Prepare: one 429 asking for 90 s, past the transport's 20 s limit, so the Lambda does not sleep it
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: 1,
      fault: { type: 'status', status: 429, retryAfter: 90 },
    });

    // Act
    const run = await execute('slow-vendor.example.com');

    // Assess
    expect(executionEnd(run.events).status).toBe('succeeded');
    expect(retriedStates(run.events)).toEqual([]);
    const [wait, ...more] = startSlotWaits(run);
    expect(more).toEqual([]);
    expect(wait).toBeGreaterThanOrEqual(90);
    expect(sim.requestCount('POST /scan')).toBe(2);
    expect(sim.scansOf('slow-vendor.example.com')).toHaveLength(1);
  });

  it('fails by name, recorded as ScanRejected, when the vendor asks for longer than the throttle budget', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: 1,
      fault: { type: 'status', status: 429, retryAfter: 86_400 },
    });

    // Act
    const run = await execute('closed.example.com');

    // Assess
    const outcome = failedOutcome(run, 'ScanRejected');
    expect(outcome).toMatchObject({ state: 'rejected', error: { name: 'ScanStartThrottledError' } });
    expect(startSlotWaits(run)).toEqual([]);
    expect(sim.requestCount('POST /scan')).toBe(1);
    expect(sim.scansOf('closed.example.com')).toEqual([]);
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
    // WaitForScan's elapsed waits are caught heartbeat timeouts, not failures of a step.
    expect(run.events.find((e) => e.type === 'StateFailed' && e.state.name !== 'WaitForScan')).toMatchObject({
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
    // WaitForScan's elapsed waits are caught heartbeat timeouts, not failures of a step.
    expect(run.events.find((e) => e.type === 'StateFailed' && e.state.name !== 'WaitForScan')).toMatchObject({
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
    const record = await failureRecordAt(prefix);
    expect(record).toMatchObject({
      failure: 'OutputFetchFailed',
      outcome: { error: { name: 'VendorNetworkError' } },
    });
    expect(run.path.slice(-4)).toEqual(['FetchOutputs', 'MarkOutputFetchFailed', 'RecordFailure', 'Failed']);
  });
});

describe('a report redirected to an internal address (redirect-internal)', () => {
  it.each(['metadata', 'loopback', 'mapped'] as const)(
    'refuses the %s redirect at once: OutputFetchFailed naming VendorDestinationRefusedError, nothing fetched or stored',
    async (to) => {
      // Prepare
      sim.addFault({
        api: 'scan',
        method: 'GET',
        path: '/report/',
        times: 10,
        fault: { type: 'redirect-internal', to },
      });

      // Act
      const run = await execute('hostile.example.com');

      // Assess: permanent, so neither the client nor the state machine asks again
      const outcome = failedOutcome(run, 'OutputFetchFailed');
      expect(outcome).toMatchObject({ state: 'failed', error: { name: 'VendorDestinationRefusedError' } });
      expect(outcome.error?.message).toMatch(/loopback|metadata/);
      expect(sim.requestCount('GET /report/{uuid}')).toBe(1);
      expect(retriedStates(run.events).filter((name) => name === 'FetchReport')).toEqual([]);
      const prefix = outcome.outputPrefix ?? '';
      const keys = await listKeys(s3.client, RESULTS, prefix);
      expect(keys.filter((key) => key.startsWith(`${prefix}report.`))).toEqual([]);
      expect(keys).not.toContain(`${prefix}manifest.json`);
      const record = await failureRecordAt(prefix);
      expect(record).toMatchObject({
        failure: 'OutputFetchFailed',
        outcome: { error: { name: 'VendorDestinationRefusedError' } },
      });
    },
  );
});

describe('a scan output that inflates past scan.maxOutputBytes (a gzip bomb)', () => {
  it('stops at the cap as it streams: OutputFetchFailed naming VendorBodyTooLargeError, nothing stored as an output', async () => {
    // Prepare: 1 GiB of zeros, about 1 MB gzip-encoded on the wire, against an 8 MiB cap
    const cap = 8 * 1024 * 1024;
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 10,
      fault: { type: 'oversized-body', bytes: 1024 ** 3, encoding: 'gzip' },
    });
    const started = Date.now();

    // Act
    const run = await execute('bomb.example.com', { maxOutputBytes: cap });

    // Assess: permanent, not retried, and well before 1 GiB could have been inflated and stored
    const outcome = failedOutcome(run, 'OutputFetchFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'VendorBodyTooLargeError' } });
    expect(outcome.error?.message).toContain(`larger than ${cap} bytes`);
    expect(sim.requestCount('GET /report/{uuid}')).toBe(1);
    expect(retriedStates(run.events).filter((name) => name === 'FetchReport')).toEqual([]);
    expect(Date.now() - started).toBeLessThan(30_000);
    const prefix = outcome.outputPrefix ?? '';
    const keys = await listKeys(s3.client, RESULTS, prefix);
    expect(keys.filter((key) => key.startsWith(`${prefix}report.`))).toEqual([]);
    expect(keys.filter((key) => key.includes('.staging/'))).toEqual([]);
    expect(keys).not.toContain(`${prefix}manifest.json`);
    expect(await failureRecordAt(prefix)).toMatchObject({
      failure: 'OutputFetchFailed',
      outcome: { error: { name: 'VendorBodyTooLargeError' } },
    });
  });
});

describe('a report trickled one byte every 5 s (trickle)', () => {
  it("ends at the function's timeout, as in AWS: Sandbox.Timedout, caught as OutputFetchFailed, nothing stored", async () => {
    // Prepare: never idle long enough for the client's idle timeout; a 1 s function timeout
    sim.addFault({ api: 'scan', method: 'GET', path: '/report/', times: 10, fault: { type: 'trickle' } });
    const started = Date.now();

    // Act
    const run = await execute('trickle.example.com', { lambdaTimeoutMs: 1_000 });

    // Assess
    const outcome = failedOutcome(run, 'OutputFetchFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'Sandbox.Timedout' } });
    expect(JSON.stringify(outcome.error)).toContain('Task timed out after 1.00 seconds');
    expect(Date.now() - started).toBeLessThan(15_000);
    const prefix = outcome.outputPrefix ?? '';
    const keys = await listKeys(s3.client, RESULTS, prefix);
    expect(keys.filter((key) => key.startsWith(`${prefix}report.`))).toEqual([]);
    expect(keys).not.toContain(`${prefix}manifest.json`);
  });
});
