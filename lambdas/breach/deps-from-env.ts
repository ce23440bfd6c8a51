/**
 * The breach steps' settings (RESULTS_BUCKET, BREACH_MAX_EMAILS, the BREACH_MAX_* limits) and the deps of the steps that
 * only touch S3. The vendor-calling steps' deps are in `#core/runtime/breach-vendor-deps`, the
 * watchlist steps' in `#core/runtime/watchlist-deps`: each function bundles only what it calls.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_MAX_EMAILS, MAX_EMAILS_LIMIT, maxEmailsFromEnv } from '#lambdas/breach/contracts';
import type { BreachApi, BreachDeps, BreachSettings } from '#lambdas/breach/deps';
import { type BreachLimits, breachLimits, breachLimitsFromEnv } from '#lambdas/breach/limits';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, readBucketEnv } from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { NO_S3_ACCESS, noAccess } from '#lambdas/platform/runtime/no-access';
import { type Observability, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { DEFAULT_PART_SIZE_BYTES, DEFAULT_QUEUE_SIZE } from '#lambdas/platform/s3/stream-upload';

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
      ENV.breachMaxEmails,
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
  ENV.breachApiUrl,
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
  options: { readonly s3?: S3Client; readonly breachClient?: BreachApi } = {},
): BreachDeps {
  const metrics = powertoolsMetrics(tools.metrics);
  return {
    s3: options.s3 ?? NO_S3_ACCESS,
    breachClient: options.breachClient ?? NO_BREACH_ACCESS,
    logger: pipelineLoggerFromPowertools(tools.logger),
    settings: breachSettingsFromEnv(env),
    metrics,
    clock: () => new Date(),
  };
}
