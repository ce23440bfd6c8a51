/**
 * The pipeline's metrics as core code sees them: names, closed dimensions, and the small
 * {@link PipelineMetrics} interface it records through. Powertools Metrics stands behind it in a
 * Lambda (`#lambdas/platform/runtime/observability`); the local runner and the tests pass an in-memory recorder.
 *
 * Dimensions are a closed set of low-cardinality words: never a domain, an email, a scan id or a
 * key, which would leak them into CloudWatch and make every value its own (billed) metric.
 */
import type { VendorOperation } from '#lambdas/vendor-api/transport/types';

/** The CloudWatch namespace of every pipeline metric. */
export const METRICS_NAMESPACE = 'SecurityPipeline';

/**
 * The metric names the platform itself records, whatever the workflow. Every name the pipeline
 * records, these and the workflows', is listed in lambdas/registry.ts (`MetricName`), which types
 * the recorders, alarms and dashboard, so none can name a metric that is not emitted.
 */
export const METRIC = {
  bytesStored: 'BytesStored',
  vendorRetries: 'VendorRetries',
  vendorErrors: 'VendorErrors',
} as const;

/** A metric the platform itself records. */
export type PlatformMetricName = (typeof METRIC)[keyof typeof METRIC];

export type MetricUnitName = 'Count' | 'Seconds' | 'Bytes' | 'Milliseconds' | 'NoUnit';

/**
 * The only dimensions a pipeline metric may carry: words from fixed vocabularies. A type, not a
 * convention: `operation` is a vendor operation name (`scan.getReport`), `outcome` a result class.
 */
export interface MetricDimensions {
  /** Which workflow emitted it, by its name in lambdas/registry.ts. */
  readonly workflow?: string;
  /** A vendor client operation, e.g. `scan.getStatus`. */
  readonly operation?: VendorOperation;
  /** A result class, e.g. `retried`, `throttled`, `unavailable`, `succeeded`. */
  readonly outcome?: string;
  /** A stored output, by a name from its workflow's fixed table (a scan output's name, `archive`). */
  readonly output?: string;
  /**
   * A numeric field of the vendor's statistics, by dot path (`by_status.completed`): the one
   * dimension the vendor names. At most 40 of them, `[A-Za-z0-9_.-]`, never a value.
   */
  readonly statistic?: string;
}

/**
 * What core code records metrics through. `Name`: the names it may record; the platform records
 * its own (`PlatformMetricName`), a workflow's code takes the registry's `MetricName`.
 */
export interface PipelineMetrics<Name extends string = string> {
  record(name: Name, value: number, unit: MetricUnitName, dimensions?: MetricDimensions): void;
}

/** Records nothing: for callers that do not measure (unit tests of unrelated behaviour). */
export const NO_METRICS: PipelineMetrics = Object.freeze({ record: () => undefined });

/** One recorded metric, as the in-memory recorder keeps it. */
export interface RecordedMetric {
  readonly name: string;
  readonly value: number;
  readonly unit: MetricUnitName;
  readonly dimensions: MetricDimensions;
}

/** Keeps every metric in memory: the local runner's summary and the tests read it. */
export function createMetricsRecorder(): PipelineMetrics & { readonly recorded: RecordedMetric[] } {
  const recorded: RecordedMetric[] = [];
  return {
    recorded,
    record(name, value, unit, dimensions = {}) {
      recorded.push({ name, value, unit, dimensions: { ...dimensions } });
    },
  };
}
