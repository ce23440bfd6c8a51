/**
 * One of the pipeline's own metrics as CloudWatch stores it: namespace `SecurityPipeline`, the
 * `service` dimension Powertools adds, and the handler's closed dimensions. Alarms and the dashboard
 * build every metric here, so they cannot drift from what the functions write.
 */
import type { Duration } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { WorkflowName } from '#lambdas/platform/handler-declaration';
import { METRICS_NAMESPACE, type MetricName } from '#lambdas/platform/metrics';
import { PIPELINE_SERVICE_NAME } from './pipeline-function.ts';

export interface PipelineMetricOptions {
  readonly period: Duration;
  /** @default 'Sum' */
  readonly statistic?: string;
  readonly label?: string;
}

export function pipelineMetric(
  name: MetricName,
  dimensions: Readonly<Record<string, string>>,
  options: PipelineMetricOptions,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: PIPELINE_SERVICE_NAME, ...dimensions },
    statistic: options.statistic ?? 'Sum',
    period: options.period,
    ...(options.label === undefined ? {} : { label: options.label }),
  });
}

/** One workflow's metric summed over `period`, of one outcome when given. */
export function workflowMetric(
  workflow: WorkflowName,
  name: MetricName,
  period: Duration,
  outcome?: string,
): Metric {
  return pipelineMetric(name, { workflow, ...(outcome ? { outcome } : {}) }, { period });
}
