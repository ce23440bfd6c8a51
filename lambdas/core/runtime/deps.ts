/**
 * Builds the dependencies of the scan workflow steps.
 *
 * - `createScanDeps` takes ready-made clients: the local runner (s3rver + simulator) and the tests.
 *   Nothing on that path needs AWS credentials or a region.
 * - `scanDepsFromEnvironment` builds the real AWS clients from the Lambda environment, once per cold
 *   start (through `createLazyHandler`), and fails with a ConfigurationError naming the variable.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv, readUrlEnv } from '#core/runtime/env';
import { createServiceLogger } from '#core/runtime/logger';
import { type ScanSettings, scanSettingsFromEnv } from '#core/runtime/settings';
import type { ScanApi, ScanDeps, ScanLogger } from '#core/scan/deps';
import { createSecretsManagerReader, credentialProviderFromSecret, type SecretReader } from '#core/secrets';
import { ScanClient } from '#core/vendor/index';

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

export interface ScanDepsFromEnvironmentOptions {
  /** Replaces the Secrets Manager reader (tests). */
  readonly secrets?: SecretReader;
  readonly s3?: S3Client;
  /**
   * False for steps that only write S3 (manifest, failure record): they get no vendor URL and no
   * secret, so none is required of their environment, and any vendor call fails loudly.
   * @default true
   */
  readonly vendor?: boolean;
}

/** Stands in for the vendor client in functions that are deliberately given no vendor access. */
const NO_VENDOR_ACCESS: ScanApi = new Proxy({} as ScanApi, {
  get(_target, operation) {
    return async () => {
      throw new ConfigurationError(
        'SCAN_API_URL',
        `this function has no vendor access by design (it called scan.${String(operation)})`,
      );
    };
  },
});

/**
 * Deps for the scan handlers from environment variables:
 * RESULTS_BUCKET, SCAN_API_URL, SCAN_API_KEY_SECRET_ARN or VENDOR_API_KEY_SECRET_ARN, the POLL_* and
 * SCAN_DEADLINE_SECONDS settings, STATUS_VOCABULARY and POWERTOOLS_SERVICE_NAME.
 */
export function scanDepsFromEnvironment(
  env: Env = process.env,
  options: ScanDepsFromEnvironmentOptions = {},
): ScanDeps {
  const settings = scanSettingsFromEnv(env);
  const { logger } = createServiceLogger(
    optionalEnv(env, 'POWERTOOLS_SERVICE_NAME') ?? 'scan-workflow',
    optionalEnv(env, 'POWERTOOLS_LOG_LEVEL'),
  );
  let scanClient = NO_VENDOR_ACCESS;
  if (options.vendor !== false) {
    const scanApiUrl = readUrlEnv(env, 'SCAN_API_URL');
    const secretId = scanApiKeySecretId(env);
    const secrets = options.secrets ?? createSecretsManagerReader();
    scanClient = new ScanClient({
      baseUrl: scanApiUrl,
      credentials: credentialProviderFromSecret(secrets, secretId),
      logger,
      ...(settings.statusVocabulary ? { statusVocabulary: settings.statusVocabulary } : {}),
    });
  }
  return createScanDeps({ s3: options.s3 ?? new S3Client({}), scanClient, settings, logger });
}

/** The name docs/contracts.md gives the environment factory. */
export const depsFromEnvironment = scanDepsFromEnvironment;

/** The scan API's own secret when set, else the org key secret (one key serves all three APIs by default). */
export function scanApiKeySecretId(env: Env): string {
  const secretId =
    optionalEnv(env, 'SCAN_API_KEY_SECRET_ARN') ?? optionalEnv(env, 'VENDOR_API_KEY_SECRET_ARN');
  if (secretId === undefined) {
    throw new ConfigurationError(
      'VENDOR_API_KEY_SECRET_ARN',
      'is required (or SCAN_API_KEY_SECRET_ARN): the secret that holds the vendor API key',
    );
  }
  return secretId;
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
  buildDeps: () => ScanDeps = () => scanDepsFromEnvironment(),
): ScanHandler<TEvent, TResult> {
  let handler: ScanHandler<TEvent, TResult> | undefined;
  return async (event, context) => {
    handler ??= factory(buildDeps());
    return handler(event, context);
  };
}
