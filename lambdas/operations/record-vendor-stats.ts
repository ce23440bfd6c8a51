/**
 * The vendor statistics job's entry: on the scan reconciliation's schedule, read the vendor's
 * `GET /stats` through the shared scan client, publish its counts and their growth, and keep the
 * day's snapshot (./vendor-stats.ts). Deployed by lib/workflows/operations/vendor-statistics.ts.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import {
  type Env,
  optionalEnv,
  readBucketEnv,
  readOriginsEnv,
  readUrlEnv,
} from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import {
  createLazyHandler,
  type Handler,
  type Observability,
  powertoolsMetrics,
  vendorMetricsObserver,
} from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { vendorCredentials } from '#lambdas/platform/runtime/vendor-credentials';
import type { SecretReader } from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import { SCAN_VARIABLES } from '#lambdas/scan/contracts';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { parseStatusVocabulary } from '#lambdas/vendor-api/scan/status';
import { parseStatsFields } from './stats-fields.ts';
import { OPERATIONS_VARIABLES } from './variables.ts';
import { recordVendorStatistics, type VendorStatsDeps, type VendorStatsOutcome } from './vendor-stats.ts';

/**
 * The job's deps from the Lambda environment: RESULTS_BUCKET, SCAN_API_URL and the scan key's
 * secret, and the optional STATUS_VOCABULARY and VENDOR_STATS_FIELDS. A bad variable is a
 * ConfigurationError naming it.
 */
export function vendorStatsDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: { readonly s3: S3Client; readonly secrets?: SecretReader },
): VendorStatsDeps {
  const resultsBucket = readBucketEnv(env, ENV.resultsBucket);
  const vocabularyJson = optionalEnv(env, SCAN_VARIABLES.statusVocabulary);
  const statusVocabulary =
    vocabularyJson === undefined
      ? undefined
      : parseStatusVocabulary(vocabularyJson, SCAN_VARIABLES.statusVocabulary);
  const statsFields = parseStatsFields(
    optionalEnv(env, OPERATIONS_VARIABLES.vendorStatsFields),
    OPERATIONS_VARIABLES.vendorStatsFields,
  );
  const logger = pipelineLoggerFromPowertools(tools.logger);
  const metrics = powertoolsMetrics(tools.metrics);
  const stats = new ScanClient({
    baseUrl: readUrlEnv(env, vendorApiVariables('scan').url),
    allowedOrigins: readOriginsEnv(env, ENV.vendorAllowedOrigins),
    credentials: vendorCredentials(env, { api: 'scan', apis: VENDOR_APIS }, tools, options.secrets),
    logger,
    observer: vendorMetricsObserver(metrics),
    ...(statusVocabulary ? { statusVocabulary } : {}),
  });
  return {
    s3: options.s3,
    settings: { resultsBucket, statusVocabulary, statsFields },
    metrics,
    logger,
    clock: () => new Date(),
    stats,
  };
}

/** Scheduled: the vendor's statistics as metrics, their growth since the previous read, the day's snapshot. */
export function createRecordVendorStatsHandler(deps: VendorStatsDeps): Handler<unknown, VendorStatsOutcome> {
  // The schedule's input carries nothing the run needs: what to record comes from the vendor.
  return async () => recordVendorStatistics(deps);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => vendorStatsDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordVendorStatsHandler,
});
