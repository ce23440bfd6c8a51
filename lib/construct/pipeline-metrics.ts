/**
 * The pipeline's own metrics as `SecurityPipeline`'s `metric…()` methods return them: the exact
 * name and dimensions the handlers record (through `pipelineMetric`, as the alarms and dashboard
 * build theirs), a default statistic and period, and whatever `MetricOptions` a caller adds.
 */
import { Duration } from 'aws-cdk-lib';
import type { Metric, MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';
import type { MetricName } from '#lambdas/registry';
import { BREACH_METRIC, ROTATION_METRIC, SCAN_METRIC } from '#lambdas/registry';
import { pipelineMetric } from '../platform/pipeline-metric.ts';
import type { BreachArchiveOrigin, BreachReportOutcome, ScanFailureReason } from './metric-dimensions.ts';

const FIVE_MINUTES = Duration.minutes(5);

function ownMetric(
  scope: IConstruct,
  name: MetricName,
  dimensions: Readonly<Record<string, string>>,
  defaults: { readonly statistic: string; readonly period: Duration },
  options: MetricOptions = {},
): Metric {
  return pipelineMetric(scope, name, dimensions, defaults).with(options);
}

/**
 * The metric methods' bodies, by method name; `SecurityPipeline` delegates each to one of these,
 * passing itself: the `service` dimension names the pipeline (pipeline-metric.ts).
 */
export const PIPELINE_METRICS = {
  scansStarted: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      SCAN_METRIC.scansStarted,
      { workflow: 'scan' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansSucceeded: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      SCAN_METRIC.scansSucceeded,
      { workflow: 'scan' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansFailed: (scope: IConstruct, reason: ScanFailureReason, options?: MetricOptions) =>
    ownMetric(
      scope,
      SCAN_METRIC.scansFailed,
      { workflow: 'scan', outcome: reason },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansTimedOut: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      SCAN_METRIC.scansTimedOut,
      { workflow: 'scan', outcome: 'ScanTimedOut' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scanDuration: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      SCAN_METRIC.scanDuration,
      { workflow: 'scan', outcome: 'succeeded' },
      { statistic: 'p95', period: Duration.hours(1) },
      options,
    ),
  breachReports: (scope: IConstruct, outcome: BreachReportOutcome, options?: MetricOptions) =>
    ownMetric(
      scope,
      BREACH_METRIC.breachReports,
      { workflow: 'breach', outcome },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  breachReportsArchived: (scope: IConstruct, origin: BreachArchiveOrigin, options?: MetricOptions) =>
    ownMetric(
      scope,
      BREACH_METRIC.breachArchived,
      { workflow: 'breach', outcome: origin },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  keyRotations: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      ROTATION_METRIC.keyRotations,
      { workflow: 'rotation' },
      { statistic: 'Sum', period: Duration.days(1) },
      options,
    ),
  apiKeyAge: (scope: IConstruct, options?: MetricOptions) =>
    ownMetric(
      scope,
      ROTATION_METRIC.apiKeyAge,
      { workflow: 'rotation' },
      { statistic: 'Maximum', period: Duration.days(1) },
      options,
    ),
} as const;
