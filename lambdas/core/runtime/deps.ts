/**
 * Builds the dependencies of the scan workflow steps.
 *
 * - `createScanDeps` takes ready-made clients: the local runner (s3rver + simulator) and the tests.
 *   Nothing on that path needs AWS credentials or a region.
 * - `scanDepsFromEnvironment` builds the real AWS clients from the Lambda environment, once per cold
 *   start (through `createLazyHandler`), and fails with a ConfigurationError naming the variable.
 *
 * This module brings in the vendor's scan client (and its HTTP stack); steps that only write S3
 * import `#core/runtime/handler` instead.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv, readUrlEnv } from '#core/runtime/env';
import {
  createLazyHandler as createLazyHandlerWith,
  type ScanHandler,
  storageScanDepsFromEnvironment,
} from '#core/runtime/handler';
import type { ScanDeps } from '#core/scan/deps';
import { createSecretsManagerReader, credentialProviderFromSecret, type SecretReader } from '#core/secrets';
import { ScanClient } from '#core/vendor/scan-client';

export {
  type CreateScanDepsOptions,
  createScanDeps,
  type InvocationContext,
  type ScanHandler,
  storageScanDepsFromEnvironment,
} from '#core/runtime/handler';

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

/**
 * Deps for the scan handlers from environment variables:
 * RESULTS_BUCKET, SCAN_API_URL, SCAN_API_KEY_SECRET_ARN or VENDOR_API_KEY_SECRET_ARN, the POLL_* and
 * SCAN_DEADLINE_SECONDS settings, STATUS_VOCABULARY and POWERTOOLS_SERVICE_NAME.
 */
export function scanDepsFromEnvironment(
  env: Env = process.env,
  options: ScanDepsFromEnvironmentOptions = {},
): ScanDeps {
  const s3 = options.s3 ? { s3: options.s3 } : {};
  if (options.vendor === false) return storageScanDepsFromEnvironment(env, s3);
  return storageScanDepsFromEnvironment(env, {
    ...s3,
    // Called after the settings are read, so a missing RESULTS_BUCKET is still reported first.
    scanClient: (settings, logger) => {
      const baseUrl = readUrlEnv(env, 'SCAN_API_URL');
      const secretId = scanApiKeySecretId(env);
      const secrets = options.secrets ?? createSecretsManagerReader();
      return new ScanClient({
        baseUrl,
        credentials: credentialProviderFromSecret(secrets, secretId),
        logger,
        ...(settings.statusVocabulary ? { statusVocabulary: settings.statusVocabulary } : {}),
      });
    },
  });
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

/**
 * A Lambda entry point that builds its deps on first use and keeps them for the life of the
 * execution environment; by default from `scanDepsFromEnvironment`.
 */
export function createLazyHandler<TEvent, TResult>(
  factory: (deps: ScanDeps) => ScanHandler<TEvent, TResult>,
  buildDeps: () => ScanDeps = () => scanDepsFromEnvironment(),
): ScanHandler<TEvent, TResult> {
  return createLazyHandlerWith(factory, buildDeps);
}
