/**
 * `scan.reconciliation`: when scan reconciliation runs and how it reads the vendor's list, and
 * where the operations workflow's statistics job, on the same schedule, finds the vendor's counts.
 * The settings the functions themselves check come from `#lambdas/scan/reconcile-settings` and
 * `#lambdas/operations/stats-fields` (one schema each for synth and cold start); this section adds
 * the schedule and the switch, and states times in minutes. Its own file (not in schema.ts, which imports it); `section` comes from `#lambdas/platform/input/schema` for that reason.
 */
import * as z from 'zod/mini';
import { statsFieldsSchema } from '#lambdas/operations/stats-fields';
import { boundedNumber, section } from '#lambdas/platform/input/schema';
import {
  listFieldsSchema,
  MIN_AGE_MARGIN_SECONDS,
  minAgeFitsHorizon,
  RECONCILIATION_BOUNDS,
  RECONCILIATION_DEFAULTS,
  type ReconcileSettings,
} from '#lambdas/scan/reconcile-settings';
import { expressionSetting } from './schedule-expression.ts';

const minutes = (bounds: { min: number; max: number }) =>
  boundedNumber({ min: bounds.min / 60, max: bounds.max / 60, integer: true });

export const scanReconciliationSchema = section({
  /** Run scan reconciliation, and the statistics job that reads the vendor's counts. @default true */
  enabled: z._default(z.boolean({ error: 'must be true or false' }), true),
  /** When both run (EventBridge Scheduler). @default 'rate(1 day)' */
  schedule: expressionSetting('rate(1 day)'),
  /**
   * Scans the vendor created longer ago are ignored.
   * @default 7, or two days past the minimum age when that is longer (a week-long poll deadline)
   */
  horizonDays: z.optional(boundedNumber(RECONCILIATION_BOUNDS.horizonDays)),
  /**
   * A scan younger than this may still be in a workflow's hands and is left for a later run.
   * @default the poll deadline (poll.deadlineSeconds) plus 60 minutes
   */
  minAgeMinutes: z.optional(minutes(RECONCILIATION_BOUNDS.minAgeSeconds)),
  /** A ScanRejected start recorded this close to an orphan's creation is linked to it. @default 30 */
  matchWindowMinutes: z._default(
    minutes(RECONCILIATION_BOUNDS.matchWindowSeconds),
    RECONCILIATION_DEFAULTS.matchWindowSeconds / 60,
  ),
  /** Orphans archived per run (each is three streamed outputs); the rest wait for the next run. @default 25 */
  maxArchivesPerRun: z._default(
    boundedNumber(RECONCILIATION_BOUNDS.maxArchivesPerRun),
    RECONCILIATION_DEFAULTS.maxArchivesPerRun,
  ),
  /** Dot paths into `GET /scans`; each left out is searched among common names. */
  listFields: z._default(listFieldsSchema, () => ({})),
  /** Dot paths into `GET /stats` of the vendor's finished and failed counts (the statistics job's). */
  statsFields: z._default(statsFieldsSchema, () => ({})),
});

export type ScanReconciliationConfig = z.output<typeof scanReconciliationSchema>;

/**
 * What the function reads from `SCAN_RECONCILIATION`: this section in seconds, the minimum age
 * defaulted from the poll deadline, and `scan.deleteAtVendorAfterManifest`.
 */
export function reconcileFunctionSettings(
  reconciliation: ScanReconciliationConfig,
  context: { readonly deadlineSeconds: number; readonly deleteAtVendorAfterManifest: boolean },
): ReconcileSettings {
  const minAgeSeconds =
    reconciliation.minAgeMinutes === undefined
      ? context.deadlineSeconds + MIN_AGE_MARGIN_SECONDS
      : reconciliation.minAgeMinutes * 60;
  return {
    horizonDays:
      reconciliation.horizonDays ??
      Math.min(
        RECONCILIATION_BOUNDS.horizonDays.max,
        Math.max(RECONCILIATION_DEFAULTS.horizonDays, Math.ceil(minAgeSeconds / 86_400) + 2),
      ),
    minAgeSeconds,
    matchWindowSeconds: reconciliation.matchWindowMinutes * 60,
    maxArchivesPerRun: reconciliation.maxArchivesPerRun,
    deleteAtVendor: context.deleteAtVendorAfterManifest,
    listFields: reconciliation.listFields,
  };
}

/** Why the minimum age and the horizon cannot work together, or undefined. */
export function reconciliationWindowProblem(settings: ReconcileSettings): string | undefined {
  return !minAgeFitsHorizon(settings)
    ? `must be longer than the minimum age of ${Math.ceil(settings.minAgeSeconds / 3600)} h (scan.reconciliation.minAgeMinutes, by default the poll deadline plus an hour), or no scan is ever both old enough and inside it (got ${settings.horizonDays} days)`
    : undefined;
}
