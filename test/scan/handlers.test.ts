/**
 * The thin Lambda handlers, built with explicit deps (the way the local runner builds them), fed
 * JSON the way Step Functions feeds them: every result goes through JSON before the next state.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { createObservability } from '#lambdas/platform/runtime/observability';
import type { ScanInProgress, StoredObject } from '#lambdas/scan/contracts';
import { createScanDeps } from '#lambdas/scan/deps';
import { SCAN_OUTPUT_NAMES } from '#lambdas/scan/scan-outputs';
import { createScanSettings } from '#lambdas/scan/settings';
import type { VendorSimulator } from '#local/simulator/types';
import { createDeleteScanHandler } from '../../lambdas/scan/delete-scan.ts';
import { createFetchScanOutputHandler } from '../../lambdas/scan/fetch-scan-output.ts';
import { createPollScanStatusHandler } from '../../lambdas/scan/poll-scan-status.ts';
import { createRecordScanFailureHandler } from '../../lambdas/scan/record-scan-failure.ts';
import { createStartScanHandler } from '../../lambdas/scan/start-scan.ts';
import { createWriteScanManifestHandler } from '../../lambdas/scan/write-scan-manifest.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { listKeys } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import {
  closeTestClients,
  createTestDeps,
  RESULTS_BUCKET,
  type ScanTestBed,
  scanClientFor,
} from './fixture.ts';

let s3: S3rverFixture;
let sim: VendorSimulator;
let bed: ScanTestBed;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  sim = await startSimulator({ pollsToFinish: 1 });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await closeTestClients();
});

afterAll(async () => {
  await sim.close();
  await s3.close();
});

/** What a state sees of the previous state's result. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function handlers(deps = bed.deps) {
  return {
    start: createStartScanHandler(deps),
    poll: createPollScanStatusHandler(deps),
    fetch: createFetchScanOutputHandler(deps),
    manifest: createWriteScanManifestHandler(deps),
    record: createRecordScanFailureHandler(deps),
    remove: createDeleteScanHandler(deps),
  };
}

async function startedAndFinished(domain: string): Promise<ScanInProgress> {
  const h = handlers();
  // Not throttled by this simulator: the start answers with the poll loop's state.
  let state = viaJson((await h.start({ domain, runId: 'list-run-1' })) as ScanInProgress);
  while (state.status?.state !== 'succeeded') state = viaJson(await h.poll(state));
  return state;
}

describe('the scan handlers', () => {
  it('run a scan end to end on JSON state, and the execution output is a ScanOutcome', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const h = handlers();

    // Act
    const finished = await startedAndFinished('handlers.example.com');
    const stored = await Promise.all(
      SCAN_OUTPUT_NAMES.map(async (output) => viaJson(await h.fetch({ ...finished, output }))),
    );
    const outcome = viaJson(await h.manifest({ ...finished, stored }));
    const cleaned = await h.remove(outcome);

    // Assess
    expect(outcome).toEqual({
      domain: 'handlers.example.com',
      state: 'succeeded',
      scanUuid: finished.scanUuid,
      outputPrefix: finished.outputPrefix,
      manifestKey: `${finished.outputPrefix}manifest.json`,
    });
    expect(await listKeys(s3.client, RESULTS_BUCKET, finished.outputPrefix)).toEqual(
      ['debug.ndjson', 'logs.txt', 'manifest.json', 'report.json'].map((f) => `${finished.outputPrefix}${f}`),
    );
    expect(cleaned).toMatchObject({ scanUuid: finished.scanUuid, deletedAtVendor: true });
  });

  it('tags log lines with the domain, scan uuid and request id, and never logs the event', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const finished = await startedAndFinished('tagged.example.com');
    bed.logger.lines.length = 0;

    // Act
    await handlers().poll({ ...finished, note: 'event-marker-123' }, { awsRequestId: 'req-42' });

    // Assess
    expect(bed.logger.lines.length).toBeGreaterThan(0);
    for (const line of bed.logger.lines) {
      expect(line.fields).toMatchObject({
        domain: 'tagged.example.com',
        scanUuid: finished.scanUuid,
        requestId: 'req-42',
      });
    }
    expect(bed.logger.text()).not.toContain('event-marker-123');
  });

  it('writes Powertools JSON lines with the appended keys, leaving the shared logger untouched', async () => {
    // Prepare
    const writes: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const logger = pipelineLoggerFromPowertools(
      createObservability({ POWERTOOLS_LOG_LEVEL: 'INFO' }, 'scan-test').logger,
    );
    const deps = createScanDeps({
      s3: s3.client,
      scanClient: scanClientFor(sim),
      logger,
      settings: createScanSettings({ resultsBucket: RESULTS_BUCKET }),
    });

    // Act
    const started = (await createStartScanHandler(deps)(
      { domain: 'powertools.example.com' },
      { awsRequestId: 'req-7' },
    )) as ScanInProgress;
    logger.info('after the invocation');

    // Assess
    const lines = writes.flatMap((w) => w.split('\n')).filter((l) => l.startsWith('{'));
    const startedLine = JSON.parse(lines.find((l) => l.includes('Scan started')) ?? '{}');
    expect(startedLine).toMatchObject({
      service: 'scan-test',
      runId: 'adhoc',
      requestId: 'req-7',
      scanUuid: started.scanUuid,
    });
    const afterLine = JSON.parse(lines.find((l) => l.includes('after the invocation')) ?? '{}');
    expect(afterLine.requestId).toBeUndefined();
  });

  it.each([
    ['not an object', 'domains.txt', 'input'],
    ['no domain', { runId: 'x' }, 'domain'],
    ['a numeric domain', { domain: 42 }, 'domain'],
    ['an invalid domain', { domain: 'exa mple.com' }, 'domain'],
    ['a runId that is not a string', { domain: 'example.com', runId: 7 }, 'runId'],
  ])('StartScan refuses %s with an InvalidInputError naming the field', async (_label, event, field) => {
    bed = createTestDeps(s3.client, sim);
    await expect(handlers().start(event)).rejects.toMatchObject({ name: 'InvalidInputError', input: field });
  });

  it.each([
    ['a scan uuid that is not a UUID', { scanUuid: '../../x' }, 'scanUuid'],
    [
      'an output prefix of another domain',
      { outputPrefix: 'scans/other.example.com/2026/11/20/x/' },
      'outputPrefix',
    ],
    ['a poll state without attempt', { poll: { nextWaitSeconds: 15 } }, 'poll.attempt'],
    ['an unknown status state', { status: { state: 'done', raw: '' } }, 'status.state'],
  ])(
    'PollScanStatus refuses %s with an InvalidInputError naming the field',
    async (_label, change, field) => {
      // Prepare
      bed = createTestDeps(s3.client, sim);
      const state = viaJson(await handlers().start({ domain: 'validation.example.com' }));

      // Act
      const attempt = handlers().poll({ ...state, ...change });

      // Assess
      await expect(attempt).rejects.toMatchObject({ name: 'InvalidInputError', input: field });
    },
  );

  it('FetchScanOutput refuses an unknown output name', async () => {
    bed = createTestDeps(s3.client, sim);
    const finished = await startedAndFinished('fetch-validation.example.com');
    await expect(handlers().fetch({ ...finished, output: 'secrets' })).rejects.toMatchObject({
      name: 'InvalidInputError',
      input: 'output',
    });
  });

  it.each([
    ['stored missing', undefined, 'stored'],
    [
      'a bad digest',
      [{ name: 'report', bucket: RESULTS_BUCKET, key: 'k', size: 1, sha256: 'nope' }],
      'stored[0].sha256',
    ],
    [
      'an unknown name',
      [{ name: 'extra', bucket: RESULTS_BUCKET, key: 'k', size: 1, sha256: 'a'.repeat(64) }],
      'stored[0].name',
    ],
  ])('WriteManifest refuses %s with an InvalidInputError naming the field', async (_label, stored, field) => {
    bed = createTestDeps(s3.client, sim);
    const finished = await startedAndFinished('manifest-validation.example.com');
    await expect(
      handlers().manifest({ ...finished, stored: stored as StoredObject[] }),
    ).rejects.toMatchObject({
      name: 'InvalidInputError',
      input: field,
    });
  });

  it('RecordFailure answers even for an event that is not an object', async () => {
    bed = createTestDeps(s3.client, sim);
    const result = await handlers().record('garbage');
    expect(result.failure.error).toBe('ScanFailed');
    expect(JSON.parse(result.failure.cause)).toMatchObject({ state: 'failed' });
  });

  it('DeleteScanAtVendor refuses an input without a scan uuid', async () => {
    bed = createTestDeps(s3.client, sim);
    await expect(handlers().remove({ domain: 'x.example.com' })).rejects.toMatchObject({
      name: 'InvalidInputError',
      input: 'scanUuid',
    });
  });
});
