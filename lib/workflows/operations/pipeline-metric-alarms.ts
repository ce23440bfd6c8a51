/**
 * Alarms on the pipeline's own metrics (lambdas/platform/metrics.ts, written by Powertools with the
 * `service` dimension): what no single function or state machine sees.
 *
 * - scans failing at more than a configured rate;
 * - while schedules are enabled, over `quietDays`: scans ended and none succeeded; scans succeeded
 *   and stored nothing; no scan started at all once scans had started (a silence alarm);
 * - vendor 401/403s that survived every retry (a key rotated elsewhere);
 * - vendor throttling sustained over three 5-minute periods.
 *
 * Each description links its section in docs/runbooks/alarms.md.
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Construct, type IConstruct } from 'constructs';
import { METRIC } from '#lambdas/platform/metrics';
import type { MetricName } from '#lambdas/registry';
import { SCAN_METRIC } from '#lambdas/registry';
import { SCAN_OUTPUTS } from '#lambdas/scan/contracts';
import { insightsSource, pipelineMetric, workflowMetric } from '../../platform/pipeline-metric.ts';
import { ALARMS_RUNBOOK, silenceAlarm } from '../../platform/standard-alarms.ts';

/** The failure labels RecordFailure puts on ScansFailed (lambdas/scan/record-scan-failure.ts). */
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
  /** The window, in days, of NoSuccessfulScan, NothingStored and NoScanStarted (1..7). */
  readonly quietDays: number;
  /** Whether schedules run scans: only then are these three alarms created. */
  readonly schedulesEnabled: boolean;
  /** Throttled vendor retries per 5 minutes that, three periods running, fire the alarm. */
  readonly throttledRetriesPerFiveMinutes: number;
}

export type PipelineMetricAlarmName =
  | 'ScanFailureRate'
  | 'NoSuccessfulScan'
  | 'NothingStored'
  | 'NoScanStarted'
  | 'VendorAuthFailures'
  | 'VendorThrottlingSustained';

type Describe = (name: PipelineMetricAlarmName, meaning: string) => string;

export class PipelineMetricAlarms extends Construct {
  public readonly alarms: Readonly<Partial<Record<PipelineMetricAlarmName, Alarm>>>;

  constructor(scope: Construct, id: string, props: PipelineMetricAlarmsProps) {
    super(scope, id);
    const hour = Duration.hours(1);
    const fiveMinutes = Duration.minutes(5);
    const alarms: Partial<Record<PipelineMetricAlarmName, Alarm>> = {};
    const describe: Describe = (name, meaning) =>
      `${meaning} Runbook: ${ALARMS_RUNBOOK}#${name.toLowerCase()}`;

    // (failed + timed out) / started, judged only once enough scans started in the hour.
    const failed = Object.fromEntries(
      SCAN_FAILURE_LABELS.map((label, i) => [
        `f${i}`,
        workflowMetric(this, 'scan', SCAN_METRIC.scansFailed, hour, label),
      ]),
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
          t: workflowMetric(this, 'scan', SCAN_METRIC.scansTimedOut, hour, 'ScanTimedOut'),
          s: workflowMetric(this, 'scan', SCAN_METRIC.scansStarted, hour),
        },
        period: hour,
      }),
      threshold: props.scanFailureRate,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    if (props.schedulesEnabled) Object.assign(alarms, quietAlarms(this, props.quietDays, describe));

    alarms.VendorAuthFailures = new Alarm(this, 'VendorAuthFailures', {
      alarmDescription: describe(
        'VendorAuthFailures',
        'Vendor calls were refused (401/403) with every key the functions could find: a key rotated or revoked outside the pipeline.',
      ),
      metric: insights(this, METRIC.vendorErrors, 'auth', fiveMinutes),
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
      metric: insights(this, METRIC.vendorRetries, 'throttled', fiveMinutes),
      threshold: props.throttledRetriesPerFiveMinutes,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms = alarms;
  }
}

/**
 * The quiet-period alarms, each over one period of `days` (CloudWatch allows up to 7 days for
 * periods of an hour or more: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html).
 * Each judges what happened, never the absence of data: a fresh stack, or a window in which no
 * schedule fired, has no data and stays OK (`notBreaching`). Silence itself is NoScanStarted's, which
 * can tell a stack that never scanned from one that stopped (standard-alarms.ts, silenceAlarm).
 */
