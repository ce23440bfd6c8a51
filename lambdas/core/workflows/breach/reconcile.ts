/**
 * Breach reconciliation: every report the vendor lists (`GET /view_breaches`) that has no verified
 * archive in S3 is archived now, the same way the workflow archives one. That covers a recon whose
 * answer was lost (ReconOutcomeUnknownError), a run that failed before or during its archive, and an
 * archive that failed verification. A second run finds everything archived and stores nothing new
 * except its own record.
 */
import { ArchiveVerificationError, VendorError } from '#core/errors';
import { putJson } from '#core/s3/json-objects';
import { cleanMessage, cleanName } from '#core/workflows/caught';
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
  readonly unreadable: readonly { readonly index: number | null; readonly reason: string }[];
}

export interface ReconcileResult {
  readonly recordKey: string;
  readonly counts: ReconciliationRecord['counts'];
}

export async function reconcileReports(deps: BreachDeps): Promise<ReconcileResult> {
  const startedAt = deps.clock();
  const listing = await deps.breachClient.listReports();
  const archived: string[] = [];
  const failed: ReconciliationRecord['failed'][number][] = [];
  let alreadyArchived = 0;
  // One at a time: a backlog of reports must not turn into a burst the vendor throttles.
  for (const { name } of listing.reports) {
    const folder = reportFolder(name);
    try {
      const result = await archiveReport(deps, name, { origin: 'reconciled' });
      if (result.alreadyArchived) alreadyArchived += 1;
      else archived.push(folder);
    } catch (error) {
      // One report that cannot be archived (gone at the vendor, a corrupt ZIP) must not stop the rest.
      if (
        !(error instanceof VendorError) &&
        !(error instanceof ArchiveVerificationError) &&
        !isInputError(error)
      ) {
        throw error;
      }
      failed.push({
        folder,
        error: { name: cleanName((error as Error).name), message: cleanMessage((error as Error).message) },
      });
    }
  }
  const finishedAt = deps.clock();
  const record: ReconciliationRecord = {
    schemaVersion: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    listed: listing.reports.length,
    counts: {
      alreadyArchived,
      archived: archived.length,
      failed: failed.length,
      unreadable: listing.unreadable.length,
    },
    archived,
    failed,
    unreadable: listing.unreadable,
  };
  const stamp = startedAt.toISOString();
  const recordKey = `${BREACH_PREFIX}reconciliation/${stamp.slice(0, 10).replace(/-/g, '/')}/${stamp.replace(/[:.]/g, '-')}.json`;
  await putJson(deps, recordKey, record, 2);
  const level = failed.length > 0 || listing.unreadable.length > 0 ? 'warn' : 'info';
  deps.logger[level]('Breach reconciliation finished', {
    recordKey,
    listed: record.listed,
    ...record.counts,
  });
  return { recordKey, counts: record.counts };
}

function isInputError(error: unknown): boolean {
  return (error as { name?: unknown } | undefined)?.name === 'InvalidInputError';
}
