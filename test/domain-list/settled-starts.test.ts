/**
 * The run summary's line for starts whose answer was lost: counted from the outcomes in
 * summary.json (settledStart, or a ScanStartUnresolvedError rejection) and printed with the totals.
 */
import { describe, expect, it } from 'vitest';
import type { DomainScanResult } from '#lambdas/domain-list/contracts';
import { buildListSummary } from '#lambdas/domain-list/write-list-summary';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { formatTotals } from '../../local/output/summary-table.ts';

function result(
  domain: string,
  outcome: Partial<ScanOutcome> & Pick<ScanOutcome, 'state'>,
): DomainScanResult {
  return {
    domain,
    executionName: domain,
    outcome: {
      domain,
      scanUuid: undefined,
      outputPrefix: undefined,
      manifestKey: undefined,
      error: undefined,
      ...outcome,
    },
    error: undefined,
  };
}

function summaryOf(results: DomainScanResult[]) {
  return buildListSummary({
    runId: 'r',
    source: { type: 'adhoc', requestId: 'r', inlineDomains: 0 },
    startedAt: undefined,
    finishedAt: '2026-11-24T00:00:00Z',
    lines: results.length,
    ignored: 0,
    items: results.map((r, i) => ({
      domain: r.domain,
      executionName: r.executionName,
      runId: 'r',
      line: i + 1,
    })),
    rejects: { invalid: [], duplicates: [] },
    results,
  });
}

describe('settled starts in the run summary', () => {
  it('counts adopted, started-again and unresolved starts, and marks each domain', () => {
    // Prepare
    const results = [
      result('a.example.com', { state: 'succeeded', settledStart: 'adopted' }),
      result('b.example.com', { state: 'succeeded', settledStart: 'retried' }),
      result('c.example.com', { state: 'succeeded' }),
      result('d.example.com', {
        state: 'rejected',
        error: { name: 'ScanStartUnresolvedError', message: 'scan.startScan: ... 2 scans of this domain' },
      }),
      result('e.example.com', { state: 'rejected', error: { name: 'InvalidInputError', message: 'domain' } }),
    ];

    // Act
    const summary = summaryOf(results);

    // Assess
    expect(summary.settledStarts).toEqual({ adopted: 1, retried: 1, unresolved: 1 });
    expect(summary.domains.map((d) => d.settledStart)).toEqual([
      'adopted',
      'retried',
      undefined,
      'unresolved',
      undefined,
    ]);
    expect(formatTotals(summary)).toContain(
      "Starts whose answer was lost, settled from the vendor's listing: 1 adopted, 1 started again, 1 unresolved",
    );
  });

  it('says nothing about settling when every start answered', () => {
    // Act
    const summary = summaryOf([result('a.example.com', { state: 'succeeded' })]);

    // Assess
    expect(summary).not.toHaveProperty('settledStarts');
    expect(formatTotals(summary)).not.toContain('settled');
  });
});
