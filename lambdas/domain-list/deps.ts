/**
 * Dependencies of the list-level handlers (prepare, summary, intake), built once per cold start
 * from the environment. Variables are validated here so a misconfigured function fails at once
 * with an error that names the variable.
 */

import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { ExecutionLookup } from '#lambdas/platform/runs/fan-out-results';
import { sfnExecutionLookup } from '#lambdas/platform/runtime/execution-lookup';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

export { sfnExecutionLookup } from '#lambdas/platform/runtime/execution-lookup';

import { parseDomainListInput } from '#lambdas/domain-list/contracts';
import { DEFAULT_DOMAIN_LIST_SUFFIXES, LIST_SIZE_LIMIT } from '#lambdas/domain-list/domain-list';
import { DOMAIN_LIST_VARIABLES } from '#lambdas/domain-list/variables';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText } from '#lambdas/platform/input/schema';
import type { IntakeDeps } from '#lambdas/platform/runs/intake';
import type { RunEventPublisher } from '#lambdas/platform/runs/run-events';
import { type Env, optionalEnv, readBucketEnv } from '#lambdas/platform/runtime/env';
import { intakeSuffixes, objectIntakeDepsFromEnvironment } from '#lambdas/platform/runtime/intake-deps';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { createObservability, type Observability } from '#lambdas/platform/runtime/observability';
import { allowSpecialUseFromEnv } from '#lambdas/platform/runtime/settings';
import { ENV } from '#lambdas/platform/runtime/variables';
import { SCAN_VARIABLES } from '#lambdas/scan/contracts';

export interface ListSettings {
  readonly resultsBucket: string;
  /** When set, S3 sources must name this bucket: a list elsewhere is not ours to read. */
  readonly inputBucket: string | undefined;
  /** Object-key suffixes accepted as domain lists. @default DEFAULT_DOMAIN_LIST_SUFFIXES */
  readonly suffixes?: readonly string[];
  /** @default DEFAULT_MAX_DOMAINS (100,000) */
  readonly maxDomains?: number;
  /** A list object larger than this is refused before a byte is read. @default DEFAULT_MAX_LIST_BYTES */
  readonly maxListBytes?: number;
  /** Special-use suffixes accepted anyway (`scan.allowSpecialUseDomains`). @default [] */
  readonly allowSpecialUse?: readonly string[];
}

export interface ListDeps {
  readonly s3: S3Client;
  /** Looks up earlier child executions (a redriven run); without it they stay errors. */
  readonly executions?: ExecutionLookup;
  readonly logger: VendorLogger;
  readonly settings: ListSettings;
  readonly clock?: () => Date;
  /** Told when a run's summary is written (WriteListSummary only). */
  readonly events?: RunEventPublisher;
}

/** The service name of the list functions when the environment names none. */
const LIST_SERVICE = 'domain-lists';

/** DOMAIN_LIST_MAX_BYTES, held to the bounds the configuration uses. */
function maxListBytes(env: Env): number {
  const raw = optionalEnv(env, LIST_SIZE_LIMIT.variable);
  if (raw === undefined) return LIST_SIZE_LIMIT.default;
  const parsed = numberFromText(LIST_SIZE_LIMIT.bounds).safeParse(raw);
  if (!parsed.success) {
    throw new ConfigurationError(LIST_SIZE_LIMIT.variable, parsed.error.issues[0]?.message ?? 'is invalid');
  }
  return parsed.data;
}

/** Deps of the list handlers (prepare, summary), logged, measured and traced through `tools`. */
export function listDepsFromEnvironment(
  env: Env = process.env,
  tools: Observability = createObservability(env, LIST_SERVICE),
  options: { readonly events?: (tools: Observability) => RunEventPublisher } = {},
): ListDeps {
  const scanStateMachineArn = optionalEnv(env, SCAN_VARIABLES.stateMachineArn);
  return {
    ...(options.events ? { events: options.events(tools) } : {}),
    s3: tools.tracer.captureAWSv3Client(new S3Client({})),
    ...(scanStateMachineArn === undefined
      ? {}
      : {
          executions: sfnExecutionLookup(
            tools.tracer.captureAWSv3Client(new SFNClient({})),
            scanStateMachineArn,
          ),
        }),
    logger: pipelineLoggerFromPowertools(tools.logger),
    settings: {
      resultsBucket: readBucketEnv(env, ENV.resultsBucket),
      inputBucket: optionalEnv(env, ENV.inputBucket),
      suffixes: intakeSuffixes(env, DEFAULT_DOMAIN_LIST_SUFFIXES),
      maxListBytes: maxListBytes(env),
      allowSpecialUse: allowSpecialUseFromEnv(env),
    },
  };
}

/** Deps of the domain-list intake handler, which starts list runs for uploads and schedule fires. */
export function intakeDepsFromEnvironment(
  env: Env = process.env,
  tools: Observability = createObservability(env, LIST_SERVICE),
): IntakeDeps {
  return objectIntakeDepsFromEnvironment(env, tools, {
    parseInput: parseDomainListInput,
    runKind: 'domain list',
    stateMachineVariable: DOMAIN_LIST_VARIABLES.stateMachineArn,
    defaultSuffixes: DEFAULT_DOMAIN_LIST_SUFFIXES,
  });
}
