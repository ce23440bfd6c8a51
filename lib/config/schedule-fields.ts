/**
 * The settings every EventBridge Scheduler schedule of the pipeline has, whatever it starts (a
 * domain-list run, a watchlist run): one definition, spread into each kind's schema.
 */
import * as z from 'zod/mini';
import { boundedNumber, describeValue, nonEmptyString, strictBoolean } from '#lambdas/platform/input/schema';
import { scheduleExpressionProblem } from './schedule-expression.ts';

/** Schedule and list names: `[A-Za-z0-9_-]{1,64}`. */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

let timeZones: Set<string> | undefined;

function isKnownTimeZone(zone: string): boolean {
  timeZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  return timeZones.has(zone);
}

/** Defaults of every schedule setting that may be left out. */
export const DEFAULT_SCHEDULE_SETTINGS = {
  timeZone: 'UTC',
  flexibleWindowMinutes: 15,
  maxRetryAttempts: 3,
  maxEventAgeSeconds: 3600,
  enabled: true,
} as const;

export const scheduleFields = {
  /** Unique name, `[A-Za-z0-9_-]{1,64}`; appears in the run's input and its S3 results path. */
  name: z.string().check(z.regex(NAME_PATTERN)),
  /** `cron(m h dom mon dow year)`, `rate(n unit)` or `at(yyyy-mm-ddThh:mm:ss)`. */
  expression: z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? 'is required'
          : `must be a non-empty string (got ${describeValue(issue.input)})`,
    })
    .check(
      z.superRefine((expression, context) => {
        const problem = scheduleExpressionProblem(expression);
        if (problem)
          context.addIssue({ code: 'custom', message: `${problem} (got ${describeValue(expression)})` });
      }),
    ),
  /** IANA time zone the expression is evaluated in. @default 'UTC' */
  timeZone: z._default(
    nonEmptyString().check(
      z.refine(isKnownTimeZone, {
        error: (issue) =>
          `is not an IANA time zone such as Europe/Berlin (got ${describeValue(issue.input)})`,
      }),
    ),
    DEFAULT_SCHEDULE_SETTINGS.timeZone,
  ),
  /** Scheduler's flexible time window in minutes (0 = off). @default 15 */
  flexibleWindowMinutes: z._default(
    boundedNumber({ min: 0, max: 1440, integer: true }),
    DEFAULT_SCHEDULE_SETTINGS.flexibleWindowMinutes,
  ),
  /** Retries of a failed start before the fire goes to the dead-letter queue. @default 3 */
  maxRetryAttempts: z._default(
    boundedNumber({ min: 0, max: 185, integer: true }),
    DEFAULT_SCHEDULE_SETTINGS.maxRetryAttempts,
  ),
  /** Give up on an undelivered fire after this many seconds. @default 3600 */
  maxEventAgeSeconds: z._default(
    boundedNumber({ min: 60, max: 86_400, integer: true }),
    DEFAULT_SCHEDULE_SETTINGS.maxEventAgeSeconds,
  ),
  /** A disabled schedule is deployed but does not fire. @default true */
  enabled: z._default(strictBoolean(), DEFAULT_SCHEDULE_SETTINGS.enabled),
};
