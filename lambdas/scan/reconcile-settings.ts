/**
 * Settings of scan reconciliation, as one schema: the configuration (`scan.reconciliation`) is
 * checked with it at synth, and the function checks its `SCAN_RECONCILIATION` variable with it at
 * cold start, so a local run, a synth and a deployed function refuse the same things.
 */
import * as z from 'zod/mini';
import { ConfigurationError } from '#lambdas/platform/errors';
import { boundedNumber, dotPath, parseJsonVariable, strictBoolean } from '#lambdas/platform/input/schema';

/**
 * Where `GET /scans` keeps what reconciliation needs. Its shape is "not shown" in the seed: each
 * path left out is searched among common names (see `#lambdas/vendor-api/scan/scan-listing`).
 */
export const listFieldsSchema = z.strictObject({
  /** The array of scans, e.g. `data.scans`. @default scans, items, data, results or the body itself */
  list: dotPath(),
  /** Within one scan. @default uuid, scan_uuid, id */
  uuid: dotPath(),
  /** @default domain, target, host, hostname */
  domain: dotPath(),
  /** @default status, state, scan_status, phase */
  status: dotPath(),
  /** When the vendor created the scan (ISO text or epoch seconds/ms). @default created_at, createdAt, created, started_at */
  createdAt: dotPath(),
});

export const RECONCILIATION_BOUNDS = {
  horizonDays: { min: 1, max: 90, integer: true },
  minAgeSeconds: { min: 0, max: 8 * 86_400, integer: true },
  matchWindowSeconds: { min: 60, max: 86_400, integer: true },
  maxArchivesPerRun: { min: 1, max: 500, integer: true },
} as const;

export const RECONCILIATION_DEFAULTS = {
  horizonDays: 7,
  matchWindowSeconds: 30 * 60,
  maxArchivesPerRun: 25,
} as const;

/** How long after the poll deadline a workflow may still be fetching and writing its manifest. */
export const MIN_AGE_MARGIN_SECONDS = 3600;

/** What the function reads from `SCAN_RECONCILIATION`. */
export const reconcileSettingsSchema = z
  .strictObject({
    /** Scans the vendor created longer ago than this are left alone. @default 7 */
    horizonDays: z._default(
      boundedNumber(RECONCILIATION_BOUNDS.horizonDays),
      RECONCILIATION_DEFAULTS.horizonDays,
    ),
    /**
     * A scan younger than this may still be in a workflow's hands (polling, fetching), so it is not
     * reconciled yet. The configuration's default is the poll deadline plus an hour.
     */
    minAgeSeconds: boundedNumber(RECONCILIATION_BOUNDS.minAgeSeconds),
    /** A ScanRejected failure recorded within this many seconds of an orphan's creation is linked to it. @default 1800 */
    matchWindowSeconds: z._default(
      boundedNumber(RECONCILIATION_BOUNDS.matchWindowSeconds),
      RECONCILIATION_DEFAULTS.matchWindowSeconds,
    ),
    /** Orphans archived per run; the rest wait for the next run. @default 25 */
    maxArchivesPerRun: z._default(
      boundedNumber(RECONCILIATION_BOUNDS.maxArchivesPerRun),
      RECONCILIATION_DEFAULTS.maxArchivesPerRun,
    ),
    /** `scan.deleteAtVendorAfterManifest`: delete an orphan at the vendor once its manifest is written. */
    deleteAtVendor: z._default(strictBoolean(), false),
    listFields: z._default(listFieldsSchema, () => ({})),
  })
  .check(
    z.superRefine((settings, context) => {
      if (!minAgeFitsHorizon(settings)) {
        context.addIssue({
          code: 'custom',
          path: ['minAgeSeconds'],
          message: `must be below the horizon of ${settings.horizonDays} days, or no scan would ever be old enough and still inside it`,
        });
      }
    }),
  );

export type ReconcileSettings = z.output<typeof reconcileSettingsSchema>;

/** Some scan can be both old enough and inside the horizon (the one cross-field rule). */
export function minAgeFitsHorizon(settings: {
  readonly minAgeSeconds: number;
  readonly horizonDays: number;
}): boolean {
  return settings.minAgeSeconds < settings.horizonDays * 86_400;
}
export type ReconcileSettingsInput = z.input<typeof reconcileSettingsSchema>;
export type ListFields = ReconcileSettings['listFields'];

/** The listing's field paths from a variable's JSON; the error names the variable and the path. */
export function parseListFields(json: string, variable: string): ListFields {
  return parseJsonVariable(json, variable, listFieldsSchema);
}

/** The settings from their JSON variable; a problem names the variable and the field. */
export function parseReconcileSettings(json: string | undefined, variable: string): ReconcileSettings {
  if (json === undefined) throw new ConfigurationError(variable, 'is required but not set');
  return parseJsonVariable(json, variable, reconcileSettingsSchema);
}
