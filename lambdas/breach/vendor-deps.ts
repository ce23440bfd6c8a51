/**
 * Deps of the breach steps that call the vendor (Recon, ArchiveReport, reconciliation): the
 * storage deps plus the breach client, BREACH_API_URL and its key's secret.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { BreachDeps } from '#lambdas/breach/deps';
import { type Env, readOriginsEnv, readUrlEnv } from '#lambdas/platform/runtime/env';
import {
  type Observability,
  powertoolsMetrics,
  vendorMetricsObserver,
} from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { SecretReader } from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { pipelineLoggerFromPowertools } from '../platform/runtime/logger.ts';
import { vendorCredentials } from '../platform/runtime/vendor-credentials.ts';
import { breachStorageDepsFromEnvironment } from './deps.ts';
import { reportNamingKeyFromSecret } from './report-naming-key.ts';

export interface BreachDepsOptions {
  /** Object access (`tracedS3Client(tools)`). */
  readonly s3: S3Client;
  /** Replaces the Secrets Manager reader (tests). */
  readonly secrets?: SecretReader;
}

export function breachDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: BreachDepsOptions,
): BreachDeps {
  const breachClient = new BreachClient({
    baseUrl: readUrlEnv(env, vendorApiVariables('breach').url),
    allowedOrigins: readOriginsEnv(env, ENV.vendorAllowedOrigins),
    credentials: vendorCredentials(env, { api: 'breach', apis: VENDOR_APIS }, tools, options.secrets),
    logger: pipelineLoggerFromPowertools(tools.logger),
    observer: vendorMetricsObserver(powertoolsMetrics(tools.metrics)),
  });
  return breachStorageDepsFromEnvironment(env, tools, {
    s3: options.s3,
    breachClient,
    // Read only when called (ArchiveReport, reconciliation): Recon, which shares this wiring, never does.
    reportNamingKey: reportNamingKeyFromSecret(options.secrets)(env, tools),
  });
}
