/**
 * The intake's deps from the Lambda environment: the state machine to start, the key prefix and
 * suffixes that mark an input, and the pause switch. Variables are validated here so a
 * misconfigured function fails at once with an error that names the variable.
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import { ConfigurationError } from '#lambdas/platform/errors';
import type { IntakeDeps } from '#lambdas/platform/intake';
import { DEFAULT_DOMAIN_LIST_SUFFIXES, DOMAIN_LIST_SUFFIX_PATTERN } from '#lambdas/platform/intake-suffixes';
import { type Env, optionalEnv, requireEnv } from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { pauseSwitchFromEnvironment } from '#lambdas/platform/runtime/pause-deps';
import { ENV } from '#lambdas/platform/runtime/variables';

/** INTAKE_SUFFIXES: comma-separated, lower-case, each starting with '.'; the rule and the handler must agree. */
export function intakeSuffixes(env: Env): string[] {
  const raw = optionalEnv(env, ENV.intakeSuffixes);
  if (raw === undefined) return [...DEFAULT_DOMAIN_LIST_SUFFIXES];
  const suffixes = raw.split(',').map((suffix) => suffix.trim().toLowerCase());
  if (suffixes.some((suffix) => !DOMAIN_LIST_SUFFIX_PATTERN.test(suffix))) {
    throw new ConfigurationError(
      ENV.intakeSuffixes,
      `must be comma-separated suffixes like .txt,.csv, got "${raw}"`,
    );
  }
  return suffixes;
}

/**
 * Deps of an intake handler, which starts runs for uploads and schedule fires; the workflow gives
 * its input schema and what its logs call a run. The variables keep the domain-list names the
 * watchlist intake shares.
 */
export function objectIntakeDepsFromEnvironment(
  env: Env,
  tools: Observability,
  workflow: Pick<IntakeDeps, 'parseInput' | 'runKind'>,
): IntakeDeps {
  const pause = pauseSwitchFromEnvironment(env, tools);
  return {
    ...(pause === undefined ? {} : { pause }),
    sfn: tools.tracer.captureAWSv3Client(new SFNClient({})),
    ...workflow,
    logger: pipelineLoggerFromPowertools(tools.logger),
    settings: {
      stateMachineArn: requireEnv(env, ENV.domainListStateMachineArn),
      prefix: optionalEnv(env, ENV.intakePrefix) ?? 'incoming/',
      suffixes: intakeSuffixes(env),
      inputBucket: optionalEnv(env, ENV.inputBucket),
    },
  };
}
