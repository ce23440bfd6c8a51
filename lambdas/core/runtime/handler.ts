/**
 * The vendor-free half of the scan steps' wiring: deps, lazy handler and the environment factory of
 * the steps that only write S3 (manifest, failure record).
 *
 * Nothing here may import the vendor clients: a handler bundles what this module imports, and the
 * S3-only functions must not carry an HTTP client they never call (see bench/bundles.ts).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv } from '#core/runtime/env';
import { createServiceLogger } from '#core/runtime/logger';
import { type ScanSettings, scanSettingsFromEnv } from '#core/runtime/settings';
import type { ScanApi, ScanDeps, ScanLogger } from '#core/scan/deps';

export interface CreateScanDepsOptions {
  readonly s3: S3Client;
  readonly scanClient: ScanApi;
  readonly settings: ScanSettings;
  /** @default a Powertools Logger with service name `scan-workflow` */
  readonly logger?: ScanLogger;
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

export function createScanDeps(options: CreateScanDepsOptions): ScanDeps {
  return {
    s3: options.s3,
    scanClient: options.scanClient,
    settings: options.settings,
    logger: options.logger ?? createServiceLogger('scan-workflow').logger,
    clock: options.clock ?? (() => new Date()),
  };
}

/** Stands in for the vendor client in functions that are deliberately given no vendor access. */
export const NO_VENDOR_ACCESS: ScanApi = new Proxy({} as ScanApi, {
  get(_target, operation) {
    return async () => {
      throw new ConfigurationError(
        'SCAN_API_URL',
        `this function has no vendor access by design (it called scan.${String(operation)})`,
      );
    };
  },
});

export interface StorageDepsOptions {
  readonly s3?: S3Client;
  /** The vendor client; functions without vendor access get one that fails loudly. */
  readonly scanClient?: (settings: ScanSettings, logger: ScanLogger) => ScanApi;
}

/**
 * Deps for the steps that write S3 only: RESULTS_BUCKET, the POLL_* and SCAN_DEADLINE_SECONDS
 * settings, STATUS_VOCABULARY and POWERTOOLS_SERVICE_NAME. No vendor URL and no secret is read.
 */
export function storageScanDepsFromEnvironment(
  env: Env = process.env,
  options: StorageDepsOptions = {},
): ScanDeps {
  const settings = scanSettingsFromEnv(env);
  const { logger } = createServiceLogger(
    optionalEnv(env, 'POWERTOOLS_SERVICE_NAME') ?? 'scan-workflow',
    optionalEnv(env, 'POWERTOOLS_LOG_LEVEL'),
  );
  const scanClient = options.scanClient?.(settings, logger) ?? NO_VENDOR_ACCESS;
  return createScanDeps({ s3: options.s3 ?? new S3Client({}), scanClient, settings, logger });
}

/** The part of the Lambda context the handlers use; the local runner may pass nothing. */
export interface InvocationContext {
  readonly awsRequestId?: string;
}

export type ScanHandler<TEvent, TResult> = (event: TEvent, context?: InvocationContext) => Promise<TResult>;

/**
 * A Lambda entry point that builds its deps on first use and keeps them for the life of the
 * execution environment. A configuration error is not cached: every invocation reports it (naming
 * the variable) until the configuration is fixed.
 */
export function createLazyHandler<TEvent, TResult>(
  factory: (deps: ScanDeps) => ScanHandler<TEvent, TResult>,
  buildDeps: () => ScanDeps,
): ScanHandler<TEvent, TResult> {
  let handler: ScanHandler<TEvent, TResult> | undefined;
  return async (event, context) => {
    handler ??= factory(buildDeps());
    return handler(event, context);
  };
}
