/**
 * Deps of the breach steps that call the vendor (Recon, ArchiveReport, reconciliation): the
 * storage deps plus the breach client, BREACH_API_URL and its key's secret.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type Env, readUrlEnv } from '#core/runtime/env';
import { type Observability, powertoolsMetrics, vendorMetricsObserver } from '#core/runtime/observability';
import { ENV } from '#core/runtime/variables';
import type { SecretReader } from '#core/secrets';
import { BreachClient } from '#core/vendor/breach-client';
import type { BreachDeps } from '#core/workflows/breach/deps';
import { breachStorageDepsFromEnvironment } from './breach-deps.ts';
import { scanLoggerFromPowertools } from './logger.ts';
import { vendorCredentials } from './vendor-credentials.ts';

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
    baseUrl: readUrlEnv(env, ENV.breachApiUrl),
    credentials: vendorCredentials(env, 'breach', tools, options.secrets),
    logger: scanLoggerFromPowertools(tools.logger),
    observer: vendorMetricsObserver(powertoolsMetrics(tools.metrics)),
  });
  return breachStorageDepsFromEnvironment(env, tools, { s3: options.s3, breachClient });
}
