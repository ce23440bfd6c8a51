/**
 * Scan reconciliation: the scheduled function that archives every finished scan the vendor lists
 * without a manifest and publishes the vendor's own counts, plus the two alarms those counts make
 * possible. Each alarm description links its section in docs/runbooks/alarms.md.
 *
 * - `VendorScansUnrecorded`: in a day, the vendor's count of finished scans grew while the pipeline
 *   recorded no scan of its own, neither a manifest from the workflow nor one from reconciliation:
 *   scans are being lost silently.
 * - `VendorFailuresUnseen`: the vendor's count of failed scans grew by more than the scans the
 *   workflow saw fail (ScansFailed, outcome ScanFailed).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { registeredHandler, SCAN_METRIC } from '#lambdas/registry';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import {
  reconcileFunctionSettings,
  type ScanReconciliationConfig,
} from '../../config/reconciliation-schema.ts';
import type { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { workflowMetric } from '../../platform/pipeline-metric.ts';
import { ScheduledCatchUp } from '../../platform/scheduled-catch-up.ts';
import { ALARMS_RUNBOOK } from '../../platform/standard-alarms.ts';
import type { VendorSecrets } from '../../platform/vendor-secrets.ts';
import type { ScanWorkflow } from './scan-workflow.ts';

export interface ScanReconciliationProps {
  readonly resultsBucket: IBucket;
  readonly vendorSecrets: VendorSecrets;
  /** Its vendor-calling steps' settings are the reconciliation function's. */
  readonly scanWorkflow: ScanWorkflow;
  readonly reconciliation: ScanReconciliationConfig;
  /** `poll.deadlineSeconds`: the default minimum age is this plus an hour. */
  readonly deadlineSeconds: number;
  /** `scan.deleteAtVendorAfterManifest`: reconciled scans are deleted at the vendor too. */
  readonly deleteAtVendorAfterManifest: boolean;
  readonly logRetention?: RetentionDays;
  /** The role the pipeline's schedules share. @default a role of its own */
  readonly schedulerRole?: Role;
  /** A dead-letter queue the pipeline's scan jobs share. @default a queue of its own */
  readonly deadLetterQueue?: DeadLetterQueue;
}

export type ScanReconciliationAlarmName = 'VendorScansUnrecorded' | 'VendorFailuresUnseen';

export class ScanReconciliation extends Construct {
  public readonly reconciliation: ScheduledCatchUp;
  public readonly alarms: Readonly<Record<ScanReconciliationAlarmName, Alarm>>;

  constructor(scope: Construct, id: string, props: ScanReconciliationProps) {
    super(scope, id);
    // The configuration was checked with the schema the function checks at cold start.
    const settings = reconcileFunctionSettings(props.reconciliation, {
      deadlineSeconds: props.deadlineSeconds,
      deleteAtVendorAfterManifest: props.deleteAtVendorAfterManifest,
    });
    this.reconciliation = new ScheduledCatchUp(this, 'Reconciliation', {
      handler: registeredHandler('reconcile-scans'),
      functionId: 'ReconcileFunction',
      // The pipeline passes the scan jobs' shared queue (the early-end watcher's); its own otherwise.
      deadLetterPurpose: 'scan reconciliation runs that failed or could not be delivered',
      scheduleDescription: 'archive scans the workflow never archived',
      resultsBucket: props.resultsBucket,
      vendorSecrets: props.vendorSecrets,
      environment: {
        ...props.scanWorkflow.vendorStepEnvironment,
        [SCAN_VARIABLES.reconciliation]: JSON.stringify(settings),
      },
      scheduleExpression: props.reconciliation.schedule,
      ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
      ...(props.schedulerRole === undefined ? {} : { schedulerRole: props.schedulerRole }),
      ...(props.deadLetterQueue === undefined ? {} : { deadLetterQueue: props.deadLetterQueue }),
    });

    const day = Duration.days(1);
    const describe = (name: ScanReconciliationAlarmName, meaning: string) =>
      `${meaning} Runbook: ${ALARMS_RUNBOOK}#${name.toLowerCase()}`;
    this.alarms = {
      VendorScansUnrecorded: new Alarm(this, 'VendorScansUnrecorded', {
        alarmDescription: describe(
          'VendorScansUnrecorded',
          "In a day, the vendor's count of finished scans grew while the pipeline recorded no scan at all (no manifest from the workflow or from reconciliation): scans are being lost.",
        ),
        metric: new MathExpression({
          label: 'vendor-finished scans while none was recorded',
          expression: 'IF(FILL(v, 0) > 0 AND FILL(s, 0) + FILL(r, 0) == 0, FILL(v, 0), 0)',
          usingMetrics: {
            v: workflowMetric(this, 'scan', SCAN_METRIC.vendorFinishedIncrease, day),
            s: workflowMetric(this, 'scan', SCAN_METRIC.scansSucceeded, day),
            r: workflowMetric(this, 'scan', SCAN_METRIC.scansReconciled, day),
          },
          period: day,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No reading (reconciliation off that day, or the first run) proves nothing either way.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      VendorFailuresUnseen: new Alarm(this, 'VendorFailuresUnseen', {
        alarmDescription: describe(
          'VendorFailuresUnseen',
          "In a day, the vendor's count of failed scans grew by more than the scans the pipeline saw fail.",
        ),
        metric: new MathExpression({
          label: 'vendor-failed scans the pipeline never saw fail',
          expression: 'FILL(v, 0) - FILL(f, 0)',
          usingMetrics: {
            v: workflowMetric(this, 'scan', SCAN_METRIC.vendorFailedIncrease, day),
            f: workflowMetric(this, 'scan', SCAN_METRIC.scansFailed, day, 'ScanFailed'),
          },
          period: day,
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    };
  }
}
