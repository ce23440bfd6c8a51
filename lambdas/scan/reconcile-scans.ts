/**
 * Scan reconciliation: no scan the vendor ran is left unarchived.
 *
 * Every scan `GET /scans` lists that is inside the horizon, old enough that no workflow can still
 * be working on it (`minAgeSeconds`: the poll deadline plus an hour by default), and has no
 * manifest under its uuid, is asked for its status. One that succeeded is archived with the
 * workflow's own steps: the three fetches (same streaming, digests and reuse of verified objects)
 * and WriteManifest, marked `"origin": "reconciled"`; then DeleteScanAtVendor when
 * `scan.deleteAtVendorAfterManifest` is on. That covers a start whose answer was lost
 * (ScanRejected), a workflow stopped or timed out before the vendor finished, and a scan started by
 * hand in the vendor's console.
 *
 * An orphan is linked to the failure records of the same scan: its own folder's (a timeout, a
 * failed fetch), and a ScanRejected start of the same domain within the match window.
 *
 * Idempotent: a second run finds the manifests and stores nothing new but its own record.
 */

import { cleanMessage, cleanName } from '#lambdas/platform/redaction/caught';
import { forEachBounded } from '#lambdas/platform/runs/bounded';
import {
  type ItemFailure,
  labelsOf,
  reconcileEach,
  timeReserveReached,
  writeRunRecord,
} from '#lambdas/platform/runs/reconcile-each';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { type DomainArchive, indexDomainArchive } from '#lambdas/scan/archive-index';
import type { ScanInProgress, StoredObject } from '#lambdas/scan/contracts';
import { deleteScanAtVendor } from '#lambdas/scan/delete-scan';
import {
  linkFailureRecord,
  matchRejectedStart,
  type RejectedStart,
  readRejectedStarts,
} from '#lambdas/scan/failure-links';
import { fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { scanOutputPrefix } from '#lambdas/scan/output-prefix';
import { toSnapshot } from '#lambdas/scan/poll-scan-status';
import { type ScanReconcileDeps, scanReconcileDepsFromEnvironment } from '#lambdas/scan/reconcile-deps';
import { SCAN_OUTPUTS } from '#lambdas/scan/scan-outputs';
import { MANIFEST_FILE, writeScanManifest } from '#lambdas/scan/write-scan-manifest';
import { readScanListingText } from '#lambdas/vendor-api/scan/listing-text';
import { type ListedScan, readScanListing } from '#lambdas/vendor-api/scan/scan-listing';
import type { UnreadableEntry } from '#lambdas/vendor-api/transport/json';

type Outcome = 'alreadyArchived' | 'archived' | 'unfinished' | 'vendorFailed' | 'deferred';

export interface ArchivedOrphan {
  readonly scanUuid: string;
  readonly domain: string;
  readonly manifestKey: string;
  readonly linkedFailureKeys: readonly string[];
  /** False when `deleteAtVendor` is off; the error when the delete failed (the scan stays archived). */
  readonly deletedAtVendor: boolean | { readonly name: string; readonly message: string };
}

export interface ScanReconciliationRecord {
  readonly schemaVersion: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly horizonStart: string;
  readonly counts: {
    readonly listed: number;
    readonly beyondHorizon: number;
    readonly tooRecent: number;
    readonly alreadyArchived: number;
    readonly archived: number;
    readonly unfinished: number;
    readonly vendorFailed: number;
    readonly deferred: number;
    readonly failed: number;
    readonly unreadable: number;
    readonly linkedFailures: number;
  };
  readonly archived: readonly ArchivedOrphan[];
  /** Scans the vendor reports failed that the archive has no manifest for (by uuid). */
  readonly vendorFailed: readonly string[];
  readonly deferred: readonly string[];
  readonly failed: readonly ItemFailure[];
  /** The first 100 unusable entries of the listing, each with why; `counts.unreadable` counts them all. */
  readonly unreadable: readonly UnreadableEntry[];
}

export interface ScanReconcileResult {
  readonly recordKey: string;
  readonly counts: ScanReconciliationRecord['counts'];
}

const DAY_MS = 86_400_000;

export interface ReconcileRunOptions {
  /** Milliseconds left in the invocation (Lambda's context). @default unlimited */
  readonly timeLeftMs?: () => number;
}

/**
 * S3 listings in flight while the archive is indexed: S3 serves thousands of LIST requests a
 * second per prefix, and each domain is its own prefix; 32 keep a Lambda's sockets and memory
 * modest while a 100,000-domain index takes about 100,000 x 28.7 ms / 32 = 90 s.
 */
export const INDEX_CONCURRENCY = 32;

export async function reconcileScans(
  deps: ScanReconcileDeps,
  options: ReconcileRunOptions = {},
): Promise<ScanReconcileResult> {
  const startedAt = deps.clock();
  const settings = deps.reconcile;
  const listing = deps.inventory.listScansText
    ? readScanListingText(
        (await deps.inventory.listScansText()).text,
        settings.listFields,
        deps.settings.statusVocabulary,
      )
    : readScanListing(
        (await deps.inventory.listScans()).raw,
        settings.listFields,
        deps.settings.statusVocabulary,
      );
  const horizonStart = new Date(startedAt.getTime() - settings.horizonDays * DAY_MS);
  const settledBefore = startedAt.getTime() - settings.minAgeSeconds * 1000;
  let beyondHorizon = 0;
  let tooRecent = 0;
  const candidates: ListedScan[] = [];
  for (const scan of listing.scans) {
    const created = scan.createdAt?.getTime();
    if (created !== undefined && created < horizonStart.getTime()) beyondHorizon += 1;
    else if (created !== undefined && created > settledBefore) tooRecent += 1;
    else candidates.push(scan);
  }

  // A scan without a creation time may have a manifest older than the horizon: its domain is
  // listed whole.
  const timeless = new Set(
    candidates.filter((scan) => scan.createdAt === undefined).map((scan) => scan.domain),
  );
  const archives = new Map<string, Promise<DomainArchive>>();
  const archiveOf = (domain: string): Promise<DomainArchive> => {
    let archive = archives.get(domain);
    if (archive === undefined) {
      archive = indexDomainArchive(deps, domain, timeless.has(domain) ? undefined : horizonStart);
      archives.set(domain, archive);
    }
    return archive;
  };
  const rejections = new Map<string, Promise<RejectedStart[]>>();
  const rejectedStartsOf = (domain: string): Promise<RejectedStart[]> => {
    let starts = rejections.get(domain);
    if (starts === undefined) {
      starts = archiveOf(domain).then((archive) => readRejectedStarts(deps, archive.rejected));
      rejections.set(domain, starts);
    }
    return starts;
  };
  const takenRejections = new Set<string>();
  const archived: ArchivedOrphan[] = [];

  // Each domain's archive is one S3 listing. One after another, they were most of a run at S3's
  // per-request latency (28.7 ms a domain: a 100,000-domain list needed 2,900 s of a 900 s limit),
  // so they are made up front, INDEX_CONCURRENCY at a time, until the time reserve; a domain not
  // indexed by then is deferred to the next run rather than listed late.
  const indexed = new Set<string>();
  await forEachBounded(
    [...new Set(candidates.map((scan) => scan.domain))],
    INDEX_CONCURRENCY,
    async (domain) => {
      if (timeReserveReached(options.timeLeftMs)) return;
      await archiveOf(domain);
      indexed.add(domain);
    },
  );

  const result = await reconcileEach<ListedScan, Outcome>({
    items: candidates,
    label: (scan) => scan.uuid,
    budget: {
      maxPerRun: settings.maxArchivesPerRun,
      ...(options.timeLeftMs ? { timeLeftMs: options.timeLeftMs } : {}),
    },
    reconcileOne: async (scan, gate) => {
      if (!indexed.has(scan.domain) && gate.exhausted()) return 'deferred';
      const folder = (await archiveOf(scan.domain)).folders.get(scan.uuid);
      if (folder?.manifestKey !== undefined) return 'alreadyArchived';
      // A scan the listing already calls failed needs no status call: there is nothing to fetch.
      if (scan.state === 'failed') return 'vendorFailed';
      // The budget: archives per run, and time enough left in the invocation to finish one. A
      // status call is cheap and spends nothing; an archive started does, even one that fails.
      if (gate.exhausted()) return 'deferred';
      const status = toSnapshot(await deps.scanClient.getStatus(scan.uuid));
      if (status.state === 'failed') return 'vendorFailed';
      if (status.state !== 'succeeded') return 'unfinished';
      gate.spend();

      const now = deps.clock();
      const createdAt = scan.createdAt ?? now;
      const outputPrefix = folder?.prefix ?? scanOutputPrefix(scan.domain, createdAt, scan.uuid);
      const state: ScanInProgress = {
        domain: scan.domain,
        runId: reconciliationRunId(startedAt),
        scanUuid: scan.uuid,
        outputPrefix,
        poll: {
          attempt: 1,
          nextWaitSeconds: 0,
          waitedSeconds: 0,
          startedAt: createdAt.toISOString(),
          deadlineExceeded: false,
        },
        status,
      };
      const stored: StoredObject[] = [];
      for (const { name } of SCAN_OUTPUTS)
        stored.push(await fetchScanOutput(deps, { ...state, output: name }));

      const manifestKey = `${outputPrefix}${MANIFEST_FILE}`;
      const rejected = matchRejectedStart(
        await rejectedStartsOf(scan.domain),
        scan.uuid,
        scan.createdAt,
        settings.matchWindowSeconds * 1000,
        takenRejections,
      );
      const linkedFailureKeys: string[] = [];
      // Each record is read again as it is linked: the decision rests on what is stored now.
      for (const key of [folder?.failureKey, rejected?.key]) {
        if (key === undefined) continue;
        const link = { scanUuid: scan.uuid, manifestKey, linkedAt: now.toISOString() };
        const linked = await linkFailureRecord(deps, key, link);
        if (linked === 'linked' || linked === 'already-linked') linkedFailureKeys.push(key);
      }
      if (rejected !== undefined) takenRejections.add(rejected.key);
      await writeScanManifest(
        deps,
        { ...state, stored },
        { reconciledAt: now.toISOString(), linkedFailureKeys },
      );
      archived.push({
        scanUuid: scan.uuid,
        domain: scan.domain,
        manifestKey,
        linkedFailureKeys,
        deletedAtVendor: settings.deleteAtVendor ? await deleteOrphan(deps, scan) : false,
      });
      return 'archived';
    },
  });

  const record: ScanReconciliationRecord = {
    schemaVersion: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: deps.clock().toISOString(),
    horizonStart: horizonStart.toISOString(),
    counts: {
      listed: listing.entries,
      beyondHorizon,
      tooRecent,
      alreadyArchived: labelsOf(result, 'alreadyArchived').length,
      archived: archived.length,
      unfinished: labelsOf(result, 'unfinished').length,
      vendorFailed: labelsOf(result, 'vendorFailed').length,
      deferred: labelsOf(result, 'deferred').length,
      failed: result.failed.length,
      unreadable: listing.unreadableCount,
      linkedFailures: archived.reduce((sum, orphan) => sum + orphan.linkedFailureKeys.length, 0),
    },
    archived,
    vendorFailed: labelsOf(result, 'vendorFailed'),
    deferred: labelsOf(result, 'deferred'),
    failed: result.failed,
    unreadable: listing.unreadable,
  };
  const recordKey = await writeRunRecord(deps, {
    folder: 'scans/reconciliation/',
    startedAt,
    record,
    counts: record.counts,
    what: 'Scan reconciliation',
  });
  return { recordKey, counts: record.counts };
}

/** The workflow never fails a scan over its delete; neither does reconciliation. */
async function deleteOrphan(
  deps: ScanReconcileDeps,
  scan: ListedScan,
): Promise<true | { name: string; message: string }> {
  try {
    await deleteScanAtVendor(deps, { scanUuid: scan.uuid, domain: scan.domain });
    return true;
  } catch (error) {
    deps.logger.warn('Reconciled scan could not be deleted at the vendor', {
      domain: scan.domain,
      scanUuid: scan.uuid,
      errorName: (error as Error).name,
    });
    return { name: cleanName((error as Error).name), message: cleanMessage((error as Error).message) };
  }
}

/** The run id in a reconciled manifest: which reconciliation run wrote it. */
export function reconciliationRunId(startedAt: Date): string {
  return `reconciliation-${startedAt.toISOString().replace(/[-:]|\.\d+/g, '')}`;
}

/** Scheduled: archive every finished scan the vendor lists that has no manifest. */
export function createReconcileScansHandler(deps: ScanReconcileDeps): Handler<unknown, ScanReconcileResult> {
  // The schedule's input carries nothing the run needs: what to do comes from the vendor's list.
  // Lambda's clock decides when to stop starting archives; the next run takes the rest.
  return async (_event, context) => {
    const timeLeftMs = context?.getRemainingTimeInMillis?.bind(context);
    return reconcileScans(deps, timeLeftMs ? { timeLeftMs } : {});
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => scanReconcileDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createReconcileScansHandler,
});
