/**
 * The pipeline's own metrics as `SecurityPipeline`'s `metric…()` methods return them: the exact
 * name and dimensions the handlers record (through `pipelineMetric`, as the alarms and dashboard
 * build theirs), a default statistic and period, and whatever `MetricOptions` a caller adds.
 */
import { Duration } from 'aws-cdk-lib';
import type { Metric, MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import { BREACH_METRIC } from '#lambdas/breach/metrics';
import type { MetricName } from '#lambdas/platform/metrics';
import { ROTATION_METRIC } from '#lambdas/rotation/metrics';
import { SCAN_METRIC } from '#lambdas/scan/metrics';
import { pipelineMetric } from '../platform/pipeline-metric.ts';
import type { BreachArchiveOrigin, BreachReportOutcome, ScanFailureReason } from './metric-dimensions.ts';

const FIVE_MINUTES = Duration.minutes(5);

function ownMetric(
  name: MetricName,
  dimensions: Readonly<Record<string, string>>,
  defaults: { readonly statistic: string; readonly period: Duration },
  options: MetricOptions = {},
): Metric {
  return pipelineMetric(name, dimensions, defaults).with(options);
}

/** The metric methods' bodies, by method name; `SecurityPipeline` delegates each to one of these. */
export const PIPELINE_METRICS = {
  scansStarted: (options?: MetricOptions) =>
    ownMetric(
      SCAN_METRIC.scansStarted,
      { workflow: 'scan' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansSucceeded: (options?: MetricOptions) =>
    ownMetric(
      SCAN_METRIC.scansSucceeded,
      { workflow: 'scan' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansFailed: (reason: ScanFailureReason, options?: MetricOptions) =>
    ownMetric(
      SCAN_METRIC.scansFailed,
      { workflow: 'scan', outcome: reason },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scansTimedOut: (options?: MetricOptions) =>
    ownMetric(
      SCAN_METRIC.scansTimedOut,
      { workflow: 'scan', outcome: 'ScanTimedOut' },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  scanDuration: (options?: MetricOptions) =>
    ownMetric(
      SCAN_METRIC.scanDuration,
      { workflow: 'scan', outcome: 'succeeded' },
      { statistic: 'p95', period: Duration.hours(1) },
      options,
    ),
  breachReports: (outcome: BreachReportOutcome, options?: MetricOptions) =>
    ownMetric(
      BREACH_METRIC.breachReports,
      { workflow: 'breach', outcome },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  breachReportsArchived: (origin: BreachArchiveOrigin, options?: MetricOptions) =>
    ownMetric(
      BREACH_METRIC.breachArchived,
      { workflow: 'breach', outcome: origin },
      { statistic: 'Sum', period: FIVE_MINUTES },
      options,
    ),
  keyRotations: (options?: MetricOptions) =>
    ownMetric(
      ROTATION_METRIC.keyRotations,
      { workflow: 'rotation' },
      { statistic: 'Sum', period: Duration.days(1) },
      options,
    ),
  apiKeyAge: (options?: MetricOptions) =>
    ownMetric(
      ROTATION_METRIC.apiKeyAge,
      { workflow: 'rotation' },
      { statistic: 'Maximum', period: Duration.days(1) },
      options,
    ),
} as const;
