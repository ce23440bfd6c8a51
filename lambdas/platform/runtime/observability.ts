/**
 * Powertools Logger, Metrics and Tracer, created in one place and handed to core code as
 * parameters (core never creates its own). Core code sees two small interfaces: `PipelineLogger`-style
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
import type { Context } from 'aws-lambda';
import { METRIC, METRICS_NAMESPACE, type PipelineMetrics } from '#lambdas/platform/metrics';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';

import { ENV } from '#lambdas/platform/runtime/variables';
import type { VendorAttemptObserver } from '#lambdas/vendor-api/transport/types';

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
 * Logger, Metrics and Tracer for one function, once per cold start, configured from the variables
 * the function defaults set (`POWERTOOLS_SERVICE_NAME`, `POWERTOOLS_LOG_LEVEL`). Outside Lambda the
 * Tracer is a no-op (Powertools checks the execution environment itself).
 */
export function createObservability(
  env: Env = process.env,
  defaultService = 'security-pipeline',
): Observability {
  const serviceName = optionalEnv(env, ENV.serviceName) ?? defaultService;
  const logLevel = optionalEnv(env, ENV.logLevel)?.toUpperCase();
  const level = LOG_LEVELS.find((l) => l === logLevel);
  const logger = new Logger({ serviceName, ...(level ? { logLevel: level as LogLevel } : {}) });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  // Responses carry domains and scan ids; traces keep timings and errors only.
  const tracer = new Tracer({ serviceName, captureHTTPsRequests: true });
  return { logger, metrics, tracer };
}

/** Retries and final failures of vendor calls as metrics: dimensions are the operation and a class word. */
export function vendorMetricsObserver(metrics: PipelineMetrics): VendorAttemptObserver {
  return {
    retrying: (event) =>
      metrics.record(METRIC.vendorRetries, 1, 'Count', {
        operation: event.operation,
        outcome: event.failure,
      }),
    failed: (event) =>
      metrics.record(METRIC.vendorErrors, 1, 'Count', { operation: event.operation, outcome: event.failure }),
  };
}

/** The part of the Lambda context the handlers use; the local runner may pass nothing. */
export interface InvocationContext {
  readonly awsRequestId?: string;
  readonly functionName?: string;
  /** Lambda's: milliseconds before the invocation times out (long-running handlers stop in time). */
  readonly getRemainingTimeInMillis?: () => number;
}

export type Handler<TEvent, TResult> = (event: TEvent, context?: InvocationContext) => Promise<TResult>;

export interface LazyHandlerOptions<TDeps, TEvent, TResult> {
  /** Builds the dependencies from the environment, with the function's Powertools utilities. */
  readonly deps: (tools: Observability) => TDeps;
  /** The handler over those dependencies (what the tests and the local runner call directly). */
  readonly handler: (deps: TDeps) => Handler<TEvent, TResult>;
  /** @default createObservability() */
  readonly observability?: () => Observability;
}

/**
 * The Lambda entry point of every handler. Once per execution environment it creates Logger,
 * Metrics and Tracer and builds the dependencies; a configuration error is not cached, so every
 * invocation reports it (naming the variable) until the configuration is fixed. Each invocation:
 * - runs in its own X-Ray subsegment with the cold-start and service annotations and the error, if
 *   any, as metadata (never the response: it carries domains);
 * - adds the Lambda context (request id, function) to every log line;
 * - flushes the metrics it recorded, whether it succeeded or threw.
 *
 * Each entry is the last statement of its step's module, so other handlers import that module (the
 * reconciler imports the fetch step). Call it as `export const handler = /* @__PURE__ *\/
 * createLazyHandler(...)`: the call has no effect until invoked, and the mark lets esbuild leave the
 * entry and its wiring out of every other handler's bundle (it does not carry a function's own
 * no-side-effects mark across modules). test/architecture/layout.test.ts holds every entry to it.
 */
export function createLazyHandler<TDeps, TEvent, TResult>(
  options: LazyHandlerOptions<TDeps, TEvent, TResult>,
): Handler<TEvent, TResult> {
  let tools: Observability | undefined;
  let handler: Handler<TEvent, TResult> | undefined;
  return async (event, context) => {
    tools ??= (options.observability ?? createObservability)();
    const { logger, metrics, tracer } = tools;
    if (context?.functionName !== undefined) logger.addContext(context as Context);
    const tracing = tracer.isTracingEnabled();
    const segment = tracing ? tracer.getSegment() : undefined;
    const subsegment = segment?.addNewSubsegment(`## ${context?.functionName ?? 'handler'}`);
    if (subsegment) tracer.setSegment(subsegment);
    try {
      if (tracing) {
        tracer.annotateColdStart();
        tracer.addServiceNameAnnotation();
      }
      if (handler === undefined) {
        metrics.captureColdStartMetric();
        handler = options.handler(options.deps(tools));
      }
      return await handler(event, context);
    } catch (error) {
      if (tracing) tracer.addErrorAsMetadata(error as Error);
      throw error;
    } finally {
      subsegment?.close();
      if (segment) tracer.setSegment(segment);
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
