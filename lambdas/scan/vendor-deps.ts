/**
 * The deps of the scan steps that call the vendor, from the Lambda environment: the vendor-free
 * part (`#lambdas/scan/deps`) plus the scan client with its key from Secrets Manager. Fails
 * with a ConfigurationError naming the variable.
 *
 * This module brings in the vendor's scan client (and its HTTP stack); steps that only write S3
 * build theirs with `storageScanDepsFromEnvironment` alone.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type Env, readOriginsEnv, readUrlEnv } from '#lambdas/platform/runtime/env';
import { type Observability, vendorMetricsObserver } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { SecretReader } from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import type { ScanDeps } from '#lambdas/scan/deps';
import { storageScanDepsFromEnvironment } from '#lambdas/scan/deps';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { vendorCredentials } from '../platform/runtime/vendor-credentials.ts';

export { apiKeySecretId, vendorCredentials } from '../platform/runtime/vendor-credentials.ts';

export interface ScanDepsFromEnvironmentOptions {
  /** Replaces the Secrets Manager reader (tests). */
  readonly secrets?: SecretReader;
  /** For functions with object access (fetch): `tracedS3Client(tools)`. @default NO_S3_ACCESS */
  readonly s3?: S3Client;
}

/**
 * Deps for the scan handlers that call the vendor: what `storageScanDepsFromEnvironment` reads,
 * plus SCAN_API_URL and SCAN_API_KEY_SECRET_ARN or VENDOR_API_KEY_SECRET_ARN. Vendor retries and
 * failures become metrics.
 */
export function scanDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: ScanDepsFromEnvironmentOptions = {},
): ScanDeps {
  return storageScanDepsFromEnvironment(env, tools, {
    ...(options.s3 ? { s3: options.s3 } : {}),
    // Called after the settings are read, so a missing RESULTS_BUCKET is still reported first.
    scanClient: (settings, logger, metrics) => {
      const baseUrl = readUrlEnv(env, vendorApiVariables('scan').url);
      return new ScanClient({
        baseUrl,
        allowedOrigins: readOriginsEnv(env, ENV.vendorAllowedOrigins),
        credentials: vendorCredentials(env, { api: 'scan', apis: VENDOR_APIS }, tools, options.secrets),
        logger,
        observer: vendorMetricsObserver(metrics),
        ...(settings.statusVocabulary ? { statusVocabulary: settings.statusVocabulary } : {}),
      });
    },
  });
}
