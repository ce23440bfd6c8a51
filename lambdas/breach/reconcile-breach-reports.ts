/**
 * Breach reconciliation: every report the vendor lists (`GET /view_breaches`) that has no verified
 * archive in S3 is archived now, the same way the workflow archives one. That covers a recon whose
 * answer was lost (ReconOutcomeUnknownError), a run that failed before or during its archive, and an
 * archive that failed verification. A second run finds everything archived and stores nothing new
 * except its own record.
 *
 * A run archives as many reports as its time allows: ARCHIVE_CONCURRENCY at once, none started with
 * less than the time reserve left in the invocation (`reconcileEach`'s budget, the same reserve scan
 * reconciliation keeps), and no more than `maxArchivesPerRun`. What is left is found again by the
 * next run's listing. The archive is read with one listing of `breach/reports/`, never an object per
 * listed report, so a list of thousands costs a few requests. Before an archive starts, a marker is
 * written in the report's folder; a report with a marker and no manifest was tried before and
 * failed or was cut off (a timeout ends the invocation mid-archive), so it is tried after every
 * report never tried, the longest-waiting first: one bad report never holds up the rest.
 */
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { ARCHIVE_MANIFEST_FILE, archiveReport } from '#lambdas/breach/archive-breach-report';
import { BREACH_PREFIX } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import {
  BREACH_RECONCILE_DEFAULTS,
  type BreachReconcileSettings,
  breachReconcileSettingsFromEnv,
} from '#lambdas/breach/reconcile-settings';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import { labelsOf, reconcileEach, writeRunRecord } from '#lambdas/platform/runs/reconcile-each';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import type { UnreadableEntry } from '#lambdas/vendor-api/transport/json';

/** Written in a report's folder before reconciliation archives it; removed once it is archived. */
export const ATTEMPT_FILE = 'reconcile-attempt.json';
const REPORTS_PREFIX = `${BREACH_PREFIX}reports/`;

export interface ReconciliationRecord {
  readonly schemaVersion: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Reports the vendor listed. */
  readonly listed: number;
  readonly counts: {
    readonly alreadyArchived: number;
    readonly archived: number;
    readonly deferred: number;
    readonly failed: number;
    readonly unreadable: number;
  };
  /** Report folders archived by this run (the report name may hold a person's name: folders only). */
  readonly archived: readonly string[];
  /** Report folders left for a later run by the budget. */
  readonly deferred: readonly string[];
  readonly failed: readonly { readonly folder: string; readonly error: { name: string; message: string } }[];
  /** What in the vendor's list could not be understood, by position. */
  readonly unreadable: readonly UnreadableEntry[];
}

export interface ReconcileResult {
  readonly recordKey: string;
  readonly counts: ReconciliationRecord['counts'];
}

export interface BreachReconcileOptions {
  /** @default BREACH_RECONCILE_DEFAULTS */
  readonly settings?: Partial<BreachReconcileSettings>;
  /** Milliseconds left in the invocation (Lambda's context). @default unlimited */
  readonly timeLeftMs?: () => number;
}

/**
 * Reports archived at once. The vendor documents no rate limit (its API description says "Limits: not shown"),
 * so a backlog is never turned into a burst: four downloads at a time, each retried on 429 after
 * its Retry-After like every vendor call. Four streamed archives (about 24 MiB of upload buffers
 * each) fit the function's 1,024 MB, and four overlap S3's 10-30 ms per request enough that a run
 * is bounded by its budget, not by latency.
 */
export const ARCHIVE_CONCURRENCY = 4;

interface FolderState {
  manifest: boolean;
  /** When an earlier run last started archiving it (the marker's LastModified). */
  attemptedAt?: number;
}