function quietAlarms(
  scope: Construct,
  days: number,
  describe: Describe,
): Pick<Record<PipelineMetricAlarmName, Alarm>, 'NoSuccessfulScan' | 'NothingStored' | 'NoScanStarted'> {
  const window = Duration.days(days);
  const judged = (name: PipelineMetricAlarmName, expression: MathExpression, meaning: string) =>
    new Alarm(scope, name, {
      alarmDescription: describe(name, meaning),
      metric: expression,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  const failed = Object.fromEntries(
    SCAN_FAILURE_LABELS.map((label, i) => [
      `f${i}`,
      workflowMetric(scope, 'scan', SCAN_METRIC.scansFailed, window, label),
    ]),
  );
  const sumFailed = [...Object.keys(failed), 't'].map((m) => `FILL(${m}, 0)`).join(' + ');
  // The bytes stored of each output the table counts (lambdas/scan/scan-outputs.ts), by its metric id.
  const storedBytes = SCAN_OUTPUTS.flatMap(({ name, nothingStoredMetricId: id }) =>
    id === false ? [] : [[id, bytesMetric(scope, name, window)] as const],
  );
  // PutMetricAlarm takes at most 10 MetricStat queries in an alarm's metric math, and their ids
  // (the rows' nothingStoredMetricId, checked by the table) start with a lower-case letter
  // (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataQuery.html).
  if (storedBytes.length + 1 > MAX_ALARM_METRIC_STATS) {
    throw new Error(
      `lambdas/scan/scan-outputs.ts: ${storedBytes.length} outputs count towards NothingStored, but one alarm takes at most ${MAX_ALARM_METRIC_STATS - 1} of them besides the succeeded scans; set nothingStoredMetricId to false on the rest`,
    );
  }
  return {
    // The failed and timed-out scans of the window, counted only when none succeeded in it.
    NoSuccessfulScan: judged(
      'NoSuccessfulScan',
      new MathExpression({
        label: 'scans that ended without success, when none succeeded',
        expression: `IF(FILL(s, 0) > 0, 0, ${sumFailed})`,
        usingMetrics: {
          ...failed,
          t: workflowMetric(scope, 'scan', SCAN_METRIC.scansTimedOut, window, 'ScanTimedOut'),
          s: workflowMetric(scope, 'scan', SCAN_METRIC.scansSucceeded, window),
        },
        period: window,
      }),
      `Scans ended in the last ${days} days and none of them succeeded.`,
    ),
    // The successful scans of the window, counted only when not one byte was stored.
    NothingStored: judged(
      'NothingStored',
      new MathExpression({
        label: 'successful scans, when no byte was stored',
        expression: `IF(${storedBytes.map(([id]) => `FILL(${id}, 0)`).join(' + ')} > 0, 0, FILL(s, 0))`,
        usingMetrics: {
          ...Object.fromEntries(storedBytes),
          s: workflowMetric(scope, 'scan', SCAN_METRIC.scansSucceeded, window),
        },
        period: window,
      }),
      `Scans succeeded in the last ${days} days but stored no output at all.`,
    ),
    NoScanStarted: silenceAlarm(scope, 'NoScanStarted', {
      metric: workflowMetric(scope, 'scan', SCAN_METRIC.scansStarted, window),
      meaning: `No scan started for ${days} days although schedules are enabled and scans had run before.`,
      runbook: `${ALARMS_RUNBOOK}#noscanstarted`,
    }),
  };
}

/** MetricStat queries one alarm's metric math may hold (PutMetricAlarm). */
const MAX_ALARM_METRIC_STATS = 10;

function bytesMetric(scope: IConstruct, output: string, period: Duration): Metric {
  return pipelineMetric(scope, METRIC.bytesStored, { workflow: 'scan', output }, { period });
}

/**
 * A Metrics Insights sum over every vendor operation for one failure class: the operations are a
 * dimension, and more of them than one alarm's metric math may list.
 */
function insights(scope: IConstruct, name: MetricName, outcome: string, period: Duration): MathExpression {
  const { from, where } = insightsSource(scope, ['operation', 'outcome']);
  return new MathExpression({
    label: `${name} (${outcome})`,
    expression: `SELECT SUM(${name}) FROM ${from} WHERE outcome = '${outcome}' AND ${where}`,
    usingMetrics: {},
    period,
  });
}
