/**
 * What the watchlist steps need (`WatchlistDeps`) and its wiring from the environment: the results
 * bucket and the breach request limit (BREACH_MAX_EMAILS, from the breach contract), plus what each
 * step alone needs, passed in by its handler so that no function bundles the other's client: the
 * identity key (PrepareWatchlist, `identityKeyFromSecret`) and DescribeExecution on BreachReport
 * executions (WriteWatchlistSummary, `sfnExecutionLookup` over BREACH_STATE_MACHINE_ARN).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { BREACH_VARIABLES, DEFAULT_MAX_EMAILS, maxEmailsFromEnv } from '#lambdas/breach/contracts';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText, parseWith } from '#lambdas/platform/input/schema';
import type { ExecutionLookup } from '#lambdas/platform/runs/fan-out-results';
import type { IntakeDeps } from '#lambdas/platform/runs/intake';
import type { RunEventPublisher } from '#lambdas/platform/runs/run-events';
import { type Env, optionalEnv, readBucketEnv } from '#lambdas/platform/runtime/env';
import { objectIntakeDepsFromEnvironment } from '#lambdas/platform/runtime/intake-deps';
import { NO_S3_ACCESS } from '#lambdas/platform/runtime/no-access';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { watchlistInputSchema } from '#lambdas/watchlist/contracts';
import { WATCHLIST_VARIABLES } from '#lambdas/watchlist/variables';
import { WATCHLIST_LIMITS, WATCHLIST_SUFFIXES } from '#lambdas/watchlist/watchlist';
import { pipelineLoggerFromPowertools } from '../platform/runtime/logger.ts';

export interface WatchlistDeps {
  readonly s3: S3Client;
  /** Told when a run's summary is written (WriteWatchlistSummary only). */
  readonly events?: RunEventPublisher;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  readonly settings: {
    readonly resultsBucket: string;
    readonly maxEmails: number;
    /** @default DEFAULT_MAX_WATCHLIST_BYTES */
    readonly maxWatchlistBytes?: number;
    /** @default DEFAULT_MAX_WATCHLIST_ROWS */
    readonly maxWatchlistRows?: number;
    /** Request objects written at once. @default WATCHLIST_WRITE_CONCURRENCY (prepare-watchlist.ts) */
    readonly writeConcurrency?: number;
  };
  /** The key of the keyed hash that names people (Secrets Manager in AWS). */
  readonly identityKey: () => Promise<string>;
  /** Finds a child that already ran, for a redriven run (the summary step only). */
  readonly executions?: ExecutionLookup;
}

export interface WatchlistDepsOptions {
  /** Object access (`tracedS3Client(tools)`). @default NO_S3_ACCESS */
  readonly s3?: S3Client;
  /** The identity key, for PrepareWatchlist. @default - refuses with a ConfigurationError */
  readonly identityKey?: (env: Env, tools: Observability) => () => Promise<string>;
  /** Child lookups, for WriteWatchlistSummary; used when BREACH_STATE_MACHINE_ARN is set. */
  readonly executions?: (stateMachineArn: string, tools: Observability) => ExecutionLookup;
  /** Run-finished events, for WriteWatchlistSummary. @default none */
  readonly events?: (tools: Observability) => RunEventPublisher;
}

export function watchlistDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: WatchlistDepsOptions = {},
): WatchlistDeps {
  const breachStateMachineArn = optionalEnv(env, BREACH_VARIABLES.stateMachineArn);
  return {
    ...(options.events ? { events: options.events(tools) } : {}),
    s3: options.s3 ?? NO_S3_ACCESS,
    logger: pipelineLoggerFromPowertools(tools.logger),
    clock: () => new Date(),
    settings: {
      resultsBucket: readBucketEnv(env, ENV.resultsBucket),
      maxEmails: maxEmailsFromEnv(env) ?? DEFAULT_MAX_EMAILS,
      maxWatchlistBytes: limitFromEnv(env, WATCHLIST_LIMITS.maxBytes),
      maxWatchlistRows: limitFromEnv(env, WATCHLIST_LIMITS.maxRows),
    },
    ...(breachStateMachineArn !== undefined && options.executions
      ? { executions: options.executions(breachStateMachineArn, tools) }
      : {}),
    identityKey:
      options.identityKey?.(env, tools) ??
      (() =>
        Promise.reject(
          new ConfigurationError(
            WATCHLIST_VARIABLES.identityKeySecretArn,
            'this function does not read the identity key',
          ),
        )),
  };
}

/** A watchlist limit from its variable, held to the bounds the configuration uses. */
function limitFromEnv(env: Env, limit: (typeof WATCHLIST_LIMITS)[keyof typeof WATCHLIST_LIMITS]): number {
  const raw = optionalEnv(env, limit.variable);
  if (raw === undefined) return limit.default;
  const parsed = numberFromText(limit.bounds).safeParse(raw);
  if (!parsed.success)
    throw new ConfigurationError(limit.variable, parsed.error.issues[0]?.message ?? 'is invalid');
  return parsed.data;
}

/**
 * Deps of the watchlist's start function: the platform's object intake, bound to the watchlist
 * machine, prefix and suffixes, and to the watchlist's input schema.
 */
export function watchlistIntakeDepsFromEnvironment(env: Env, tools: Observability): IntakeDeps {
  return objectIntakeDepsFromEnvironment(env, tools, {
    parseInput: (event) => parseWith(watchlistInputSchema, event),
    runKind: 'watchlist',
    stateMachineVariable: WATCHLIST_VARIABLES.stateMachineArn,
    defaultSuffixes: WATCHLIST_SUFFIXES,
  });
}
