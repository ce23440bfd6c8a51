/**
 * Vendor text holding a line separator or a bidirectional override, kept in a stored record and a
 * run's handler log: the JSON holds each as its `\uXXXX` escape (the same value, but `cat` shows
 * it as written instead of reversing or breaking the line), and the domain-list totals count the
 * invalid and the duplicate lines they list apart.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import type { ScanApi } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import { recordScanFailure } from '#lambdas/scan/record-scan-failure';
import { createScanSettings } from '#lambdas/scan/settings';
import { createFileLogger } from '../../local/output/run-files.ts';
import { formatTotals } from '../../local/output/summary-table.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { readObject } from '../kit/s3.ts';
import { manualClock, RESULTS_BUCKET } from './fixture.ts';

const UUID = '0b4c8a1e-7d2f-4c3b-9a8e-1f2d3c4b5a69';
const PREFIX = `scans/example.com/2026/11/20/${UUID}/`;
/** Every character that acts instead of showing: line and paragraph separators, bidi controls. */
const INVISIBLE = [
  0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069,
].map((code) => String.fromCharCode(code));
const RAW = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const VENDOR_TEXT = `scan refused: ${INVISIBLE.join('x')} exe.txt`;

let s3: S3rverFixture;
let folder: string;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  folder = await mkdtemp(join(tmpdir(), 'invisible-'));
});
afterAll(async () => {
  await s3.close();
  await rm(folder, { recursive: true, force: true });
});

describe('line separators and bidi controls in vendor text', () => {
  it('are escaped in failure.json, which still parses to the same message', async () => {
    const deps = createScanDeps({
      s3: s3.client,
      scanClient: {} as ScanApi,
      logger: createMemoryLogger(),
      clock: manualClock(new Date('2026-11-21T08:00:00.000Z')),
      settings: createScanSettings({ resultsBucket: RESULTS_BUCKET, poll: { deadlineSeconds: 3600 } }),
    });

    await recordScanFailure(deps, {
      domain: 'example.com',
      runId: 'run-1',
      scanUuid: UUID,
      outputPrefix: PREFIX,
      failure: { error: 'PollFailed' },
      caught: { Error: 'VendorResponseError', Cause: JSON.stringify({ errorMessage: VENDOR_TEXT }) },
    });

    const stored = (await readObject(s3.client, RESULTS_BUCKET, `${PREFIX}failure.json`)).toString('utf8');
    expect(stored).not.toMatch(RAW);
    expect(stored).toContain('\\u202e');
    expect(JSON.stringify(JSON.parse(stored))).toMatch(RAW);
  });

  it('are escaped in handler-log.jsonl, one line per entry', async () => {
    const logs = createFileLogger('info', () => []);
    const path = join(folder, 'handler-log.jsonl');
    logs.attach(path);

    logs.logger.warn('vendor answer', { text: VENDOR_TEXT });
    await logs.close(process.stderr);

    const text = await readFile(path, 'utf8');
    expect(text).not.toMatch(RAW);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(text).text).toBe(VENDOR_TEXT);
  });

  it('jsonText gives the same JSON value with every such character escaped', () => {
    for (const char of INVISIBLE) {
      const value = { [`k${char}`]: [`a${char}b`] };
      const text = jsonText(value, 2);
      expect(text).not.toMatch(RAW);
      expect(JSON.parse(text)).toEqual(value);
    }
  });
});

describe('the domain-list totals of a sampled run', () => {
  it('count the invalid and the duplicate lines listed apart', () => {
    const duplicates = Array.from({ length: 1000 }, (_, index) => ({
      domain: 'example.com',
      line: index + 3,
      state: 'duplicate' as const,
      duplicateOf: 1,
      outputPrefix: undefined,
      manifestKey: undefined,
      error: undefined,
    }));
    const summary = {
      runId: 'r',
      source: { type: 'inline', inlineDomains: 1 },
      startedAt: undefined,
      finishedAt: '2026-11-21T08:00:00.000Z',
      counts: {
        lines: 1502,
        ignored: 0,
        succeeded: 1,
        failed: 0,
        timed_out: 0,
        rejected: 0,
        invalid: 1,
        duplicate: 1500,
      },
      domains: duplicates,
      invalid: [{ line: 2, text: 'not a domain', reason: 'not a domain name' }],
      sampled: true,
    } as unknown as ListSummary;

    const totals = formatTotals(summary);

    expect(totals).toContain('Only the first 1 of 1 invalid and 1000 of 1500 duplicate lines are listed');
  });
});
