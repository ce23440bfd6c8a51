/**
 * The intake's deps from the Lambda environment: the state machine to start, the key prefix and
 * suffixes that mark an input, and the pause switch. Variables are validated here so a
 * misconfigured function fails at once with an error that names the variable.
 */
import { SFNClient } from '@aws-sdk/client-sfn';
import { ConfigurationError } from '#lambdas/platform/errors';
import type { IntakeDeps } from '#lambdas/platform/runs/intake';
import { INTAKE_SUFFIX_PATTERN } from '#lambdas/platform/runs/intake-suffixes';
import { type Env, optionalEnv, requireEnv } from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { pauseSwitchFromEnvironment } from '#lambdas/platform/runtime/pause-deps';
import { ENV } from '#lambdas/platform/runtime/variables';

/**
 * INTAKE_SUFFIXES: comma-separated, lower-case, each starting with '.'; the rule and the handler
 * must agree. Unset: the workflow's `defaults`.
 */
export function intakeSuffixes(env: Env, defaults: readonly string[]): string[] {
  const raw = optionalEnv(env, ENV.intakeSuffixes);
  if (raw === undefined) return [...defaults];
  const suffixes = raw.split(',').map((suffix) => suffix.trim().toLowerCase());
  if (suffixes.some((suffix) => !INTAKE_SUFFIX_PATTERN.test(suffix))) {
    throw new ConfigurationError(
      ENV.intakeSuffixes,
      `must be comma-separated suffixes like .txt,.csv, got "${raw}"`,
    );
  }
  return suffixes;
}

/** What a workflow tells the object intake about itself. */
export interface IntakeWorkflow extends Pick<IntakeDeps, 'parseInput' | 'runKind'> {
  /** The variable that carries the ARN of the machine its runs start (the workflow's own name). */
  readonly stateMachineVariable: string;
  /** The suffixes that mark its input when INTAKE_SUFFIXES is unset. */
  readonly defaultSuffixes: readonly string[];
}

/**
 * Deps of an intake handler, which starts runs for uploads and schedule fires; the workflow gives
 * its input schema, what its logs call a run, its machine's variable and its default suffixes.
 */
export function objectIntakeDepsFromEnvironment(
  env: Env,
  tools: Observability,
  workflow: IntakeWorkflow,
): IntakeDeps {
  const pause = pauseSwitchFromEnvironment(env, tools);
  const { stateMachineVariable, defaultSuffixes, ...input } = workflow;
  return {
    ...(pause === undefined ? {} : { pause }),
    sfn: tools.tracer.captureAWSv3Client(new SFNClient({})),
    ...input,
    logger: pipelineLoggerFromPowertools(tools.logger),
    settings: {
      stateMachineArn: requireEnv(env, stateMachineVariable),
      prefix: optionalEnv(env, ENV.intakePrefix) ?? 'incoming/',
      suffixes: intakeSuffixes(env, defaultSuffixes),
      inputBucket: optionalEnv(env, ENV.inputBucket),
    },
  };
}
