/**
 * What the scan workflow steps need from the outside world. The Lambda handlers build it from the
 * environment (`#core/runtime/deps`); the local runner and the tests build it with loopback clients.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { ScanStatus, StartScanResult, VendorDownload } from '#lambdas/platform/vendor-api/types';
import type { ScanSettings, StartSettleSettings } from '#lambdas/scan/settings';

/**
 * The part of the vendor's `ScanClient` the workflow uses. Declared structurally so that a fake (or a
 * client for another vendor) can stand in, and so the steps do not depend on the client's internals.
 */
export interface ScanApi {
  startScan(domain: string): Promise<StartScanResult>;
  getStatus(scanUuid: string): Promise<ScanStatus>;
  getReport(scanUuid: string): Promise<VendorDownload>;
  getLogs(scanUuid: string): Promise<VendorDownload>;
  getDebug(scanUuid: string): Promise<VendorDownload>;
  deleteScan(scanUuid: string): Promise<unknown>;
  /** `GET /scans`: StartScan reads it to settle a start whose answer was lost. */
  listScans(): Promise<{ readonly raw: unknown }>;
}

export interface ScanDeps {
  readonly s3: S3Client;
  readonly scanClient: ScanApi;
  readonly logger: PipelineLogger;
  readonly settings: ScanSettings;
  /** Scans started, finished and stored bytes (docs/contracts.md "Metrics"). */
  readonly metrics: PipelineMetrics;
  /** Injected so tests can drive deadlines and dates. */
  readonly clock: () => Date;
  /** How StartScan settles a start whose answer was lost. @default DEFAULT_START_SETTLE */
  readonly startSettle?: Partial<StartSettleSettings>;
  /** The settle waits; injected so tests and the local runner do not wait in real time. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Jitter of the settle backoff. @default Math.random */
  readonly random?: () => number;
}

/**
 * The same deps with a logger that adds `keys` (domain, scan uuid) to every line. The shared logger
 * is never mutated, so concurrent invocations in one process do not mix their keys.
 */
export function withLogKeys(deps: ScanDeps, keys: Record<string, string | undefined>): ScanDeps {
  const defined = Object.fromEntries(Object.entries(keys).filter(([, value]) => value !== undefined));
  const base = deps.logger;
  if (typeof base.createChild === 'function') {
    const child = base.createChild();
    if (typeof child.appendKeys === 'function') {
      child.appendKeys(defined);
      return { ...deps, logger: child };
    }
  }
  const withKeys =
    (log: (message: string, ...extra: Record<string, unknown>[]) => void) =>
    (message: string, ...extra: Record<string, unknown>[]) =>
      log.call(base, message, Object.assign({}, defined, ...extra));
  return {
    ...deps,
    logger: {
      debug: withKeys(base.debug),
      info: withKeys(base.info),
      warn: withKeys(base.warn),
      error: withKeys(base.error),
    },
  };
}
