/**
 * Breach reconciliation: every report the vendor lists (`GET /view_breaches`) that has no verified
 * archive in S3 is archived now, the same way the workflow archives one. That covers a recon whose
 * answer was lost (ReconOutcomeUnknownError), a run that failed before or during its archive, and an
 * archive that failed verification. A second run finds everything archived and stores nothing new
 * except its own record.
 */
import type { UnreadableEntry } from '#core/vendor/json';
import { labelsOf, reconcileEach, writeReconciliationRecord } from '#core/workflows/reconciliation';
import { archiveReport } from './archive.ts';
import type { BreachDeps } from './deps.ts';
import { BREACH_PREFIX, reportFolder } from './identity.ts';

export interface ReconciliationRecord {
  readonly schemaVersion: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Reports the vendor listed. */
  readonly listed: number;
  readonly counts: {
    readonly alreadyArchived: number;
    readonly archived: number;
    readonly failed: number;
    readonly unreadable: number;
  };
  /** Report folders archived by this run (the report name may hold a person's name: folders only). */
  readonly archived: readonly string[];
  readonly failed: readonly { readonly folder: string; readonly error: { name: string; message: string } }[];
  /** What in the vendor's list could not be understood, by position. */
  readonly unreadable: readonly UnreadableEntry[];
}

export interface ReconcileResult {
  readonly recordKey: string;
  readonly counts: ReconciliationRecord['counts'];
}

export async function reconcileReports(deps: BreachDeps): Promise<ReconcileResult> {
  const startedAt = deps.clock();
  const listing = await deps.breachClient.listReports();
  const result = await reconcileEach({
    items: listing.reports,
    label: ({ name }) => reportFolder(name),
    reconcileOne: async ({ name }) =>
      (await archiveReport(deps, name, { origin: 'reconciled' })).alreadyArchived
        ? 'alreadyArchived'
        : 'archived',
  });
  const archived = labelsOf(result, 'archived');
  const record: ReconciliationRecord = {
    schemaVersion: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: deps.clock().toISOString(),
    listed: listing.reports.length,
    counts: {
      alreadyArchived: labelsOf(result, 'alreadyArchived').length,
      archived: archived.length,
      failed: result.failed.length,
      unreadable: listing.unreadable.length,
    },
    archived,
    failed: result.failed.map(({ item, error }) => ({ folder: item, error })),
    unreadable: listing.unreadable,
  };
  const recordKey = await writeReconciliationRecord(deps, {
    prefix: BREACH_PREFIX,
    startedAt,
    record,
    counts: { listed: record.listed, ...record.counts },
    what: 'Breach reconciliation',
  });
  return { recordKey, counts: record.counts };
}
