/**
 * The vendor-free half of the scan steps' wiring: `createScanDeps` (ready-made clients: the local
 * runner and the tests) and the environment factory of the steps that only write S3 (manifest,
 * failure record).
 *
 * Nothing here may import the vendor clients: a handler bundles what this module imports, and the
 * S3-only functions must not carry an HTTP client they never call (see bench/bundles.ts).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { NO_METRICS, type PipelineMetrics } from '#lambdas/platform/metrics';
import type { Env } from '#lambdas/platform/runtime/env';
import { type PipelineLogger, pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { NO_S3_ACCESS, noAccess } from '#lambdas/platform/runtime/no-access';
import { type Observability, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { type ScanSettings, scanSettingsFromEnv } from '#lambdas/scan/settings';

export interface CreateScanDepsOptions {
  readonly s3: S3Client;
  readonly scanClient: ScanApi;
  readonly settings: ScanSettings;
  readonly logger: PipelineLogger;
  /** @default NO_METRICS (records nothing) */
  readonly metrics?: PipelineMetrics;
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
  ENV.scanApiUrl,
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
  readonly scanClient?: (settings: ScanSettings, logger: PipelineLogger, metrics: PipelineMetrics) => ScanApi;
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
