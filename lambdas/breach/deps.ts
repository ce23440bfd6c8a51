/**
 * What the breach steps need from the outside world. Handlers build it from the environment
 * (below, and vendor-deps.ts); the local runner and the tests build it with loopback clients.
 *
 * The vendor-calling steps' wiring (the breach client and its HTTP stack) stays in vendor-deps.ts:
 * a handler bundles what this module imports, and the S3-only steps (manifest, failure record)
 * must not carry an HTTP client they never call (test/platform/handler-bundles.test.ts).
 */

import type { S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_MAX_EMAILS, MAX_EMAILS_LIMIT, maxEmailsFromEnv } from '#lambdas/breach/contracts';
import { type BreachLimits, breachLimits, breachLimitsFromEnv } from '#lambdas/breach/limits';
import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { ConfigurationError } from '#lambdas/platform/errors';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { ThrottleWaitSettings } from '#lambdas/platform/runs/throttle-wait';
import { type Env, readBucketEnv } from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { NO_S3_ACCESS, noAccess } from '#lambdas/platform/runtime/no-access';
import { type Observability, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import type { UploadSettings } from '#lambdas/platform/runtime/settings';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { DEFAULT_PART_SIZE_BYTES, DEFAULT_QUEUE_SIZE } from '#lambdas/platform/s3/stream-upload';
import type { MetricName } from '#lambdas/registry';
import type { BreachReportList } from '#lambdas/vendor-api/breach/breach-client';
import type { ReconRequest, ReconResult } from '#lambdas/vendor-api/breach/types';
import type { VendorDownload, VendorLogger } from '#lambdas/vendor-api/transport/types';

/** The part of the vendor's `BreachClient` the workflow uses. */
export interface BreachApi {
  recon(request: ReconRequest): Promise<ReconResult>;
  listReports(): Promise<BreachReportList>;
  /** `maxBytes` cuts the body at the first (decoded) byte past it. */
  download(reportName: string, options?: { readonly maxBytes?: number }): Promise<VendorDownload>;
}

export interface BreachSettings {
  /** RESULTS_BUCKET: recon records, archives, manifests and failure records under `breach/`. */
  readonly resultsBucket: string;
  /** BREACH_MAX_EMAILS: distinct addresses one report may cover. */
  readonly maxEmails: number;
  readonly upload: UploadSettings;
  /** The input bounds: download bytes, the ZIP's zip-bomb guards, vendor values in payloads. */
  readonly limits: BreachLimits;
}

export interface BreachDeps {
  readonly s3: S3Client;
  readonly breachClient: BreachApi;
  readonly logger: VendorLogger;
  readonly settings: BreachSettings;
  readonly metrics: PipelineMetrics<MetricName>;
  readonly clock: () => Date;
  /**
   * The key of the keyed hash that names report folders (identity.ts `reportFolder`); only
   * ArchiveReport and breach reconciliation have it. @default refuses with a ConfigurationError
   */
  readonly reportNamingKey: () => Promise<string>;
  /** Jitter of the wait after a throttled recon. @default Math.random */
  readonly random?: () => number;
  /** Bounds of the waits after throttled recons. @default DEFAULT_THROTTLE_WAIT */
  readonly reconThrottle?: ThrottleWaitSettings;
}

// ---------------------------------------------------------------------------------------------
// The vendor-free wiring: the breach steps' settings (RESULTS_BUCKET, BREACH_MAX_EMAILS, the
// BREACH_MAX_* limits) and the deps of the steps that only touch S3.
// ---------------------------------------------------------------------------------------------

export interface BreachSettingsInput {
  readonly resultsBucket: string;
  readonly maxEmails?: number;
  /** @default DEFAULT_BREACH_LIMITS */
  readonly limits?: Partial<BreachLimits>;
}

/** Complete settings from partial ones; a ConfigurationError names the setting. */
export function createBreachSettings(input: BreachSettingsInput): BreachSettings {
  if (input.resultsBucket.trim() === '') throw new ConfigurationError(ENV.resultsBucket, 'is empty');
  const maxEmails = input.maxEmails ?? DEFAULT_MAX_EMAILS;
  if (!Number.isInteger(maxEmails) || maxEmails < 1 || maxEmails > MAX_EMAILS_LIMIT) {
    throw new ConfigurationError(
      BREACH_VARIABLES.maxEmails,
      `must be a whole number from 1 to ${MAX_EMAILS_LIMIT}, got ${maxEmails}`,
    );
  }
  return Object.freeze({
    resultsBucket: input.resultsBucket.trim(),
    maxEmails,
    upload: { partSizeBytes: DEFAULT_PART_SIZE_BYTES, queueSize: DEFAULT_QUEUE_SIZE },
    limits: breachLimits(input.limits),
  });
}

export function breachSettingsFromEnv(env: Env): BreachSettings {
  const maxEmails = maxEmailsFromEnv(env);
  return createBreachSettings({
    resultsBucket: readBucketEnv(env, ENV.resultsBucket),
    ...(maxEmails === undefined ? {} : { maxEmails }),
    limits: breachLimitsFromEnv(env),
  });
}

/** Stands in for the breach client in steps that never call the vendor. */
export const NO_BREACH_ACCESS: BreachApi = noAccess<BreachApi>(
  vendorApiVariables('breach').url,
  'breach',
  'this function has no vendor access by design',
);

/**
 * Deps of the breach steps that only touch S3 (the run manifest, the failure record): no vendor
 * URL, no secret, and no HTTP client in their bundle.
 */
export function breachStorageDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: {
    readonly s3?: S3Client;
    readonly breachClient?: BreachApi;
    readonly reportNamingKey?: () => Promise<string>;
  } = {},
): BreachDeps {
  const metrics = powertoolsMetrics(tools.metrics);
  return {
    reportNamingKey:
      options.reportNamingKey ??
      (() =>
        Promise.reject(
          new ConfigurationError(
            BREACH_VARIABLES.reportNamingKeySecretArn,
            'this function does not name report folders',
          ),
        )),
    s3: options.s3 ?? NO_S3_ACCESS,
    breachClient: options.breachClient ?? NO_BREACH_ACCESS,
    logger: pipelineLoggerFromPowertools(tools.logger),
    settings: breachSettingsFromEnv(env),
    metrics,
    clock: () => new Date(),
  };
}
