/**
 * Dependencies of the list-level handlers (prepare, summary, intake), built once per cold start
 * from the environment. Variables are validated here so a misconfigured function fails at once
 * with an error that names the variable.
 */

import { S3Client } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { DEFAULT_DOMAIN_LIST_SUFFIXES, DOMAIN_LIST_SUFFIX_PATTERN } from '#core/domain-list';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv, readBucketEnv, requireEnv } from '#core/runtime/env';
import { createServiceLogger } from '#core/runtime/logger';
import { allowSpecialUseFromEnv } from '#core/runtime/settings';
import type { IntakeDeps } from '#core/scan/intake';
import {
  type ExecutionLookup,
  LIST_SIZE_LIMIT,
  type ListDeps,
  SCAN_STATE_MACHINE_VARIABLE,
} from '#core/scan/list';
import { numberFromText } from '#core/schema';

/** INTAKE_SUFFIXES: comma-separated, lower-case, each starting with '.'; the rule and the handler must agree. */
function intakeSuffixes(env: Env): string[] {
  const raw = optionalEnv(env, 'INTAKE_SUFFIXES');
  if (raw === undefined) return [...DEFAULT_DOMAIN_LIST_SUFFIXES];
  const suffixes = raw.split(',').map((suffix) => suffix.trim().toLowerCase());
  if (suffixes.some((suffix) => !DOMAIN_LIST_SUFFIX_PATTERN.test(suffix))) {
    throw new ConfigurationError(
      'INTAKE_SUFFIXES',
      `must be comma-separated suffixes like .txt,.csv, got "${raw}"`,
    );
  }
  return suffixes;
}

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

/**
 * DescribeExecution on the ScanDomain machine's executions: a child's ARN is the machine's with
 * `:stateMachine:` turned into `:execution:` and its name appended.
 */
export function sfnExecutionLookup(sfn: SFNClient, scanStateMachineArn: string): ExecutionLookup {
  const executionPrefix = `${scanStateMachineArn.replace(':stateMachine:', ':execution:')}:`;
  return {
    async describe(executionName) {
      const execution = await sfn.send(
        new DescribeExecutionCommand({ executionArn: executionPrefix + executionName }),
      );
      const status = execution.status ?? 'UNKNOWN';
      if (status === 'SUCCEEDED') return { status, output: execution.output };
      if (status === 'FAILED' || status === 'TIMED_OUT' || status === 'ABORTED') {
        return { status, error: execution.error, cause: execution.cause };
      }
      return { status };
    },
  };
}

export function listDepsFromEnvironment(env: Env = process.env): ListDeps {
  const scanStateMachineArn = optionalEnv(env, SCAN_STATE_MACHINE_VARIABLE);
  return {
    s3: new S3Client({}),
    ...(scanStateMachineArn === undefined
      ? {}
      : { executions: sfnExecutionLookup(new SFNClient({}), scanStateMachineArn) }),
    logger: createServiceLogger(optionalEnv(env, 'POWERTOOLS_SERVICE_NAME') ?? 'domain-lists').logger,
    settings: {
      resultsBucket: readBucketEnv(env, 'RESULTS_BUCKET'),
      inputBucket: optionalEnv(env, 'INPUT_BUCKET'),
      suffixes: intakeSuffixes(env),
      maxListBytes: maxListBytes(env),
      allowSpecialUse: allowSpecialUseFromEnv(env),
    },
  };
}

export function intakeDepsFromEnvironment(env: Env = process.env): IntakeDeps {
  return {
    sfn: new SFNClient({}),
    logger: createServiceLogger(optionalEnv(env, 'POWERTOOLS_SERVICE_NAME') ?? 'domain-lists').logger,
    settings: {
      stateMachineArn: requireEnv(env, 'DOMAIN_LIST_STATE_MACHINE_ARN'),
      prefix: optionalEnv(env, 'INTAKE_PREFIX') ?? 'incoming/',
      suffixes: intakeSuffixes(env),
      inputBucket: optionalEnv(env, 'INPUT_BUCKET'),
    },
  };
}
