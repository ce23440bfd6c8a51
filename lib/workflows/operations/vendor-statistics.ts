/**
 * The vendor statistics job: a scheduled function that reads the vendor's `GET /stats` (the
 * organisation's counts of scans), publishes them with their growth since the previous read, and
 * keeps each day's snapshot under `operations/vendor-stats/` (lambdas/operations/vendor-stats.ts).
 *
 * It runs on the scan reconciliation's schedule expression: the alarms that compare the vendor's
 * growth with the pipeline's own counts (`VendorScansUnrecorded`, `VendorFailuresUnseen`, in
 * lib/workflows/scan/scan-reconciliation.ts) sum both over the same one-day period, so the growth
 * must be measured once per reconciliation period, not more or less often. A failed run lands in
 * the queue the caller gives (the reconciliation's), and the schedule uses the role the pipeline's
 * schedules share, so the job adds no queue or Scheduler role of its own to the stack.
 */
import { Duration } from 'aws-cdk-lib';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { StatsFields } from '#lambdas/operations/stats-fields';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { registeredHandler } from '#lambdas/registry';
import { statusVocabularyEnvironment, vendorStatsFieldsEnvironment } from '../../config/environment.ts';
import type { StatusVocabularyConfig } from '../../config/schema.ts';
import type { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { ScheduledCatchUp } from '../../platform/scheduled-catch-up.ts';
import type { VendorSecrets } from '../../platform/vendor-secrets.ts';

export interface VendorStatisticsProps {
  readonly resultsBucket: IBucket;
  readonly vendorSecrets: VendorSecrets;
  /** `vendor.scanApiUrl`: the job calls the scanning API's `/stats`. */
  readonly scanApiUrl: string;
  /** `scan.statusVocabulary`: which status words count as finished or failed. @default the client's own */
  readonly statusVocabulary?: StatusVocabularyConfig;
  /** `scan.reconciliation.statsFields`: where the answer keeps the two counts. @default found by status words */
  readonly statsFields?: StatsFields;
  /** `scan.reconciliation.schedule`: the same expression as the reconciliation's (see above). */
  readonly scheduleExpression: string;
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays;
  /** The role the pipeline's schedules share. @default a role of its own */
  readonly schedulerRole?: Role;
  /** The scan reconciliation's queue, shared by the jobs on its schedule. @default a queue of its own */
  readonly deadLetterQueue?: DeadLetterQueue;
}

export class VendorStatistics extends Construct {
  public readonly job: ScheduledCatchUp;

  constructor(scope: Construct, id: string, props: VendorStatisticsProps) {
    super(scope, id);
    this.job = new ScheduledCatchUp(this, 'Job', {
      handler: registeredHandler('record-vendor-stats'),
      functionId: 'RecordVendorStatsFunction',
      deadLetterPurpose: 'vendor statistics runs that failed or could not be delivered',
      scheduleDescription: "record the vendor's scan statistics and keep the day's snapshot",
      resultsBucket: props.resultsBucket,
      vendorSecrets: props.vendorSecrets,
      environment: {
        [vendorApiVariables('scan').url]: props.scanApiUrl,
        ...statusVocabularyEnvironment(props.statusVocabulary),
        ...vendorStatsFieldsEnvironment(props.statsFields),
      },
      scheduleExpression: props.scheduleExpression,
      // One vendor call (the client retries within 60 s) and three small S3 requests.
      timeout: Duration.minutes(2),
      memorySize: 256,
      ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
      ...(props.schedulerRole === undefined ? {} : { schedulerRole: props.schedulerRole }),
      ...(props.deadLetterQueue === undefined ? {} : { deadLetterQueue: props.deadLetterQueue }),
    });
  }
}
