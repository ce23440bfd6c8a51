/**
 * The synthesized ScanDomain definition (exactly what `cdk synth` produces), executed by
 * aws-local-stepfunctions with every Task bound to its real handler, against the vendor simulator and
 * s3rver on loopback (setup: scan-execution-fixture.ts). Here: failures of the
 * tasks themselves (Lambda service errors, polling that keeps failing, writes S3 refuses). Waits and retry intervals are
 * overridden to 0 ms; the poll step still counts the seconds each wait asked for.
 */
import { describe, expect, it } from 'vitest';
import { listKeys } from '../kit/s3.ts';
import { executionEnd, retriedStates } from '../local/harness.ts';
import {
  execute,
  failedOutcome,
  failingFirst,
  logger,
  RESULTS,
  refusingPuts,
  rejectedFailureRecords,
  s3,
  sim,
  useScanExecution,
} from './scan-execution-fixture.ts';

useScanExecution();

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
      'StartThrottled?',
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
