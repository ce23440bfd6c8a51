/**
 * The breach steps' deps from the Lambda environment: RESULTS_BUCKET and BREACH_MAX_EMAILS, plus
 * the breach client (BREACH_API_URL and its key's secret) for the steps that call the vendor.
 * Steps without vendor or object access get stand-ins that fail loudly (`#core/runtime/no-access`).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv, readBucketEnv, readUrlEnv } from '#core/runtime/env';
import { sfnExecutionLookup } from '#core/runtime/execution-lookup';
import { scanLoggerFromPowertools } from '#core/runtime/logger';
import { NO_S3_ACCESS, noAccess } from '#core/runtime/no-access';
import { type Observability, powertoolsMetrics, vendorMetricsObserver } from '#core/runtime/observability';
import { DEFAULT_UPLOAD_SETTINGS } from '#core/runtime/settings';
import { ENV } from '#core/runtime/variables';
import { numberFromText } from '#core/schema';
import { createSecretsManagerReader, type SecretReader } from '#core/secrets';
import { BreachClient } from '#core/vendor/breach-client';
import { DEFAULT_MAX_EMAILS } from '#core/workflows/breach/contracts';
import type { BreachApi, BreachDeps, BreachSettings } from '#core/workflows/breach/deps';
import type { WatchlistDeps } from '#core/workflows/breach/watchlist-run';
import { vendorCredentials } from './deps.ts';

/** The vendor client takes at most this many addresses per recon. */
export const MAX_EMAILS_LIMIT = 100;

export interface BreachSettingsInput {
  readonly resultsBucket: string;
  readonly maxEmails?: number;
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
    upload: DEFAULT_UPLOAD_SETTINGS,
    zipLimits: Object.freeze({}),
  });
}

export function breachSettingsFromEnv(env: Env): BreachSettings {
  const raw = optionalEnv(env, ENV.breachMaxEmails);
  let maxEmails: number | undefined;
  if (raw !== undefined) {
    const parsed = numberFromText({ min: 1, max: MAX_EMAILS_LIMIT, integer: true }).safeParse(raw);
    if (!parsed.success) {
      throw new ConfigurationError(ENV.breachMaxEmails, parsed.error.issues[0]?.message ?? 'is invalid');
    }
    maxEmails = parsed.data;
  }
  return createBreachSettings({
    resultsBucket: readBucketEnv(env, ENV.resultsBucket),
    ...(maxEmails === undefined ? {} : { maxEmails }),
  });
}

/** Stands in for the breach client in steps that never call the vendor. */
export const NO_BREACH_ACCESS: BreachApi = noAccess<BreachApi>(
  ENV.breachApiUrl,
  'breach',
  'this function has no vendor access by design',
);

export interface BreachDepsOptions {
  /** Object access (`tracedS3Client(tools)`); @default NO_S3_ACCESS */
  readonly s3?: S3Client;
  /** Build the breach client from BREACH_API_URL and the key's secret. @default false */
  readonly vendor?: boolean;
  /** Replaces the Secrets Manager reader (tests). */
  readonly secrets?: SecretReader;
}

export function breachDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: BreachDepsOptions = {},
): BreachDeps {
  const settings = breachSettingsFromEnv(env);
  const logger = scanLoggerFromPowertools(tools.logger);
  const metrics = powertoolsMetrics(tools.metrics);
  const breachClient = options.vendor
    ? new BreachClient({
        baseUrl: readUrlEnv(env, ENV.breachApiUrl),
        credentials: vendorCredentials(env, 'breach', tools, options.secrets),
        logger,
        observer: vendorMetricsObserver(metrics),
      })
    : NO_BREACH_ACCESS;
  return { s3: options.s3 ?? NO_S3_ACCESS, breachClient, logger, settings, metrics, clock: () => new Date() };
}

/** Secrets that are not vendor keys, read through the same reader. */
function secretReader(tools: Observability, secrets?: SecretReader): SecretReader {
  return (
    secrets ??
    createSecretsManagerReader({ client: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})) })
  );
}

/**
 * Deps of the watchlist steps: RESULTS_BUCKET, BREACH_MAX_EMAILS and the identity key's secret
 * (BREACH_IDENTITY_KEY_SECRET_ARN), read once per cold start and cached.
 */
export function watchlistDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: { readonly s3?: S3Client; readonly secrets?: SecretReader } = {},
): WatchlistDeps {
  const settings = breachSettingsFromEnv(env);
  const secretId = optionalEnv(env, ENV.breachIdentityKeySecretArn);
  const breachStateMachineArn = optionalEnv(env, ENV.breachStateMachineArn);
  const reader = secretId === undefined ? undefined : secretReader(tools, options.secrets);
  let key: Promise<string> | undefined;
  return {
    s3: options.s3 ?? NO_S3_ACCESS,
    logger: scanLoggerFromPowertools(tools.logger),
    clock: () => new Date(),
    settings: { resultsBucket: settings.resultsBucket, maxEmails: settings.maxEmails },
    ...(breachStateMachineArn === undefined
      ? {}
      : {
          executions: sfnExecutionLookup(
            tools.tracer.captureAWSv3Client(new SFNClient({})),
            breachStateMachineArn,
          ),
        }),
    identityKey: () => {
      if (secretId === undefined || reader === undefined) {
        return Promise.reject(
          new ConfigurationError(
            ENV.breachIdentityKeySecretArn,
            'is required: the secret of the key that names people',
          ),
        );
      }
      key ??= reader.getSecretString(secretId).catch((error: unknown) => {
        key = undefined;
        throw error;
      });
      return key;
    },
  };
}
