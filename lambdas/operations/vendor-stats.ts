/**
 * The vendor's own counts (`GET /stats`) as metrics, read by the operations workflow's statistics
 * job on the reconciliation's schedule. The statistics are the organisation's, one read per run:
 *
 * - every numeric field as `VendorScanStatistic` with its dot path as the `statistic` dimension;
 * - the growth of its finished and failed counts since the previous read, as
 *   `VendorScansFinishedIncrease` and `VendorScansFailedIncrease`. The alarms compare those with the
 *   scans the pipeline itself recorded over the same day: the vendor finishing scans while we store
 *   none is a silent loss; the vendor failing scans we never saw fail is another.
 *
 * The previous read is kept in `operations/vendor-stats/latest.json`. A count that fell (scans
 * deleted at the vendor) is no growth: the increase is never negative. A run with no previous read
 * (the first, or the first after the snapshot moved here from the scan reconciliation's folder)
 * has nothing to compare with and publishes no increase.
 *
 * Each day's first read is also kept, never replaced, in `operations/vendor-stats/YYYY/MM/DD.json`:
 * the vendor's counts over time, for trends and for a dispute with the vendor about what it ran.
 * What is kept and published is the bounded numeric snapshot the reader makes of the answer (at
 * most MAX_STATISTICS numbers, none whose name or value holds a secret): never the vendor's text.
 */

import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import { cleanMessage, cleanName } from '#lambdas/platform/redaction/caught';
import { isItemError } from '#lambdas/platform/runs/reconcile-each';
import { getJsonIfExists, putJson } from '#lambdas/platform/s3/json-objects';
import { isPreconditionFailure } from '#lambdas/platform/s3/promote';
import type { MetricName } from '#lambdas/registry';
import { SCAN_METRIC } from '#lambdas/registry';
import { readVendorStatistics, type VendorStatistics } from '#lambdas/vendor-api/scan/scan-listing';
import type { StatusVocabulary } from '#lambdas/vendor-api/scan/types';
import { isRecord } from '#lambdas/vendor-api/transport/json';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { VENDOR_STATS_FOLDER } from './registry.ts';
import type { StatsFields } from './stats-fields.ts';

/** The previous read, which the next run's increases are measured from. */
export const VENDOR_STATS_LATEST_KEY = `${VENDOR_STATS_FOLDER}latest.json`;

/** The day's history object of a read at `readAt`: `operations/vendor-stats/YYYY/MM/DD.json` (UTC). */
export function vendorStatsHistoryKey(readAt: string): string {
  const [year, month, day] = readAt.slice(0, 10).split('-');
  return `${VENDOR_STATS_FOLDER}${year}/${month}/${day}.json`;
}

/** What the job keeps of one read, in latest.json and in the day's history object. */
export interface StatsSnapshot {
  readonly schemaVersion: 1;
  readonly readAt: string;
  readonly finished: number | null;
  readonly failed: number | null;
  /** The numeric fields, by dot path (at most MAX_STATISTICS). */
  readonly numbers: Readonly<Record<string, number>>;
  /** Fields left out: too many, too deep, unfit names, or names or values holding a secret. */
  readonly skipped: number;
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
  /** The day's history object; `kept` when an earlier read that day had already written it. */
  readonly history: { readonly key: string; readonly written: boolean } | null;
  /** Why the statistics could not be read or used; nothing is published or stored then. */
  readonly problem: { readonly name: string; readonly message: string } | null;
}

export interface VendorStatsDeps {
  readonly s3: S3Client;
  readonly settings: {
    readonly resultsBucket: string;
    readonly statusVocabulary: StatusVocabulary | undefined;
    readonly statsFields: StatsFields;
  };
  readonly metrics: PipelineMetrics<MetricName>;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  /** The scan client, or any reader of `GET /stats`. */
  readonly stats: { getStats(): Promise<{ raw: unknown }> };
}

