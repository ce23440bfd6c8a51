/**
 * The deps of scan reconciliation, from the Lambda environment: the vendor-calling scan deps
 * (`scanDepsFromEnvironment`), whose scan client also lists scans, plus the
 * reconciliation settings from `SCAN_RECONCILIATION`, checked with the schema synth uses.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { parseReconcileSettings, type ReconcileSettings } from '#lambdas/scan/reconcile-settings';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import { type ScanDepsFromEnvironmentOptions, scanDepsFromEnvironment } from './vendor-deps.ts';

/** What reconciliation needs of the vendor beyond the workflow's calls. */
export interface ScanInventoryApi {
  listScans(): Promise<{ raw: unknown }>;
  /**
   * The listing's text, unparsed, when the client can give it: reconciliation then reads it one
   * entry at a time (listing-text.ts), in memory proportional to what it keeps.
   */
  listScansText?(): Promise<{ readonly text: string }>;
}

export type ScanReconcileDeps = ScanDeps & {
  readonly inventory: ScanInventoryApi;
  readonly reconcile: ReconcileSettings;
};

export function scanReconcileDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: ScanDepsFromEnvironmentOptions = {},
): ScanReconcileDeps {
  const deps = scanDepsFromEnvironment(env, tools, options);
  const reconcile = parseReconcileSettings(
    optionalEnv(env, SCAN_VARIABLES.reconciliation),
    SCAN_VARIABLES.reconciliation,
  );
  return { ...deps, inventory: inventoryOf(deps.scanClient), reconcile };
}

/** The scan client as the listing reader it also is. */
export function inventoryOf(client: ScanApi): ScanInventoryApi {
  const candidate = client as Partial<ScanInventoryApi>;
  if (typeof candidate.listScans !== 'function') {
    throw new ConfigurationError(
      vendorApiVariables('scan').url,
      'names a scan client that cannot list scans',
    );
  }
  return candidate as ScanInventoryApi;
}
