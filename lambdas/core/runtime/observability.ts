/**
 * Powertools Logger, Metrics and Tracer, created in one place and handed to core code as
 * parameters (core never creates its own). Core code sees two small interfaces: `ScanLogger`-style
 * logging and {@link PipelineMetrics}, so tests and the local runner pass in-memory ones.
 *
 * Metrics go to CloudWatch as embedded-metric-format log lines under one namespace. Their
 * dimensions are a closed set of low-cardinality words ({@link MetricDimensions}): never a domain,
 * an email, a scan id or a key, which would also make every value its own (billed) metric.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '@aws-lambda-powertools/logger/types';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/** The CloudWatch namespace of every pipeline metric. */
export const METRICS_NAMESPACE = 'SecurityPipeline';

/** The pipeline's metric names, so a dashboard or alarm can never name one that is not emitted. */
export const METRIC = {
  scansStarted: 'ScansStarted',
  scansSucceeded: 'ScansSucceeded',
  scansFailed: 'ScansFailed',
  scansTimedOut: 'ScansTimedOut',
  scanDuration: 'ScanDurationSeconds',
  bytesStored: 'BytesStored',
  vendorRetries: 'VendorRetries',
  vendorErrors: 'VendorErrors',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export type MetricUnitName = 'Count' | 'Seconds' | 'Bytes' | 'Milliseconds';

/**
 * The only dimensions a pipeline metric may carry: words from fixed vocabularies. A type, not a
 * convention: `operation` is a vendor operation name (`scan.getReport`), `outcome` a result class.
 */
export interface MetricDimensions {
  /** Which workflow emitted it: `scan`, `list`, `breach`, `rotation`. */
  readonly workflow?: 'scan' | 'list' | 'breach' | 'rotation';
  /** A vendor client operation, e.g. `scan.getStatus`. */
  readonly operation?: `${'scan' | 'keys' | 'breach'}.${string}`;
  /** A result class, e.g. `retried`, `throttled`, `unavailable`, `succeeded`. */
  readonly outcome?: string;
  /** A scan output: `report`, `logs`, `debug`. */
  readonly output?: 'report' | 'logs' | 'debug';
}

/** What core code records metrics through. */
export interface PipelineMetrics {
  record(name: MetricName, value: number, unit: MetricUnitName, dimensions?: MetricDimensions): void;
}

/** Records nothing: for callers that do not measure (unit tests of unrelated behaviour). */
export const NO_METRICS: PipelineMetrics = Object.freeze({ record: () => undefined });

/** One recorded metric, as the in-memory recorder keeps it. */
export interface RecordedMetric {
  readonly name: MetricName;
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

/** Powertools Metrics behind {@link PipelineMetrics}. Dimensioned metrics are flushed on their own. */
export function powertoolsMetrics(metrics: Metrics): PipelineMetrics {
  return {
    record(name, value, unit, dimensions = {}) {
      const entries = Object.entries(dimensions).filter(([, v]) => v !== undefined) as [string, string][];
      if (entries.length === 0) {
        metrics.addMetric(name, MetricUnit[unit], value);
        return;
      }
      // Dimensions of the shared instance would apply to every metric of the invocation; a single
      // metric carries its own and is written at once.
      const single = metrics.singleMetric();
      for (const [key, dimension] of entries) single.addDimension(key, dimension);
      single.addMetric(name, MetricUnit[unit], value);
    },
  };
}

/** The three Powertools utilities of one function. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracer: Tracer;
}

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

/**
 * Logger, Metrics and Tracer for one function, once per cold start. `serviceName` is the default;
 * `POWERTOOLS_SERVICE_NAME` in the environment (set by the CDK function defaults) wins.
 */
export function createObservability(serviceName: string, logLevel?: string): Observability {
  const level = LOG_LEVELS.find((l) => l === logLevel?.trim().toUpperCase());
  const logger = new Logger({ serviceName, ...(level ? { logLevel: level as LogLevel } : {}) });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  const tracer = new Tracer({ serviceName });
  return { logger, metrics, tracer };
}

/** The part of the Lambda context the handlers use; the local runner may pass nothing. */
export interface InvocationContext {
  readonly awsRequestId?: string;
}

export type Handler<TEvent, TResult> = (event: TEvent, context?: InvocationContext) => Promise<TResult>;

/**
 * A Lambda entry point that builds its dependencies on first use and keeps them for the life of the
 * execution environment, for any workflow's deps. A configuration error is not cached: every
 * invocation reports it (naming the variable) until the configuration is fixed. Metrics buffered
 * during an invocation are flushed when it ends, whether it succeeded or threw.
 */
export function createLazyHandler<TDeps, TEvent, TResult>(
  buildDeps: () => TDeps,
  factory: (deps: TDeps) => Handler<TEvent, TResult>,
  observability?: () => Pick<Observability, 'metrics' | 'logger'> | undefined,
): Handler<TEvent, TResult> {
  let handler: Handler<TEvent, TResult> | undefined;
  return async (event, context) => {
    handler ??= factory(buildDeps());
    const tools = observability?.();
    try {
      return await handler(event, context);
    } finally {
      tools?.metrics.publishStoredMetrics();
    }
  };
}
