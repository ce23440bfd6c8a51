/**
 * The `rotation` section: when Secrets Manager rotates the vendor org key, where the new key is in
 * the vendor's answer, who else gets it, and when the key counts as overdue. Secrets Manager's
 * rules for the schedule and its window are in rotation-rules.ts.
 */
import * as z from 'zod/mini';
import { boundedNumber, describeValue, section } from '#lambdas/platform/input/schema';
import { rotationPeriodDays, rotationScheduleProblem, rotationWindowProblem } from './rotation-rules.ts';
import { expressionSetting } from './schedule-expression.ts';

export { rotationPeriodDays, rotationScheduleProblem, rotationWindowProblem } from './rotation-rules.ts';

const SECRET_ARN = /^arn:aws[\w-]*:secretsmanager:([a-z0-9-]+):(\d{12}):secret:[\w/+=.@-]+$/;
/** A key ARN, not an alias: IAM grants key use by key ARN only. */
const KMS_KEY_ARN = /^arn:aws[\w-]*:kms:([a-z0-9-]+):(\d{12}):key\/[\w-]+$/;

const secretArn = z.string().check(
  z.regex(SECRET_ARN, {
    error: (issue) => `must be a Secrets Manager secret ARN (got ${describeValue(issue.input)})`,
  }),
);

const kmsKeyArn = z.string().check(
  z.regex(KMS_KEY_ARN, {
    error: (issue) =>
      `must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>; an alias cannot be granted) (got ${describeValue(issue.input)})`,
  }),
);

/** A mirror written after every rotation; `kmsKeyArn` when its secret is encrypted with a customer managed key. */
export interface MirrorSecret {
  readonly secretArn: string;
  readonly kmsKeyArn?: string;
}

const mirrorEntry = z.union([
  secretArn,
  section({
    /** The mirror secret's ARN. */
    secretArn,
    /** The customer managed key that encrypts it. @default the AWS managed key (no grant needed) */
    kmsKeyArn: z.optional(kmsKeyArn),
  }).check(
    z.superRefine((entry, context) => {
      if (entry.kmsKeyArn === undefined) return;
      // "You can choose any symmetric encryption customer managed key in the AWS account and
      // Region" (https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html).
      const secretRegion = SECRET_ARN.exec(entry.secretArn)?.[1];
      const keyRegion = KMS_KEY_ARN.exec(entry.kmsKeyArn)?.[1];
      if (secretRegion !== keyRegion) {
        context.addIssue({
          code: 'custom',
          path: ['kmsKeyArn'],
          message: `must be in the secret's Region ${secretRegion} (got a key in ${keyRegion})`,
        });
      }
    }),
  ),
]);

/**
 * The rotation function's timeout. One invocation must hold the rotate call (its answer may come
 * slowly), storing the answer, and the whole propagation window, so the window's first attempt can
 * end it: see ROTATION_CALL_RESERVE_SECONDS.
 */
export const ROTATION_FUNCTION_TIMEOUT_SECONDS = 600;
/** What the propagation window leaves of the function's timeout: the rotate call, the puts, the mirrors. */
export const ROTATION_CALL_RESERVE_SECONDS = 120;
export const MAX_KEY_PROPAGATION_SECONDS = ROTATION_FUNCTION_TIMEOUT_SECONDS - ROTATION_CALL_RESERVE_SECONDS;

