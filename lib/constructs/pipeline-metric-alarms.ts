/**
 * Alarms on the pipeline's own metrics (lambdas/core/metrics.ts, written by Powertools with the
 * `service` dimension): what no single function or state machine sees.
 *
 * - scans failing at more than a configured rate;
 * - no successful scan, or no byte stored, for days while schedules should be producing them;
 * - vendor 401/403s that survived every retry (a key rotated elsewhere);
 * - vendor throttling sustained over three 5-minute periods.
 *
 * Each description links its section in docs/runbooks/alarms.md.
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, type MetricName } from '#core/metrics';
import { pipelineMetric } from './pipeline-metric.ts';
import { ALARMS_RUNBOOK } from './standard-alarms.ts';

/** The failure labels RecordFailure puts on ScansFailed (lambdas/core/workflows/scan/failure.ts). */
const SCAN_FAILURE_LABELS = [
  'ScanFailed',
  'ScanRejected',
  'PollFailed',
  'OutputFetchFailed',
  'ManifestFailed',
  'Other',
];

export interface PipelineMetricAlarmsProps {
  /** Failed or timed-out scans per started scan, over an hour, that fire the alarm (0..1). */
  readonly scanFailureRate: number;
  /** Started scans in the hour below which the rate is not judged. */
  readonly minScansForRate: number;
  /** Days without a successful scan, or a stored byte, that fire the alarm. */
  readonly quietDays: number;
  /** Whether schedules run scans: only then is a quiet day a problem. */
  readonly schedulesEnabled: boolean;
  /** Throttled vendor retries per 5 minutes that, three periods running, fire the alarm. */
  readonly throttledRetriesPerFiveMinutes: number;
}

export type PipelineMetricAlarmName =
  | 'ScanFailureRate'
  | 'NoSuccessfulScan'
  | 'NothingStored'
  | 'VendorAuthFailures'
  | 'VendorThrottlingSustained';

export class PipelineMetricAlarms extends Construct {
  public readonly alarms: Readonly<Partial<Record<PipelineMetricAlarmName, Alarm>>>;

  constructor(scope: Construct, id: string, props: PipelineMetricAlarmsProps) {
    super(scope, id);
    const hour = Duration.hours(1);
    const day = Duration.days(1);
    const fiveMinutes = Duration.minutes(5);
    const alarms: Partial<Record<PipelineMetricAlarmName, Alarm>> = {};
    const describe = (name: PipelineMetricAlarmName, meaning: string) =>
      `${meaning} Runbook: ${ALARMS_RUNBOOK}#${name.toLowerCase()}`;

    // (failed + timed out) / started, judged only once enough scans started in the hour.
    const failed = Object.fromEntries(
      SCAN_FAILURE_LABELS.map((label, i) => [`f${i}`, scanMetric(METRIC.scansFailed, hour, label)]),
    );
    const sumFailed = [...Object.keys(failed), 't'].map((m) => `FILL(${m}, 0)`).join(' + ');
    alarms.ScanFailureRate = new Alarm(this, 'ScanFailureRate', {
      alarmDescription: describe(
        'ScanFailureRate',
        `More than ${Math.round(props.scanFailureRate * 100)}% of the scans started in an hour failed or timed out.`,
      ),
      metric: new MathExpression({
        label: 'failed or timed-out scans per started scan',
        expression: `IF(FILL(s, 0) >= ${props.minScansForRate}, (${sumFailed}) / s, 0)`,
        usingMetrics: {
          ...failed,
          t: scanMetric(METRIC.scansTimedOut, hour, 'ScanTimedOut'),
          s: scanMetric(METRIC.scansStarted, hour),
        },
        period: hour,
      }),
      threshold: props.scanFailureRate,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    if (props.schedulesEnabled) {
      const quiet = (name: PipelineMetricAlarmName, metric: IMetric, meaning: string) =>
        new Alarm(this, name, {
          alarmDescription: describe(name, meaning),
          metric,
          threshold: 1,
          evaluationPeriods: props.quietDays,
          comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
          // No data at all is exactly the silence this alarm is for.
          treatMissingData: TreatMissingData.BREACHING,
        });
      alarms.NoSuccessfulScan = quiet(
        'NoSuccessfulScan',
        scanMetric(METRIC.scansSucceeded, day),
        `No scan succeeded for ${props.quietDays} days although schedules are enabled.`,
      );
      alarms.NothingStored = quiet(
        'NothingStored',
        new MathExpression({
          label: 'scan bytes stored',
          expression: 'FILL(r, 0) + FILL(l, 0) + FILL(d, 0)',
          usingMetrics: {
            r: bytesMetric('report', day),
            l: bytesMetric('logs', day),
            d: bytesMetric('debug', day),
          },
          period: day,
        }),
        `No scan output was stored for ${props.quietDays} days although schedules are enabled.`,
      );
    }

    alarms.VendorAuthFailures = new Alarm(this, 'VendorAuthFailures', {
      alarmDescription: describe(
        'VendorAuthFailures',
        'Vendor calls were refused (401/403) with every key the functions could find: a key rotated or revoked outside the pipeline.',
      ),
      metric: insights(METRIC.vendorErrors, 'auth', fiveMinutes),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarms.VendorThrottlingSustained = new Alarm(this, 'VendorThrottlingSustained', {
      alarmDescription: describe(
        'VendorThrottlingSustained',
        `The vendor throttled (429) at least ${props.throttledRetriesPerFiveMinutes} retries per 5 minutes for 15 minutes.`,
      ),
      metric: insights(METRIC.vendorRetries, 'throttled', fiveMinutes),
      threshold: props.throttledRetriesPerFiveMinutes,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms = alarms;
  }
}

/** A scan-workflow metric summed over `period`, of one outcome when given. */
export function scanMetric(name: MetricName, period: Duration, outcome?: string): Metric {
  return pipelineMetric(name, { workflow: 'scan', ...(outcome ? { outcome } : {}) }, { period });
}

function bytesMetric(output: string, period: Duration): Metric {
  return pipelineMetric(METRIC.bytesStored, { workflow: 'scan', output }, { period });
}

/**
 * A Metrics Insights sum over every vendor operation for one failure class: the operations are a
 * dimension, and more of them than one alarm's metric math may list.
 */
function insights(name: MetricName, outcome: string, period: Duration): MathExpression {
  return new MathExpression({
    label: `${name} (${outcome})`,
    expression: `SELECT SUM(${name}) FROM SCHEMA("${METRICS_NAMESPACE}", operation, outcome, service) WHERE outcome = '${outcome}'`,
    usingMetrics: {},
    period,
  });
}
