/**
 * One CloudWatch dashboard for the on-call engineer: scans by outcome, scan duration p50/p95,
 * vendor retries and errors by operation, bytes archived, breach results, the key's age, DLQ
 * depths, and the state of every alarm. Built from the same metric names the handlers emit
 * (lambdas/platform/metrics.ts), so a panel can never show a metric nobody writes.
 */
import { Duration } from 'aws-cdk-lib';
import {
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  MathExpression,
  type Metric,
  SingleValueWidget,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { METRIC } from '#lambdas/platform/metrics';
import type { MetricName } from '#lambdas/registry';
import { BREACH_METRIC, ROTATION_METRIC, SCAN_METRIC } from '#lambdas/registry';
import { pipelineMetric, searchKey } from '../../platform/pipeline-metric.ts';

export interface PipelineDashboardProps {
  /** Every alarm of the stack, for the status panel. */
  readonly alarms: readonly IAlarm[];
  /** Every dead-letter queue, for the depth panel. */
  readonly deadLetterQueues: readonly IQueue[];
}

const HOUR = Duration.hours(1);

export class PipelineDashboard extends Construct {
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: PipelineDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(7) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          '# Security pipeline\nRunbooks: `docs/runbooks/` (every alarm links its section). Metrics: namespace `SecurityPipeline`.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Scans by outcome (per hour)',
        left: [
          shown(this, SCAN_METRIC.scansStarted, { workflow: 'scan' }, 'Sum', 'started'),
          shown(this, SCAN_METRIC.scansSucceeded, { workflow: 'scan' }, 'Sum', 'succeeded'),
          search(this, SCAN_METRIC.scansFailed, 'workflow, outcome', 'Sum', 'failed'),
          search(this, SCAN_METRIC.scansTimedOut, 'workflow, outcome', 'Sum', 'timed out'),
          // Starts whose answer was lost, by how they were settled. No alarm of its own: an
          // unresolved one ends ScanRejected, which the failed-scan alarm and reconciliation cover;
          // adopted and retried ones are the at-most-once guarantee working.
          search(this, SCAN_METRIC.startsSettled, 'workflow, outcome', 'Sum', 'start settled'),
          // Starts the vendor throttled, waited out by the state machine; a steady line means the
          // concurrency is above what the vendor takes (VendorThrottlingSustained alarms on the retries).
          shown(this, SCAN_METRIC.startsThrottled, { workflow: 'scan' }, 'Sum', 'start throttled'),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Scan duration (seconds)',
        left: [
          shown(this, SCAN_METRIC.scanDuration, { workflow: 'scan', outcome: 'succeeded' }, 'p50', 'p50'),
          shown(this, SCAN_METRIC.scanDuration, { workflow: 'scan', outcome: 'succeeded' }, 'p95', 'p95'),
        ],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Vendor retries by operation and cause',
        left: [search(this, METRIC.vendorRetries, 'operation, outcome', 'Sum', '')],
        width: 12,
      }),
      new GraphWidget({
        title: 'Vendor errors (calls that failed for good)',
        left: [search(this, METRIC.vendorErrors, 'operation, outcome', 'Sum', '')],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Bytes stored (scan outputs and breach archives)',
        left: [search(this, METRIC.bytesStored, 'workflow, output', 'Sum', '')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Breach reports and archives',
        left: [
          search(this, BREACH_METRIC.breachReports, 'workflow, outcome', 'Sum', 'recon'),
          search(this, BREACH_METRIC.breachArchived, 'workflow, outcome', 'Sum', 'archived'),
          search(this, BREACH_METRIC.archiveVerificationFailures, 'workflow, outcome', 'Sum', 'refused ZIP'),
          search(
            this,
            BREACH_METRIC.archiveConflicts,
            'workflow, outcome',
            'Sum',
            'report name with other bytes',
          ),
        ],
        width: 8,
      }),
      new SingleValueWidget({
        title: 'Vendor key age (days)',
        metrics: [
          shown(
            this,
            ROTATION_METRIC.apiKeyAge,
            { workflow: 'rotation' },
            'Maximum',
            'age',
            Duration.days(1),
          ),
        ],
        width: 8,
      }),
    );
    const day = Duration.days(1);
    this.dashboard.addWidgets(
      new GraphWidget({
        // Scan reconciliation reads the vendor's counts daily: its growth against what we recorded.
        title: "Finished scans per day: the vendor's count and ours",
        left: [
          shown(
            this,
            SCAN_METRIC.vendorFinishedIncrease,
            { workflow: 'scan' },
            'Sum',
            'vendor: finished',
            day,
          ),
          shown(this, SCAN_METRIC.scansSucceeded, { workflow: 'scan' }, 'Sum', 'ours: workflow', day),
          shown(this, SCAN_METRIC.scansReconciled, { workflow: 'scan' }, 'Sum', 'ours: reconciled', day),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: "Failed scans per day: the vendor's count and ours",
        left: [
          shown(this, SCAN_METRIC.vendorFailedIncrease, { workflow: 'scan' }, 'Sum', 'vendor: failed', day),
          shown(
            this,
            SCAN_METRIC.scansFailed,
            { workflow: 'scan', outcome: 'ScanFailed' },
            'Sum',
            'ours: ScanFailed',
            day,
          ),
        ],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Dead-letter queue depth',
        left: props.deadLetterQueues.map((queue) =>
          queue.metricApproximateNumberOfMessagesVisible({
            statistic: 'Maximum',
            period: Duration.minutes(5),
          }),
        ),
        width: 12,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 12, height: 8 }),
    );
  }
}

/** A pipeline metric as the dashboard shows it: labelled, hourly unless said otherwise. */
function shown(
  scope: IConstruct,
  name: MetricName,
  dimensions: Record<string, string>,
  statistic: string,
  label: string,
  period: Duration = HOUR,
): Metric {
  return pipelineMetric(scope, name, dimensions, { statistic, label, period });
}

/** Every series of `name` over its dimension values (one line per operation, outcome...). */
function search(
  scope: IConstruct,
  name: MetricName,
  dimensions: string,
  statistic: string,
  label: string,
): IMetric {
  return new MathExpression({
    expression: `SEARCH('${searchKey(scope, dimensions)} MetricName="${name}"', '${statistic}', ${HOUR.toSeconds()})`,
    label,
    usingMetrics: {},
    period: HOUR,
  });
}
