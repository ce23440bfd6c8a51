/**
 * What an interrupted list run prints: one line of counts however long the list, the unfinished
 * domains counted as `interrupted` (not `failed`) in summary.json, and named one by one only in
 * summary.txt. The list goes through the real PrepareDomainList and WriteListSummary handlers, each
 * domain's result as the runner records a stop (interruptedResult), without running the scans.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainScanResult, ListSummary } from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { createPrepareDomainListHandler } from '../../lambdas/domain-list/prepare-domain-list.ts';
import { createWriteListSummaryHandler } from '../../lambdas/domain-list/write-list-summary.ts';
import { describeInterrupted, NOT_STARTED, scanRunEnding } from '../../local/output/summary-table.ts';
import { interruptedResult } from '../../local/runner/pipeline.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { readJson } from '../kit/s3.ts';

let s3: S3rverFixture;
beforeEach(async () => {
  s3 = await startS3rver({ buckets: ['pipeline-input', 'pipeline-results'] });
});
afterEach(async () => {
  await s3.close();
});

/**
 * A list of `total` domains stopped after `finished` succeeded, with `inFlight` stopped mid-scan
 * and the rest never started; its summary as WriteListSummary writes it.
 */
async function stoppedRun(total: number, finished: number, inFlight: number): Promise<ListSummary> {
  const deps: ListDeps = {
    s3: s3.client,
    logger: createMemoryLogger(),
    settings: { inputBucket: 'pipeline-input', resultsBucket: 'pipeline-results' },
  };
  const domains = Array.from({ length: total }, (_, index) => `d${index + 1}.example.com`);
  await s3.client.send(
    new PutObjectCommand({ Bucket: 'pipeline-input', Key: 'incoming/big.txt', Body: domains.join('\n') }),
  );
  const prepared = await createPrepareDomainListHandler(deps)({
    source: { type: 's3', bucket: 'pipeline-input', key: 'incoming/big.txt', versionId: 'v1' },
  });
  const results: DomainScanResult[] = (
    await readJson<{ domain: string; executionName: string }[]>(
      s3.client,
      'pipeline-results',
      prepared.itemsKey,
    )
  ).map((item, index) => {
    if (index < finished) {
      const outputPrefix = `scans/${item.domain}/2026/01/01/00000000-0000-4000-8000-000000000000/`;
      return {
        ...item,
        outcome: {
          domain: item.domain,
          state: 'succeeded',
          scanUuid: undefined,
          outputPrefix,
          manifestKey: `${outputPrefix}manifest.json`,
          error: undefined,
        },
        error: undefined,
      };
    }
    return interruptedResult(
      item,
      index < finished + inFlight
        ? 'stopped mid-scan by SIGINT: the vendor may have run it'
        : `${NOT_STARTED}: the run was stopped by SIGINT`,
    );
  });
  const { summaryKey } = await createWriteListSummaryHandler(deps)({ ...prepared, results });
  return readJson<ListSummary>(s3.client, 'pipeline-results', summaryKey);
}

describe('an interrupted list run', () => {
  it('of 2,000 domains prints a few lines (one of counts), counts them as interrupted, and names each only in summary.txt', async () => {
    const summary = await stoppedRun(2000, 6, 2);

    expect(summary.counts).toMatchObject({ succeeded: 6, interrupted: 1994, failed: 0 });
    expect(describeInterrupted(summary)).toBe('1,992 not started, 2 in flight stopped');
    const ending = scanRunEnding(summary, 'compact', {});
    expect(ending.printed.trim().split('\n').length).toBeLessThanOrEqual(3);
    expect(ending.printed).toContain('1994 interrupted');
    expect(ending.printed).not.toContain('Interrupted');
    expect(ending.table.match(/\binterrupted {2}Interrupted: /g)).toHaveLength(1994);
  });

  it('of 30 domains in verbose mode prints the rows that finished, and keeps every row in summary.txt', async () => {
    const summary = await stoppedRun(30, 8, 3);

    const ending = scanRunEnding(summary, 'verbose', {});
    expect(ending.printed.match(/ succeeded /g)).toHaveLength(8);
    expect(ending.printed).not.toContain('Interrupted');
    expect(ending.printed).toContain(
      '30 line(s): 8 succeeded, 0 failed, 0 timed out, 0 rejected, 22 interrupted',
    );
    expect(ending.table.match(/Interrupted: /g)).toHaveLength(22);
  });
});
