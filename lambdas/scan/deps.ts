/**
 * What the scan workflow steps need from the outside world. The Lambda handlers build it from the
 * environment (below, and vendor-deps.ts); the local runner and the tests build it with loopback clients.
 *
 * The vendor-calling steps' wiring (the scan client and its HTTP stack) stays in vendor-deps.ts:
 * a handler bundles what this module imports, and the S3-only steps (manifest, failure record)
 * must not carry an HTTP client they never call (test/platform/handler-bundles.test.ts).
 */

import type { S3Client } from '@aws-sdk/client-s3';
import { NO_METRICS, type PipelineMetrics } from '#lambdas/platform/metrics';
import type { Env } from '#lambdas/platform/runtime/env';
import { type PipelineLogger, pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { NO_S3_ACCESS, noAccess } from '#lambdas/platform/runtime/no-access';
import { type Observability, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { MetricName } from '#lambdas/registry';
import type { ScanOutput } from '#lambdas/scan/scan-outputs';
import { type ScanSettings, type StartSettleSettings, scanSettingsFromEnv } from '#lambdas/scan/settings';
import type { StartThrottleSettings } from '#lambdas/scan/start-throttle';
import type { ScanStatus, StartScanResult } from '#lambdas/vendor-api/scan/types';
import type { VendorDownload } from '#lambdas/vendor-api/transport/types';

/**
 * The part of the vendor's `ScanClient` the workflow uses. Declared structurally so that a fake (or a
 * client for another vendor) can stand in, and so the steps do not depend on the client's internals.
 */
export interface ScanApi {
  startScan(domain: string): Promise<StartScanResult>;
  getStatus(scanUuid: string): Promise<ScanStatus>;
  /**
   * One output, by its row of scan-outputs.ts. `maxBytes`: the output is cut past this many decoded
   * bytes (`scan.maxOutputBytes`); `maxDecodingRatio`: cut once it decodes to more than that many
   * times the bytes received (`scan.maxDecodingRatio`).
   */
  getOutput(
    output: ScanOutput,
    scanUuid: string,
    options?: { readonly maxBytes?: number; readonly maxDecodingRatio?: number },
  ): Promise<VendorDownload>;
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
  readonly metrics: PipelineMetrics<MetricName>;
  /** Injected so tests can drive deadlines and dates. */
  readonly clock: () => Date;
  /** How StartScan settles a start whose answer was lost. @default DEFAULT_START_SETTLE */
  readonly startSettle?: Partial<StartSettleSettings>;
  /** The settle waits; injected so tests and the local runner do not wait in real time. @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Jitter of the settle backoff and of the throttle wait. @default Math.random */
  readonly random?: () => number;
  /** How long a throttled start is waited out by the state machine. @default DEFAULT_START_THROTTLE */
  readonly startThrottle?: StartThrottleSettings;
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

// ---------------------------------------------------------------------------------------------
// The vendor-free wiring: `createScanDeps` (ready-made clients: the local runner and the tests) and
// the environment factory of the steps that only write S3. Nothing here may import a vendor client.
// ---------------------------------------------------------------------------------------------

export interface CreateScanDepsOptions {
  readonly s3: S3Client;
  readonly scanClient: ScanApi;
  readonly settings: ScanSettings;
  readonly logger: PipelineLogger;
  /** @default NO_METRICS (records nothing) */
  readonly metrics?: PipelineMetrics<MetricName>;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** See ScanDeps. */
  readonly startSettle?: ScanDeps['startSettle'];
  readonly sleep?: ScanDeps['sleep'];
}

export function createScanDeps(options: CreateScanDepsOptions): ScanDeps {
  return {
    s3: options.s3,
    scanClient: options.scanClient,
    settings: options.settings,
    logger: options.logger,
    metrics: options.metrics ?? NO_METRICS,
    clock: options.clock ?? (() => new Date()),
    ...(options.startSettle === undefined ? {} : { startSettle: options.startSettle }),
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  };
}

/** Stands in for the vendor client in functions that are deliberately given no vendor access. */
export const NO_VENDOR_ACCESS: ScanApi = noAccess<ScanApi>(
  vendorApiVariables('scan').url,
  'scan',
  'this function has no vendor access by design',
);

export interface StorageDepsOptions {
  /**
   * The S3 client, for functions that read or write objects (`tracedS3Client`, or one bound to the
   * embedded S3 server in tests). @default NO_S3_ACCESS
   */
  readonly s3?: S3Client;
  /** The vendor client; functions without vendor access get one that fails loudly. */
  readonly scanClient?: (
    settings: ScanSettings,
    logger: PipelineLogger,
    metrics: PipelineMetrics<MetricName>,
  ) => ScanApi;
}

/**
 * Deps for the steps that write S3 only: RESULTS_BUCKET, the POLL_* and SCAN_DEADLINE_SECONDS
 * settings, STATUS_VOCABULARY and ALLOW_SPECIAL_USE_DOMAINS. No vendor URL and no secret is read.
 * Logs, metrics and traces go through the function's Powertools utilities.
 */
export function storageScanDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: StorageDepsOptions = {},
): ScanDeps {
  const settings = scanSettingsFromEnv(env);
  const logger = pipelineLoggerFromPowertools(tools.logger);
  const metrics = powertoolsMetrics(tools.metrics);
  const scanClient = options.scanClient?.(settings, logger, metrics) ?? NO_VENDOR_ACCESS;
  const s3 = options.s3 ?? NO_S3_ACCESS;
  return createScanDeps({ s3, scanClient, settings, logger, metrics });
}
