/**
 * The `rotation` section: when Secrets Manager rotates the vendor org key, where the new key is in
 * the vendor's answer, who else gets it, and when the key counts as overdue.
 */
import * as z from 'zod/mini';
import { boundedNumber, describeValue } from '#core/schema';
import { expressionSetting } from './schedule-expression.ts';
import { section } from './schema.ts';

/**
 * Secrets Manager's rotation schedules: `rate(N days)` (1..1000), `rate(N hours)` (4..23) or a
 * six-field `cron(...)`. Returns the problem, or undefined.
 */
export function rotationScheduleProblem(expression: string): string | undefined {
  const rate = /^rate\((\d+) (day|days|hour|hours)\)$/.exec(expression);
  if (rate) {
    const amount = Number(rate[1]);
    const days = rate[2]?.startsWith('day') === true;
    if (days && (amount < 1 || amount > 1000)) return 'must rotate every 1 to 1000 days';
    if (!days && (amount < 4 || amount > 23)) return 'must rotate every 4 to 23 hours (or use days)';
    return undefined;
  }
  const cron = /^cron\((.+)\)$/.exec(expression);
  if (cron && cron[1]?.trim().split(/\s+/).length === 6) return undefined;
  return `must be rate(N days), rate(N hours) or a six-field cron(...) (got ${describeValue(expression)})`;
}

/** Days between two rotations of a rate schedule; undefined for cron (no fixed period). */
export function rotationPeriodDays(expression: string): number | undefined {
  const rate = /^rate\((\d+) (day|days|hour|hours)\)$/.exec(expression);
  if (!rate) return undefined;
  return rate[2]?.startsWith('day') === true ? Number(rate[1]) : Number(rate[1]) / 24;
}

const secretArn = z.string().check(
  z.regex(/^arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+$/, {
    error: (issue) => `must be a Secrets Manager secret ARN (got ${describeValue(issue.input)})`,
  }),
);

export const rotationSchema = section({
  /** Attach native rotation to the org key's secret. @default true */
  enabled: z._default(z.boolean({ error: 'must be true or false' }), true),
  /** When Secrets Manager rotates. @default 'rate(30 days)' */
  schedule: expressionSetting('rate(30 days)', rotationScheduleProblem),
  /** How long the rotation window stays open after the scheduled time, in hours. @default 4 */
  windowHours: z._default(boundedNumber({ min: 1, max: 24, integer: true }), 4),
  /** Dot path of the new key in the rotate answer, e.g. `data.key`. @default search common names */
  newKeyFieldPath: z.optional(
    z.string().check(z.regex(/^[\w-]+(\.[\w-]+)*$/, { error: 'must be a dot path such as data.key' })),
  ),
  /** Secrets integrations read, written with the new value after every rotation. @default [] */
  mirrorSecretArns: z._default(z.array(secretArn), () => []),
  /**
   * The key-age alarm fires past this many days. @default the rate's period + 3 (required for cron)
   */
  maxKeyAgeDays: z.optional(boundedNumber({ min: 1, max: 1100 })),
}).check(
  z.superRefine((rotation, context) => {
    if (rotation.maxKeyAgeDays === undefined && rotationPeriodDays(rotation.schedule) === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['maxKeyAgeDays'],
        message: 'is required with a cron schedule (the key-age alarm needs to know when a key is overdue)',
      });
    }
  }),
);

export type RotationConfig = z.output<typeof rotationSchema>;

/** Days past which the key counts as not rotated: the configured value, or the period plus a margin. */
export function maxKeyAgeDays(rotation: RotationConfig): number {
  return rotation.maxKeyAgeDays ?? (rotationPeriodDays(rotation.schedule) ?? 30) + 3;
}
