/**
 * The scale bench's reconciliation and archive cases (bench/scale-worker.ts runs them): what each
 * reads is set up first, at loopback speed or straight on the embedded S3's disk, and the step then
 * runs through the real S3 API with the bench's latency injected.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { archiveReport } from '#lambdas/breach/archive-breach-report';
import { createBreachSettings } from '#lambdas/breach/deps';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { NO_METRICS } from '#lambdas/platform/metrics';
import { forEachBounded } from '#lambdas/platform/runs/bounded';
import { readOriginsEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { createScanDeps } from '#lambdas/scan/deps';
import { scanOutputPrefix } from '#lambdas/scan/output-prefix';
import { reconcileScans } from '#lambdas/scan/reconcile-scans';
import { reconcileSettingsSchema } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { MANIFEST_FILE } from '#lambdas/scan/write-scan-manifest';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { readScanListing } from '#lambdas/vendor-api/scan/scan-listing';

/** The bench's report naming key (a deployed stack keeps its own in Secrets Manager). */
const BENCH_REPORT_NAMING_KEY = 'bench-report-naming-key-0123456789abcdef-01';
/** A scheduled reconciliation's timeout (lib/platform/scheduled-catch-up.ts): its clock here. */
const RECONCILE_TIMEOUT_MS = 900_000;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export interface CaseContext {
  readonly size: number;
  readonly bucket: string;
  /** The client with the injected latency, that the step uses. */
  readonly s3: S3Client;
  /** Where the embedded S3 keeps the bucket's files (bench/scale.ts passes it). */
  readonly s3Directory: string;
}

/** One scheduled run, as Lambda's clock would see it: RECONCILE_TIMEOUT_MS from its start. */
function invocationClock(): () => number {
  const started = Date.now();
  return () => RECONCILE_TIMEOUT_MS - (Date.now() - started);
}

function benchBreachDeps(s3: S3Client, bucket: string) {
  const client = new BreachClient({
    baseUrl: process.env.BREACH_API_URL ?? '',
    allowedOrigins: readOriginsEnv(process.env, ENV.vendorAllowedOrigins),
    credentials: async () => process.env.VENDOR_API_KEY ?? '',
  });
  return {
    s3,
    breachClient: client,
    logger: quiet,
    settings: createBreachSettings({ resultsBucket: bucket }),
    metrics: NO_METRICS,
    clock: () => new Date(),
    reportNamingKey: async () => BENCH_REPORT_NAMING_KEY,
  };
}

/** The report names bench/scale.ts has the simulator list for a breach case of `size`. */
export function benchReportNames(size: number): string[] {
  return Array.from({ length: size }, (_, i) => `person-${i}_20261120T100000Z_s${size}`);
}

export interface ReconcileRun {
  readonly seconds: number;
  readonly archived: number;
  readonly deferred: number;
  readonly failed: number;
}

/**
 * A backlog of `size` reports, none archived: daily runs, each with a whole invocation's time, until
 * a run leaves nothing. Each run's time and archives are what the drain rate in the docs rests on.
 * BENCH_BREACH_DRAIN_RUNS=N measures the first N runs only (a full 10,000-report drain is ten runs of
 * minutes each); the row then says how many runs were measured and what was left.
 */
export function breachBacklogDrain({
  size,
  bucket,
  s3,
}: CaseContext): () => Promise<{ runs: ReconcileRun[] }> {
  const deps = benchBreachDeps(s3, bucket);
  const measuredRuns = Number(process.env.BENCH_BREACH_DRAIN_RUNS ?? Number.POSITIVE_INFINITY);
  return async () => {
    const runs: ReconcileRun[] = [];
    while (runs.length < measuredRuns) {
      const started = performance.now();
      const { counts } = await reconcileReports(deps, { timeLeftMs: invocationClock() });
      runs.push({ seconds: (performance.now() - started) / 1000, ...counts });
      if (counts.deferred === 0) break;
      if (counts.archived === 0) throw new Error(`a run archived nothing with ${counts.deferred} left`);
    }
    const archived = runs.reduce((sum, run) => sum + run.archived, 0);
    const left = runs.at(-1)?.deferred ?? size;
    if (archived + left !== size) throw new Error(`${archived} archived and ${left} left of ${size} reports`);
    return { runs };
  };
}

/** The whole ArchiveReport step for one report the simulator serves (a ZIP of `size` entries). */
export function archiveOneReport({ size, bucket, s3 }: CaseContext): () => Promise<unknown> {
  const deps = benchBreachDeps(s3, bucket);
  const [name] = benchReportNames(1);
  return async () => {
    const summary = await archiveReport(deps, name ?? '', { origin: 'reconciled' });
    if (summary.alreadyArchived) throw new Error('the report was archived before the step ran');
    if (summary.entryCount !== size) throw new Error(`${summary.entryCount} entries archived, not ${size}`);
    return summary;
  };
}

/**
 * An object in s3rver's file layout (lib/stores/filesystem.js): `<bucket>/<key>._S3rver_object`,
 * its MD5 beside it and its metadata as JSON. Writing them directly seeds 100,000 objects in
 * seconds, where PUTs through the HTTP API took about 20 minutes; reads still go through the API.
 */
async function seedOnDisk(directory: string, bucket: string, key: string, body: string): Promise<void> {
  const parts = key.split('/');
  const file = parts.pop() ?? '';
  const folder = join(directory, bucket, ...parts);
  await mkdir(folder, { recursive: true });
  const base = join(folder, `${file}._S3rver_object`);
  await writeFile(base, body);
  await writeFile(`${base}.md5`, createHash('md5').update(body).digest('hex'));
  await writeFile(join(folder, `${file}._S3rver_metadata.json`), '{"content-type":"application/json"}');
}

/**
 * The vendor (a simulator of this measurement's own) lists `size` finished scans, seeded by
 * bench/scale-vendors.ts; all but the last 30 are archived already, as on an ordinary day.
 */
export async function scanReconcile({
  size,
  bucket,
  s3,
  s3Directory,
}: CaseContext): Promise<() => Promise<unknown>> {
  const client = new ScanClient({
    baseUrl: process.env.SCAN_API_URL ?? '',
    credentials: async () => process.env.VENDOR_API_KEY ?? '',
  });
  // The vendor's scans were seeded in-process by bench/scale.ts (bench/scale-vendors.ts).
  const settings = createScanSettings({ resultsBucket: bucket });
  const reconcile = reconcileSettingsSchema.parse({ minAgeSeconds: 0 });
  const listed = readScanListing(
    (await client.listScans()).raw,
    reconcile.listFields,
    settings.statusVocabulary,
  );
  if (listed.scans.length !== size)
    throw new Error(`the vendor lists ${listed.scans.length} scans, not ${size}`);
  await forEachBounded(listed.scans.slice(0, -30), 16, async (scan) => {
    const prefix = scanOutputPrefix(scan.domain, scan.createdAt ?? new Date(), scan.uuid);
    await seedOnDisk(s3Directory, bucket, `${prefix}${MANIFEST_FILE}`, '{}');
  });
  const deps = {
    ...createScanDeps({ s3, scanClient: client, logger: quiet, metrics: NO_METRICS, settings }),
    inventory: client,
    reconcile,
  };
  return async () => (await reconcileScans(deps, { timeLeftMs: invocationClock() })).counts;
}
