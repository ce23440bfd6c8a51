/**
 * One of the pipeline's own metrics as CloudWatch stores it: namespace `SecurityPipeline`, the
 * `service` dimension Powertools adds, and the handler's closed dimensions. Alarms and the dashboard
 * build every metric here, so they cannot drift from what the functions write.
 *
 * The `service` dimension names the pipeline (its stack, and its place in the stack when it is not
 * the stack's only one), so two stacks in one account and Region, or two pipelines in one stack,
 * never count each other's metrics: dev's failures do not page prod, and dev's activity does not
 * hide prod's quiet days.
 */
import { type Duration, Stack, Token } from 'aws-cdk-lib';
import { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IConstruct } from 'constructs';
import { METRICS_NAMESPACE } from '#lambdas/platform/metrics';

/** The service name of a function outside any pipeline (a PipelineFunction used on its own). */
export const PIPELINE_SERVICE_NAME = 'security-pipeline';

/** The id a stack's one pipeline has in the app (SecurityPipelineStack): left out of its name. */
const STACK_PIPELINE_ID = 'Default';
/** Quoted in Metrics Insights (`'…'`) and SEARCH (`"…"`) expressions, so no quote may occur. */
const SERVICE_NAME_CHARS = /^[\w\-./]+$/;

const pipelineNames = new WeakMap<IConstruct, string>();

/**
 * Names `pipeline` in its metrics: `<stack name>` for the stack's `Default` pipeline, else
 * `<stack name>/<path of the pipeline in its stack>`. Stack names are unique per account and Region
 * and construct paths unique per stack, so no two pipelines share one.
 * @throws naming the construct when the name could not be quoted in a metric query
 */
export function registerPipelineMetrics(pipeline: IConstruct): string {
  const stack = Stack.of(pipeline);
  const inStack = pipeline.node.scopes
    .slice(pipeline.node.scopes.indexOf(stack) + 1)
    .map((scope) => scope.node.id)
    .join('/');
  const name = inStack === STACK_PIPELINE_ID ? stack.stackName : `${stack.stackName}/${inStack}`;
  if (!Token.isUnresolved(name) && !SERVICE_NAME_CHARS.test(name)) {
    throw new Error(
      `${pipeline.node.path}: the pipeline's metrics are named ${JSON.stringify(name)}, which may only hold letters, digits and '_', '-', '.', '/': rename the stack or the construct ids on its path`,
    );
  }
  pipelineNames.set(pipeline, name);
  return name;
}

/**
 * The `service` dimension of the metrics of the pipeline `scope` belongs to, or
 * PIPELINE_SERVICE_NAME outside a pipeline.
 */
export function pipelineServiceName(scope: IConstruct): string {
  return pipelineNameOf(scope) ?? PIPELINE_SERVICE_NAME;
}

/** The name of the pipeline `scope` belongs to (registerPipelineMetrics), or undefined outside one. */
export function pipelineNameOf(scope: IConstruct): string | undefined {
  for (const ancestor of [...scope.node.scopes].reverse()) {
    const name = pipelineNames.get(ancestor);
    if (name !== undefined) return name;
  }
  return undefined;
}

export interface PipelineMetricOptions {
  readonly period: Duration;
  /** @default 'Sum' */
  readonly statistic?: string;
  readonly label?: string;
}

/**
 * `name` as the functions of `scope`'s pipeline write it. Callers pass a name from the registry's
 * `MetricName` (lambdas/registry.ts), which the platform does not import.
 */
export function pipelineMetric(
  scope: IConstruct,
  name: string,
  dimensions: Readonly<Record<string, string>>,
  options: PipelineMetricOptions,
): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: pipelineServiceName(scope), ...dimensions },
    statistic: options.statistic ?? 'Sum',
    period: options.period,
    ...(options.label === undefined ? {} : { label: options.label }),
  });
}

/** One workflow's metric summed over `period`, of one outcome when given. */
export function workflowMetric(
  scope: IConstruct,
  workflow: string,
  name: string,
  period: Duration,
  outcome?: string,
): Metric {
  return pipelineMetric(scope, name, { workflow, ...(outcome ? { outcome } : {}) }, { period });
}

/**
 * A Metrics Insights `FROM SCHEMA(…)` over the pipeline's namespace with `dimensions` (besides
 * `service`), restricted to `scope`'s pipeline. SCHEMA matches metrics with exactly those
 * dimensions. https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-metrics-insights-querylanguage.html
 */
export function insightsSource(
  scope: IConstruct,
  dimensions: readonly string[],
): { from: string; where: string } {
  const keys = [...dimensions, 'service'].sort();
  return {
    from: `SCHEMA("${METRICS_NAMESPACE}", ${keys.join(', ')})`,
    where: `service = '${pipelineServiceName(scope)}'`,
  };
}

/** A SEARCH key over the pipeline's namespace with `dimensions`, restricted to `scope`'s pipeline. */
export function searchKey(scope: IConstruct, dimensions: string): string {
  return `{${METRICS_NAMESPACE},service,${dimensions}} service="${pipelineServiceName(scope)}"`;
}