export async function recordVendorStatistics(deps: VendorStatsDeps): Promise<VendorStatsOutcome> {
  const readAt = deps.clock().toISOString();
  const { statusVocabulary, statsFields } = deps.settings;
  let statistics: VendorStatistics;
  try {
    const { raw } = await deps.stats.getStats();
    statistics = readVendorStatistics(raw, statsFields, statusVocabulary);
  } catch (error) {
    // A vendor that refuses or garbles its statistics is recorded, and the next run reads again;
    // anything else (S3, a bug) fails the run into the dead-letter queue.
    if (!isItemError(error)) throw error;
    return unusable(deps, readAt, {
      name: cleanName((error as Error).name),
      message: cleanMessage((error as Error).message),
    });
  }
  if (statistics.unreadable !== undefined) {
    return unusable(deps, readAt, { name: 'VendorResponseError', message: statistics.unreadable });
  }
  for (const { name, value } of statistics.numbers) {
    deps.metrics.record(SCAN_METRIC.vendorStatistic, value, 'Count', { workflow: 'scan', statistic: name });
  }
  const previous = parseSnapshot(await getJsonIfExists(deps, VENDOR_STATS_LATEST_KEY));
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
    numbers: Object.fromEntries(statistics.numbers.map(({ name, value }) => [name, value])),
    skipped: statistics.skipped,
  };
  // The previous read first: a run that fails past here has published its growth and moved the
  // point the next growth is measured from, so no growth is published twice.
  await putJson(deps, VENDOR_STATS_LATEST_KEY, snapshot, 2);
  const history = { key: vendorStatsHistoryKey(readAt), written: await keepDay(deps, snapshot) };
  deps.logger.info('Vendor statistics recorded', {
    statistics: statistics.numbers.length,
    skipped: statistics.skipped,
    finishedIncrease,
    failedIncrease,
    historyKey: history.key,
    historyWritten: history.written,
  });
  return {
    readAt,
    numbers: snapshot.numbers,
    skipped: snapshot.skipped,
    finished: snapshot.finished,
    failed: snapshot.failed,
    finishedIncrease,
    failedIncrease,
    history,
    problem: null,
  };
}

/** Conditional writes of the day's object a conflict may take before the run fails. */
const DAY_WRITE_ATTEMPTS = 3;

/**
 * Writes the day's history object unless one exists: `If-None-Match: *`, so of two reads on one day
 * (a schedule more frequent than daily, a redelivered run) the first stays. False when it was kept.
 * S3 answers 412 when the key holds an object, and 409 when a concurrent write to it was under way,
 * which may yet fail: only the 412 proves a day's object exists, a 409 is tried again.
 */
async function keepDay(deps: VendorStatsDeps, snapshot: StatsSnapshot): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.s3.send(
        new PutObjectCommand({
          Bucket: deps.settings.resultsBucket,
          Key: vendorStatsHistoryKey(snapshot.readAt),
          Body: jsonText(snapshot, 2),
          ContentType: 'application/json',
          IfNoneMatch: '*',
        }),
      );
      return true;
    } catch (error) {
      if (!isPreconditionFailure(error)) throw error;
      if (!isWriteConflict(error)) return false;
      if (attempt >= DAY_WRITE_ATTEMPTS) throw error;
    }
  }
}

function isWriteConflict(error: unknown): boolean {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } };
  return e.name === 'ConditionalRequestConflict' || e.$metadata?.httpStatusCode === 409;
}

function unusable(
  deps: VendorStatsDeps,
  readAt: string,
  problem: { name: string; message: string },
): VendorStatsOutcome {
  deps.logger.warn('Vendor statistics could not be read; nothing published or stored', {
    errorName: problem.name,
    errorMessage: problem.message,
  });
  return {
    readAt,
    numbers: {},
    skipped: 0,
    finished: null,
    failed: null,
    finishedIncrease: null,
    failedIncrease: null,
    history: null,
    problem,
  };
}

/** The previous read's counts; a snapshot of an unknown version counts as none (no increase). */
function parseSnapshot(value: unknown): Pick<StatsSnapshot, 'finished' | 'failed'> | undefined {
  if (!isRecord(value) || value.schemaVersion !== 1) return undefined;
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return { finished: count(value.finished), failed: count(value.failed) };
}
