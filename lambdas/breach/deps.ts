/**
 * What the breach steps need from the outside world. Handlers build it from the environment
 * (`#lambdas/breach/deps-from-env`); the local runner and the tests build it with loopback clients.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { UploadSettings } from '#lambdas/platform/runtime/settings';
import type { BreachReportList } from '#lambdas/platform/vendor-api/breach-client';
import type {
  ReconRequest,
  ReconResult,
  VendorDownload,
  VendorLogger,
} from '#lambdas/platform/vendor-api/types';
import type { BreachLimits } from './limits.ts';

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
  readonly metrics: PipelineMetrics;
  readonly clock: () => Date;
}
