/**
 * The poll settings of a local run, from the configuration, the demo and the flags, held to the
 * rules a deployment uses (`pollSettingsSchema`, `POLL_BOUNDS`) and named by this command's flags.
 */
import { InvalidArgumentError } from 'commander';
import { numberFromText, problemsOf } from '#lambdas/platform/input/schema';
import {
  largestDeadlineWithinBudget,
  POLL_BOUNDS,
  type PollSettingNamer,
  type PollSettings,
  pollSettingsSchema,
} from '#lambdas/scan/poll-schedule';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { UsageError } from './cli-checks.ts';

/** The demo's scans finish in a few polls: short waits, and a deadline that fits them. */
export const DEMO_POLL = { minWaitSeconds: 1, maxWaitSeconds: 2, deadlineSeconds: 600 } as const;

/** The poll settings as this command names them: its flags, or the configuration for the rest. */
const pollFlagNamer: PollSettingNamer = (field) => {
  switch (field) {
    case 'minWaitSeconds':
      return '--min-wait';
    case 'maxWaitSeconds':
      return '--max-wait';
    case 'growthFactor':
      return 'pipeline.poll.growthFactor';
    default:
      return '--deadline';
  }
};

/**
 * The poll settings of a local run: the configuration's (the deployed defaults), the demo's short
 * waits, then the flags. When the waits are given without `--deadline`, the deadline is the largest
 * that keeps the loop within the history budget (at most the configured one), and the run says so.
 * Anything else the schema refuses is a usage error naming every flag involved.
 */
export function localPollSettings(
  config: PipelineConfig,
  options: {
    readonly demo: boolean;
    readonly minWait?: number;
    readonly maxWait?: number;
    readonly deadline?: number;
  },
): { poll: PollSettings; deadlineNote: string } {
  const waits = {
    ...config.poll,
    ...(options.demo ? DEMO_POLL : {}),
    ...(options.minWait === undefined ? {} : { minWaitSeconds: options.minWait }),
    ...(options.maxWait === undefined ? {} : { maxWaitSeconds: options.maxWait }),
  };
  let deadlineNote = '';
  let deadlineSeconds = options.deadline ?? waits.deadlineSeconds;
  const waitsGiven = options.minWait !== undefined || options.maxWait !== undefined;
  if (options.deadline === undefined && waitsGiven && waits.maxWaitSeconds >= waits.minWaitSeconds) {
    const largest = largestDeadlineWithinBudget(waits);
    if (largest < deadlineSeconds) {
      deadlineNote = ` (chosen: the largest that fits the history budget for these waits; the default is ${deadlineSeconds}s)`;
      deadlineSeconds = largest;
    }
  }
  const result = pollSettingsSchema(pollFlagNamer).safeParse({ ...waits, deadlineSeconds });
  if (!result.success) {
    const problems = problemsOf(result.error, ([field]) =>
      pollFlagNamer(field as keyof PollSettings | undefined),
    );
    throw new UsageError(problems.map(({ setting, problem }) => `${setting} ${problem}`).join('; '));
  }
  return { poll: result.data, deadlineNote };
}

/** A poll flag held to the bounds the configuration and the handlers use (POLL_BOUNDS). */
export function pollFlag(flag: string, field: keyof PollSettings) {
  const schema = numberFromText(POLL_BOUNDS[field]);
  return (value: string): number => {
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      throw new InvalidArgumentError(`${flag} ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
    return parsed.data;
  };
}

/** The poll flags as the command line gives them: text, checked once the command runs. */
export interface PollFlagsText {
  readonly minWait?: string;
  readonly maxWait?: string;
  readonly deadline?: string;
}

/**
 * The poll flags checked as `pollFlag` checks them, worded as commander words a refused flag value.
 * The CLI checks them here, once a command runs, rather than while parsing: the schema behind them
 * (zod) is not loaded for `--help` or a usage error.
 */
export function parsePollFlags(flags: PollFlagsText): {
  minWait?: number;
  maxWait?: number;
  deadline?: number;
} {
  const parsed: { minWait?: number; maxWait?: number; deadline?: number } = {};
  const fields = [
    ['minWait', '--min-wait', 'minWaitSeconds'],
    ['maxWait', '--max-wait', 'maxWaitSeconds'],
    ['deadline', '--deadline', 'deadlineSeconds'],
  ] as const;
  for (const [key, flag, field] of fields) {
    const value = flags[key];
    if (value === undefined) continue;
    try {
      parsed[key] = pollFlag(flag, field)(value);
    } catch (error) {
      throw new UsageError(
        `option '${flag} <seconds>' argument '${value}' is invalid. ${(error as Error).message}`,
      );
    }
  }
  return parsed;
}
