/**
 * Secrets Manager's own rules for a rotation schedule and its window, checked at synth because
 * CloudFormation would only refuse them at deploy (or, for the window, on the first rotation).
 *
 * Sources:
 * - RotationRulesType (Duration, ScheduleExpression):
 *   https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_RotationRulesType.html
 *   "The window must not extend into the next rotation window or the next UTC day."
 * - Rotation schedules (user guide):
 *   https://docs.aws.amazon.com/secretsmanager/latest/userguide/rotate-secrets_schedule.html
 *   rate(N hours|days), "as often as every four hours", "the maximum rotation period is 999 days",
 *   windows start on the hour (at midnight for a rate), a window may be as small as one hour;
 *   cron minutes "must be 0", year "must be *", day-of-month takes `, - * ? / L` (no W), and
 *   "a cron expression that includes increments of hours resets each day".
 */
import { describeValue } from '#lambdas/platform/input/schema';
import { scheduleExpressionProblem } from './schedule-expression.ts';

/** Secrets Manager rotates at most this often. */
export const MIN_ROTATION_HOURS = 4;
/** The longest rate(N days) the user guide allows. */
export const MAX_ROTATION_DAYS = 999;

const RATE = /^rate\((\d+) (day|days|hour|hours)\)$/;

/** A rotation schedule as Secrets Manager sees it. */
type RotationSchedule =
  | { readonly kind: 'rate-days'; readonly days: number }
  | { readonly kind: 'rate-hours'; readonly hours: number }
  | { readonly kind: 'cron'; readonly startHours: readonly number[]; readonly daily: boolean };

/** Returns what Secrets Manager would refuse in `expression`, or undefined. */
export function rotationScheduleProblem(expression: string): string | undefined {
  const parsed = parseRotationSchedule(expression);
  return typeof parsed === 'string' ? parsed : undefined;
}

/** Days between two rotations of a rate schedule; undefined for cron (no fixed period). */
export function rotationPeriodDays(expression: string): number | undefined {
  const parsed = parseRotationSchedule(expression);
  if (typeof parsed === 'string' || parsed.kind === 'cron') return undefined;
  return parsed.kind === 'rate-days' ? parsed.days : parsed.hours / 24;
}

/**
 * What is wrong with a `windowHours`-long rotation window on `expression`, or undefined. An
 * invalid expression is reported by {@link rotationScheduleProblem}, not here.
 */
export function rotationWindowProblem(expression: string, windowHours: number): string | undefined {
  const parsed = parseRotationSchedule(expression);
  if (typeof parsed === 'string') return undefined;
  const got = `(got ${windowHours})`;
  if (parsed.kind === 'rate-hours') {
    // The user guide's check for an hourly rate: the window is at most the hours between rotations.
    if (windowHours > parsed.hours) {
      return `must not reach into the next rotation window: ${expression} opens one every ${parsed.hours} hours, so at most ${parsed.hours} ${got}`;
    }
    return undefined;
  }
  // A rate in days opens its window at midnight UTC; a cron at each of its start hours.
  const starts = parsed.kind === 'rate-days' ? [0] : parsed.startHours;
  const last = starts.at(-1) ?? 0;
  if (last + windowHours > 24) {
    return `must not reach into the next UTC day: ${expression} opens a window at ${hour(last)} UTC, so at most ${24 - last} ${got}`;
  }
  for (const [index, start] of starts.entries()) {
    const next = starts[index + 1];
    if (next !== undefined && start + windowHours > next) {
      return `must not reach into the next rotation window: ${expression} opens windows at ${hour(start)} and ${hour(next)} UTC, so at most ${next - start} ${got}`;
    }
  }
  return undefined;
}

function hour(value: number): string {
  return `${String(value).padStart(2, '0')}:00`;
}

function parseRotationSchedule(expression: string): RotationSchedule | string {
  const rate = RATE.exec(expression);
  if (rate) {
    const amount = Number(rate[1]);
    if (rate[2]?.startsWith('day') === true) {
      if (amount < 1 || amount > MAX_ROTATION_DAYS) return `must rotate every 1 to ${MAX_ROTATION_DAYS} days`;
      return { kind: 'rate-days', days: amount };
    }
    if (amount < MIN_ROTATION_HOURS || amount > 23) {
      return `must rotate every ${MIN_ROTATION_HOURS} to 23 hours (or use days)`;
    }
    return { kind: 'rate-hours', hours: amount };
  }
  const cron = /^cron\((.+)\)$/.exec(expression);
  if (!cron)
    return `must be rate(N days), rate(N hours) or a six-field cron(...) (got ${describeValue(expression)})`;
  // The Scheduler grammar is the same dialect; Secrets Manager narrows three of its fields.
  const grammar = scheduleExpressionProblem(expression);
  if (grammar) return `${grammar} (got ${describeValue(expression)})`;
  const [minutes, hours = '', dayOfMonth = '', month = '', dayOfWeek = '', year] = (cron[1] ?? '')
    .trim()
    .split(/\s+/);
  if (minutes !== '0')
    return `cron minutes must be 0: Secrets Manager opens rotation windows on the hour (got ${describeValue(expression)})`;
  if (year !== '*')
    return `cron year must be *: Secrets Manager does not rotate more than a year apart (got ${describeValue(expression)})`;
  if (dayOfMonth.includes('W'))
    return `cron day-of-month may not use W in Secrets Manager (got ${describeValue(expression)})`;
  const startHours = cronHours(hours);
  const daily =
    month === '*' && ((dayOfMonth === '*' && dayOfWeek === '?') || (dayOfMonth === '?' && dayOfWeek === '*'));
  const gaps = startHours.slice(1).map((start, index) => start - (startHours[index] ?? 0));
  // Across midnight only when every day rotates; other days' gaps are at least a day.
  if (daily && startHours.length > 0) gaps.push(24 - (startHours.at(-1) ?? 0) + (startHours[0] ?? 0));
  const shortest = Math.min(...gaps);
  if (shortest < MIN_ROTATION_HOURS) {
    return `must not rotate more often than every ${MIN_ROTATION_HOURS} hours: ${expression} has rotations ${shortest} hours apart`;
  }
  return { kind: 'cron', startHours, daily };
}

/** The start hours a cron hours field selects in one day (increments reset each day), sorted. */
function cronHours(field: string): number[] {
  const hours = new Set<number>();
  for (const item of field.split(',')) {
    const [range = '*', stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    const [fromText, toText] = range.split('-');
    const from = range === '*' ? 0 : Number(fromText);
    // `4/12` runs to the end of the day; `8-20/4` to 20; a wrapping range `22-2` runs past midnight.
    const to =
      range === '*' || (toText === undefined && stepText !== undefined) ? 23 : Number(toText ?? fromText);
    const span = to >= from ? to - from : to + 24 - from;
    for (let offset = 0; offset <= span; offset += step) hours.add((from + offset) % 24);
  }
  return [...hours].sort((a, b) => a - b);
}
