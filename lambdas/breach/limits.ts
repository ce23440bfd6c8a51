/**
 * The breach workflow's input bounds, each a setting: its variable, the bounds synth and the
 * handlers hold it to, and its default. The configuration schema, the CDK bindings, the handlers'
 * readers and the local runner all take them from here.
 */

import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText } from '#lambdas/platform/input/schema';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import { MAX_COPY_OBJECT_BYTES } from '#lambdas/platform/s3/limits';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const BREACH_LIMITS = {
  /**
   * Bytes of a report download, counted after any Content-Encoding is removed and enforced as the
   * body streams: the download is cut at the first byte past it. At most CopyObject's 5 GiB, the
   * single copy that promotes a verified archive.
   */
  maxArchiveBytes: {
    variable: BREACH_VARIABLES.maxArchiveBytes,
    bounds: { min: MiB, max: MAX_COPY_OBJECT_BYTES, integer: true },
    default: 64 * MiB,
  },
  /** The sum of the archive entries' declared uncompressed sizes. */
  maxUncompressedBytes: {
    variable: BREACH_VARIABLES.maxUncompressedBytes,
    bounds: { min: MiB, max: 16 * GiB, integer: true },
    default: 256 * MiB,
  },
  /** How far one entry above 1 MiB may inflate beyond its compressed size (deflate tops out near 1032:1). */
  maxCompressionRatio: {
    variable: BREACH_VARIABLES.maxCompressionRatio,
    bounds: { min: 2, max: 2000, integer: true },
    default: 100,
  },
  /**
   * UTF-8 bytes of a vendor value (the recon's `output`) carried in a state's payload. A larger one
   * stays in recon.json and the payload carries a reference to it: Step Functions fails an execution
   * whose state payload passes 256 KiB with States.DataLimitExceeded, which no Catch sees.
   */
  maxInlineValueBytes: {
    variable: BREACH_VARIABLES.maxInlineValueBytes,
    bounds: { min: 256, max: 32 * 1024, integer: true },
    default: 1024,
  },
} as const;

export type BreachLimitName = keyof typeof BREACH_LIMITS;
export type BreachLimits = { readonly [K in BreachLimitName]: number };

export const DEFAULT_BREACH_LIMITS: BreachLimits = Object.freeze(
  Object.fromEntries(Object.entries(BREACH_LIMITS).map(([name, limit]) => [name, limit.default])),
) as BreachLimits;

/** Complete limits from partial ones; a value out of bounds is a ConfigurationError naming its variable. */
export function breachLimits(partial: Partial<BreachLimits> = {}): BreachLimits {
  const limits = { ...DEFAULT_BREACH_LIMITS, ...partial };
  for (const [name, limit] of Object.entries(BREACH_LIMITS)) {
    const value = limits[name as BreachLimitName];
    const { min, max } = limit.bounds;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ConfigurationError(
        limit.variable,
        `must be a whole number from ${min} to ${max}, got ${value}`,
      );
    }
  }
  return Object.freeze(limits);
}

/** The limits from their variables; an unset one takes its default. */
export function breachLimitsFromEnv(env: Env): BreachLimits {
  const partial: Partial<Record<BreachLimitName, number>> = {};
  for (const [name, limit] of Object.entries(BREACH_LIMITS)) {
    const raw = optionalEnv(env, limit.variable);
    if (raw === undefined) continue;
    const parsed = numberFromText(limit.bounds).safeParse(raw);
    if (!parsed.success) {
      throw new ConfigurationError(limit.variable, parsed.error.issues[0]?.message ?? 'is invalid');
    }
    partial[name as BreachLimitName] = parsed.data;
  }
  return breachLimits(partial);
}

/** What the functions that download and verify a report read (ArchiveReport, reconciliation). */
export const ARCHIVE_LIMIT_NAMES: readonly BreachLimitName[] = [
  'maxArchiveBytes',
  'maxUncompressedBytes',
  'maxCompressionRatio',
];

/** The variables that carry `names` of `limits` to a handler. */
export function breachLimitsEnvironment(
  limits: BreachLimits,
  names: readonly BreachLimitName[] = Object.keys(BREACH_LIMITS) as BreachLimitName[],
): Record<string, string> {
  return Object.fromEntries(names.map((name) => [BREACH_LIMITS[name].variable, String(limits[name])]));
}
