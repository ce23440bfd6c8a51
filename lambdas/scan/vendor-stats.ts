/**
 * The vendor's own counts (`GET /stats`) as metrics, read on the reconciliation schedule:
 *
 * - every numeric field as `VendorScanStatistic` with its dot path as the `statistic` dimension;
 * - the growth of its finished and failed counts since the previous read, as
 *   `VendorScansFinishedIncrease` and `VendorScansFailedIncrease`. The alarms compare those with the
 *   scans the pipeline itself recorded over the same day: the vendor finishing scans while we store
 *   none is a silent loss; the vendor failing scans we never saw fail is another.
 *
 * The previous read is kept in `scans/reconciliation/vendor-stats.json`. A count that fell (scans
 * deleted at the vendor) is no growth: the increase is never negative. The first read has nothing
 * to compare with and publishes no increase.
 */

import type { S3Client } from '@aws-sdk/client-s3';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import { cleanMessage, cleanName } from '#lambdas/platform/redaction/caught';
import { isItemError } from '#lambdas/platform/runs/reconcile-each';
import { getJsonIfExists, putJson } from '#lambdas/platform/s3/json-objects';
import type { MetricName } from '#lambdas/registry';
import { SCAN_METRIC } from '#lambdas/registry';
import { readVendorStatistics, type VendorStatistics } from '#lambdas/vendor-api/scan/scan-listing';
import type { StatusVocabulary } from '#lambdas/vendor-api/scan/types';
import { isRecord } from '#lambdas/vendor-api/transport/json';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import type { StatsFields } from './reconcile-settings.ts';

export const VENDOR_STATS_KEY = 'scans/reconciliation/vendor-stats.json';

export interface StatsSnapshot {
  readonly schemaVersion: 1;
  readonly readAt: string;
  readonly finished: number | null;
  readonly failed: number | null;
}

export interface VendorStatsOutcome {
  readonly readAt: string;
  /** The numeric fields published, by dot path. */
  readonly numbers: Readonly<Record<string, number>>;
  readonly skipped: number;
  readonly finished: number | null;
  readonly failed: number | null;
  /** Growth since the previous read; null when there was none to compare with. */
  readonly finishedIncrease: number | null;
  readonly failedIncrease: number | null;
  /** Why the statistics could not be read or used; the run goes on without them. */
  readonly problem: { readonly name: string; readonly message: string } | null;
}

export interface StatsDeps {
  readonly s3: S3Client;
  readonly settings: {
    readonly resultsBucket: string;
    readonly statusVocabulary: StatusVocabulary | undefined;
  };
  readonly metrics: PipelineMetrics<MetricName>;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  readonly stats: { getStats(): Promise<{ raw: unknown }> };
}

export async function publishVendorStatistics(
  deps: StatsDeps,
  fields: StatsFields,
): Promise<VendorStatsOutcome> {
  const readAt = deps.clock().toISOString();
  let statistics: VendorStatistics;
  try {
    const { raw } = await deps.stats.getStats();
    statistics = readVendorStatistics(raw, fields, deps.settings.statusVocabulary);
  } catch (error) {
    // The statistics are an outside view, not the job: a vendor that refuses them is recorded.
    if (!isItemError(error)) throw error;
    return unusable(readAt, {
      name: cleanName((error as Error).name),
      message: cleanMessage((error as Error).message),
    });
  }
  if (statistics.unreadable !== undefined) {
    return unusable(readAt, { name: 'VendorResponseError', message: statistics.unreadable });
  }
  for (const { name, value } of statistics.numbers) {
    deps.metrics.record(SCAN_METRIC.vendorStatistic, value, 'Count', { workflow: 'scan', statistic: name });
  }
  const previous = parseSnapshot(await getJsonIfExists(deps, VENDOR_STATS_KEY));
  const increase = (now: number | undefined, before: number | null | undefined) =>
    now === undefined || before === null || before === undefined ? null : Math.max(0, now - before);
  const finishedIncrease = increase(statistics.finished, previous?.finished);
  const failedIncrease = increase(statistics.failed, previous?.failed);
  if (finishedIncrease !== null) {
    deps.metrics.record(SCAN_METRIC.vendorFinishedIncrease, finishedIncrease, 'Count', { workflow: 'scan' });
  }
  if (failedIncrease !== null) {
    deps.metrics.record(SCAN_METRIC.vendorFailedIncrease, failedIncrease, 'Count', { workflow: 'scan' });
  }
  if (statistics.finished === undefined || statistics.failed === undefined) {
    deps.logger.warn(
      'Vendor statistics carry no count of finished or failed scans; set scan.reconciliation.statsFields',
      {
        finishedFound: statistics.finished !== undefined,
        failedFound: statistics.failed !== undefined,
      },
    );
  }
  const snapshot: StatsSnapshot = {
    schemaVersion: 1,
    readAt,
    finished: statistics.finished ?? null,
    failed: statistics.failed ?? null,
  };
  await putJson(deps, VENDOR_STATS_KEY, snapshot, 2);
  return {
    readAt,
    numbers: Object.fromEntries(statistics.numbers.map(({ name, value }) => [name, value])),
    skipped: statistics.skipped,
    finished: snapshot.finished,
    failed: snapshot.failed,
    finishedIncrease,
    failedIncrease,
    problem: null,
  };
}

function unusable(readAt: string, problem: { name: string; message: string }): VendorStatsOutcome {
  return {
    readAt,
    numbers: {},
    skipped: 0,
    finished: null,
    failed: null,
    finishedIncrease: null,
    failedIncrease: null,
    problem,
  };
}

function parseSnapshot(value: unknown): StatsSnapshot | undefined {
  if (!isRecord(value) || value.schemaVersion !== 1) return undefined;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    schemaVersion: 1,
    readAt: typeof value.readAt === 'string' ? value.readAt : '',
    finished: count(value.finished),
    failed: count(value.failed),
  };
}