export const rotationSchema = z.pipe(
  section({
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
    /**
     * Secrets integrations read, written with the new value after every rotation: an ARN, or
     * `{ secretArn, kmsKeyArn }` when the secret is encrypted with a customer managed key. @default []
     */
    mirrorSecrets: z._default(z.array(mirrorEntry), () => []),
    /** The earlier form of mirrorSecrets: ARNs only (AWS managed key). @default [] */
    mirrorSecretArns: z._default(z.array(secretArn), () => []),
    /**
     * How long after the rotate answer a new key may still be refused while it reaches every
     * vendor server: the answer's candidates are probed again, with backoff, until then, and only
     * then is it a lockout. Within the rotation function's timeout. @default 180
     */
    keyPropagationSeconds: z._default(z.number({ error: 'must be a number of seconds' }), 180),
    /** The key-age alarm fires past this many days. @default the rate's period, in whole days, + 3 (required for cron) */
    maxKeyAgeDays: z.optional(boundedNumber({ min: 1, max: 1100, integer: true })),
  }).check(
    z.superRefine((rotation, context) => {
      const propagation = rotation.keyPropagationSeconds;
      if (!Number.isInteger(propagation) || propagation < 0 || propagation > MAX_KEY_PROPAGATION_SECONDS) {
        context.addIssue({
          code: 'custom',
          path: ['keyPropagationSeconds'],
          message: `must be whole seconds from 0 to ${MAX_KEY_PROPAGATION_SECONDS}: the rotation function's ${ROTATION_FUNCTION_TIMEOUT_SECONDS} s timeout must hold the whole window and ${ROTATION_CALL_RESERVE_SECONDS} s for the rotate call and storing its answer (got ${describeValue(propagation)})`,
        });
      }
      const windowProblem = rotationWindowProblem(rotation.schedule, rotation.windowHours);
      if (windowProblem) context.addIssue({ code: 'custom', path: ['windowHours'], message: windowProblem });
      const period = rotationPeriodDays(rotation.schedule);
      // Only for a valid cron: an invalid schedule (rate(2 hours), rate(1 week)) has no period
      // either, but its own problem is the one to report, not a rule for crons it is not.
      const isCron = period === undefined && rotationScheduleProblem(rotation.schedule) === undefined;
      if (rotation.maxKeyAgeDays === undefined && isCron) {
        context.addIssue({
          code: 'custom',
          path: ['maxKeyAgeDays'],
          message: 'is required with a cron schedule (the key-age alarm needs to know when a key is overdue)',
        });
      }
      if (rotation.maxKeyAgeDays !== undefined && period !== undefined && rotation.maxKeyAgeDays <= period) {
        context.addIssue({
          code: 'custom',
          path: ['maxKeyAgeDays'],
          message: `must be more than the ${period} days between rotations of ${rotation.schedule}, or the key-age alarm fires before every rotation (got ${rotation.maxKeyAgeDays})`,
        });
      }
      const seen = new Set<string>();
      const all = [
        ...rotation.mirrorSecrets.map(mirrorOf),
        ...rotation.mirrorSecretArns.map((arn) => ({ secretArn: arn })),
      ];
      for (const mirror of all) {
        if (seen.has(mirror.secretArn)) {
          context.addIssue({
            code: 'custom',
            path: ['mirrorSecrets'],
            message: `lists ${describeValue(mirror.secretArn)} more than once (mirrorSecrets and mirrorSecretArns together)`,
          });
        }
        seen.add(mirror.secretArn);
      }
    }),
  ),
  z.transform(({ mirrorSecrets, mirrorSecretArns, ...rest }) => ({
    ...rest,
    mirrorSecrets: [
      ...mirrorSecrets.map(mirrorOf),
      ...mirrorSecretArns.map((arn): MirrorSecret => ({ secretArn: arn })),
    ],
  })),
);

function mirrorOf(entry: string | { secretArn: string; kmsKeyArn?: string | undefined }): MirrorSecret {
  if (typeof entry === 'string') return { secretArn: entry };
  return entry.kmsKeyArn === undefined
    ? { secretArn: entry.secretArn }
    : { secretArn: entry.secretArn, kmsKeyArn: entry.kmsKeyArn };
}

export type RotationConfig = z.output<typeof rotationSchema>;

/**
 * Whole days past which the key counts as not rotated: the configured value, or the rate's period
 * rounded up to a day (an hourly rate counts as one day) plus a margin.
 */
export function maxKeyAgeDays(rotation: RotationConfig): number {
  return rotation.maxKeyAgeDays ?? Math.ceil(rotationPeriodDays(rotation.schedule) ?? 30) + 3;
}
