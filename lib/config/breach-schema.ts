/**
 * The `breach` section: how the breach workflow runs. Its own file, as the section grows with
 * watchlists and reconciliation, and schema.ts holds the scan side.
 */
import * as z from 'zod/mini';
import { DEFAULT_MAX_EMAILS } from '#lambdas/breach/contracts';
import { BREACH_LIMITS } from '#lambdas/breach/limits';
import { BREACH_RECONCILE_LIMITS } from '#lambdas/breach/reconcile-settings';
import { boundedNumber, describeValue, nonEmptyString, section } from '#lambdas/platform/input/schema';
import { WATCHLIST_LIMITS, watchlistFormatOf } from '#lambdas/watchlist/watchlist-format';
import { intakePrefixProblem } from './intake-prefix.ts';
import { expressionSetting } from './schedule-expression.ts';
import { scheduleFields } from './schedule-fields.ts';

/** A schedule that runs one watchlist object of the input bucket. */
const breachScheduleSchema = section({
  ...scheduleFields,
  /** The watchlist (.csv or .json) in the input bucket each fire reports on. */
  watchlistKey: nonEmptyString().check(
    z.refine((key) => watchlistFormatOf(key) !== undefined, {
      error: (issue) => `must end with .csv or .json (got ${describeValue(issue.input)})`,
    }),
  ),
});

/** A bounded numeric setting whose bounds and default live with the limit, in one place. */
function limitSetting(limit: {
  readonly bounds: Parameters<typeof boundedNumber>[0];
  readonly default: number;
}) {
  return z._default(boundedNumber(limit.bounds), limit.default);
}

export const breachSchema = section({
  /** Distinct addresses one report may cover (BREACH_MAX_EMAILS); the vendor client takes 100. @default 50 */
  maxEmails: z._default(boundedNumber({ min: 1, max: 100, integer: true }), DEFAULT_MAX_EMAILS),
  /** Key prefix in the input bucket under which an upload is a watchlist. @default 'watchlists/' */
  watchlistPrefix: z._default(
    z.string({ error: (issue) => `must be a non-empty string (got ${describeValue(issue.input)})` }).check(
      z.superRefine((prefix, context) => {
        const problem = intakePrefixProblem(prefix);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    ),
    'watchlists/',
  ),
  /** A watchlist larger than this is refused before it is read, with a summary saying why. @default 5 MiB */
  maxWatchlistBytes: limitSetting(WATCHLIST_LIMITS.maxBytes),
  /** People per watchlist; rows beyond are accounted for as invalid. @default 10000 */
  maxWatchlistRows: limitSetting(WATCHLIST_LIMITS.maxRows),
  /** A report download is cut past this many bytes, as it streams (after gzip/br decoding). @default 64 MiB */
  maxArchiveBytes: limitSetting(BREACH_LIMITS.maxArchiveBytes),
  /** A report ZIP whose entries inflate to more than this in total is refused. @default 256 MiB */
  maxUncompressedBytes: limitSetting(BREACH_LIMITS.maxUncompressedBytes),
  /** A ZIP entry above 1 MiB that inflates more than this many times its size is refused. @default 100 */
  maxCompressionRatio: limitSetting(BREACH_LIMITS.maxCompressionRatio),
  /** A vendor value larger than this (UTF-8 bytes) stays in S3; the state payload carries its reference. @default 1024 */
  maxInlineValueBytes: limitSetting(BREACH_LIMITS.maxInlineValueBytes),
  /** People reported on at once by a watchlist run (the Distributed Map's MaxConcurrency). @default 5 */
  maxConcurrency: z._default(boundedNumber({ min: 1, max: 100, integer: true }), 5),
  /** When reconciliation archives reports the workflow never did. @default 'rate(1 day)' */
  reconcileSchedule: expressionSetting('rate(1 day)'),
  /**
   * Report archives one reconciliation run starts (failed ones count), four at a time; the rest
   * wait for the next run, and none starts with less than 5 minutes left in the invocation.
   * @default 1000
   */
  reconcileMaxArchivesPerRun: limitSetting(BREACH_RECONCILE_LIMITS.maxArchivesPerRun),
  /** EventBridge Scheduler schedules that each start a watchlist run. @default [] */
  schedules: z._default(
    z.array(breachScheduleSchema).check(
      z.superRefine((schedules, context) => {
        const seen = new Set<string>();
        schedules.forEach((schedule, index) => {
          if (seen.has(schedule.name)) {
            context.addIssue({
              code: 'custom',
              path: [index, 'name'],
              message: `is used twice (got ${describeValue(schedule.name)})`,
            });
          }
          seen.add(schedule.name);
        });
      }),
    ),
    () => [],
  ),
});

export type BreachConfig = z.output<typeof breachSchema>;
