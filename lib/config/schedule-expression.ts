/**
 * The EventBridge Scheduler expression grammar: `cron(m h dom mon dow year)`, `rate(n unit)` and
 * `at(yyyy-mm-ddThh:mm:ss)`. Hand-written on purpose: no schema or cron library knows this dialect
 * (six fields, a year, exactly one '?', L/W/# forms), and CloudFormation would only refuse a bad
 * expression at deploy time, long after synth.
 */
import * as z from 'zod/mini';

/** Returns what is wrong with a Scheduler expression, or undefined when it is valid. */
export function scheduleExpressionProblem(expression: string): string | undefined {
  const match = /^(cron|rate|at)\((.*)\)$/.exec(expression.trim());
  if (!match) return "must be 'cron(...)', 'rate(...)' or 'at(...)'";
  const [, kind, body = ''] = match;
  if (kind === 'rate') return rateProblem(body);
  if (kind === 'at') return atProblem(body);
  return cronProblem(body);
}

function rateProblem(body: string): string | undefined {
  const match = /^(\d+) (minute|minutes|hour|hours|day|days)$/.exec(body.trim());
  if (!match) return "must be 'rate(<n> minute|minutes|hour|hours|day|days)'";
  const value = Number(match[1]);
  const unit = match[2] ?? '';
  if (value < 1) return 'rate value must be a positive whole number';
  const plural = unit.endsWith('s');
  if (value === 1 && plural) return `rate of 1 needs the singular unit '${unit.slice(0, -1)}'`;
  if (value !== 1 && !plural) return `rate of ${value} needs the plural unit '${unit}s'`;
  return undefined;
}

function atProblem(body: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(body);
  if (!match) return "must be 'at(yyyy-mm-ddThh:mm:ss)'";
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return 'at(...) is not a real date and time';
  }
  return undefined;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names for 1-based values (JAN=1, SUN=1). */
  readonly names?: readonly string[];
}

const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS },
  { name: 'year', min: 1970, max: 2199 },
];

function cronProblem(body: string): string | undefined {
  const parts = body.trim().split(/\s+/);
  if (parts.length !== 6) {
    return `cron needs 6 fields (minutes hours day-of-month month day-of-week year), got ${parts.length}`;
  }
  const dayOfMonth = parts[2] ?? '';
  const dayOfWeek = parts[4] ?? '';
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    return "cron needs '?' in exactly one of day-of-month and day-of-week";
  }
  for (const [index, field] of CRON_FIELDS.entries()) {
    const value = parts[index] ?? '';
    const problem = cronFieldProblem(field, value);
    if (problem) return `cron ${field.name} field '${value}' ${problem}`;
  }
  return undefined;
}

function cronFieldProblem(field: CronField, value: string): string | undefined {
  if (value === '?') {
    return field.name === 'day-of-month' || field.name === 'day-of-week'
      ? undefined
      : "may not be '?' (only day-of-month or day-of-week may)";
  }
  // Day-specific forms stand alone: L, LW, 15W (day-of-month); L, 6L, 3#2 (day-of-week).
  if (field.name === 'day-of-month' && /^(L|LW|\d{1,2}W)$/.test(value)) {
    const day = Number.parseInt(value, 10);
    return Number.isNaN(day) || (day >= 1 && day <= 31) ? undefined : 'is out of range 1-31';
  }
  if (field.name === 'day-of-week') {
    const special = /^(?:L|(\w{1,3})L|(\w{1,3})#(\d))$/.exec(value);
    if (special) {
      const day = special[1] ?? special[2];
      if (day !== undefined && cronValue(field, day) === undefined) return 'names an unknown day of week';
      if (special[3] !== undefined && (Number(special[3]) < 1 || Number(special[3]) > 5)) {
        return "uses '#' with a week outside 1-5";
      }
      return undefined;
    }
  }
  for (const item of value.split(',')) {
    const problem = cronItemProblem(field, item);
    if (problem) return problem;
  }
  return undefined;
}

function cronItemProblem(field: CronField, item: string): string | undefined {
  const [range = '', step, ...extra] = item.split('/');
  if (extra.length > 0) return "has more than one '/'";
  if (step !== undefined && !/^\d+$/.test(step)) return `has a non-numeric step '${step}'`;
  if (step !== undefined && Number(step) < 1) return 'has a zero step';
  if (range === '*') return undefined;
  const [from = '', to, ...more] = range.split('-');
  if (more.length > 0) return `has an invalid range '${range}'`;
  const start = cronValue(field, from);
  if (start === undefined) return `has '${from}' outside ${field.min}-${field.max}`;
  if (to !== undefined) {
    const end = cronValue(field, to);
    if (end === undefined) return `has '${to}' outside ${field.min}-${field.max}`;
  }
  return undefined;
}

function cronValue(field: CronField, text: string): number | undefined {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= field.min && value <= field.max ? value : undefined;
}

/**
 * A schedule-expression setting with its default, checked by `problemOf` (the Scheduler grammar,
 * or a narrower rule such as rotation's).
 */
export function expressionSetting(
  defaultExpression: string,
  problemOf: (expression: string) => string | undefined = scheduleExpressionProblem,
) {
  return z._default(
    z.string({ error: 'must be a schedule expression' }).check(
      z.superRefine((expression, context) => {
        const problem = problemOf(expression);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    ),
    defaultExpression,
  );
}