export async function reconcileReports(
  deps: BreachDeps,
  options: BreachReconcileOptions = {},
): Promise<ReconcileResult> {
  const startedAt = deps.clock();
  const settings = { ...BREACH_RECONCILE_DEFAULTS, ...options.settings };
  const listing = await deps.breachClient.listReports();
  const folders = await indexReportFolders(deps);
  const namingKey = await deps.reportNamingKey();
  const listed = listing.reports.map((report, index) => ({
    ...report,
    index,
    folder: reportFolder(report.name, namingKey),
  }));
  // Never tried first, in the vendor's order; then the ones tried before, the longest-waiting first.
  const ordered = [...listed].sort((a, b) => {
    const at = folders.get(a.folder)?.attemptedAt ?? -1;
    const bt = folders.get(b.folder)?.attemptedAt ?? -1;
    return at - bt || a.index - b.index;
  });
  const bucket = deps.settings.resultsBucket;
  const result = await reconcileEach({
    items: ordered,
    label: ({ folder }) => folder,
    concurrency: ARCHIVE_CONCURRENCY,
    budget: {
      maxPerRun: settings.maxArchivesPerRun,
      ...(options.timeLeftMs ? { timeLeftMs: options.timeLeftMs } : {}),
    },
    reconcileOne: async ({ name, folder }, gate) => {
      if (folders.get(folder)?.manifest) return 'alreadyArchived';
      if (!gate.take()) return 'deferred';
      await deps.s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `${folder}${ATTEMPT_FILE}`,
          Body: JSON.stringify({ attemptedAt: deps.clock().toISOString() }),
          ContentType: 'application/json',
        }),
      );
      const summary = await archiveReport(deps, name, { origin: 'reconciled' });
      await deps.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${folder}${ATTEMPT_FILE}` }));
      return summary.alreadyArchived ? 'alreadyArchived' : 'archived';
    },
  });
  const archived = labelsOf(result, 'archived');
  const deferred = labelsOf(result, 'deferred');
  const record: ReconciliationRecord = {
    schemaVersion: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: deps.clock().toISOString(),
    listed: listing.reports.length,
    counts: {
      alreadyArchived: labelsOf(result, 'alreadyArchived').length,
      archived: archived.length,
      deferred: deferred.length,
      failed: result.failed.length,
      unreadable: listing.unreadable.length,
    },
    archived,
    deferred,
    failed: result.failed.map(({ item, error }) => ({ folder: item, error })),
    unreadable: listing.unreadable,
  };
  const recordKey = await writeRunRecord(deps, {
    folder: `${BREACH_PREFIX}reconciliation/`,
    startedAt,
    record,
    counts: { listed: record.listed, ...record.counts },
    what: 'Breach reconciliation',
  });
  return { recordKey, counts: record.counts };
}

/** Which report folders hold a manifest or an attempt marker: one paged listing for the whole archive. */
async function indexReportFolders(deps: BreachDeps): Promise<Map<string, FolderState>> {
  const folders = new Map<string, FolderState>();
  let token: string | undefined;
  do {
    const page = await deps.s3.send(
      new ListObjectsV2Command({
        Bucket: deps.settings.resultsBucket,
        Prefix: REPORTS_PREFIX,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of page.Contents ?? []) {
      const key = object.Key ?? '';
      const slash = key.indexOf('/', REPORTS_PREFIX.length);
      if (slash < 0) continue;
      const folder = key.slice(0, slash + 1);
      const file = key.slice(slash + 1);
      const state = folders.get(folder) ?? { manifest: false };
      if (file === ARCHIVE_MANIFEST_FILE) state.manifest = true;
      if (file === ATTEMPT_FILE) state.attemptedAt = object.LastModified?.getTime() ?? 0;
      folders.set(folder, state);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return folders;
}

/** Scheduled: archive every report the vendor lists that has no verified archive yet. */
export type BreachReconcileDeps = BreachDeps & { readonly reconcile?: BreachReconcileSettings };

export function createReconcileBreachReportsHandler(
  deps: BreachReconcileDeps,
): Handler<unknown, ReconcileResult> {
  // The schedule's input carries nothing the run needs: what to do comes from the vendor's list.
  // Lambda's clock decides when to stop starting archives; the next run takes the rest.
  return async (_event, context) => {
    const timeLeftMs = context?.getRemainingTimeInMillis?.bind(context);
    return reconcileReports(deps, {
      ...(deps.reconcile ? { settings: deps.reconcile } : {}),
      ...(timeLeftMs ? { timeLeftMs } : {}),
    });
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools): BreachReconcileDeps => ({
    ...breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
    reconcile: breachReconcileSettingsFromEnv(process.env),
  }),
  handler: createReconcileBreachReportsHandler,
});
