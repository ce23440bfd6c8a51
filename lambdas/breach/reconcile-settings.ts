/**
 * Breach reconciliation's budget, as one setting: its variable, the bounds synth and the handler
 * hold it to, and its default. The configuration schema, the CDK binding and the handler take it
 * from here.
 */

import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText } from '#lambdas/platform/input/schema';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';

export interface BreachReconcileSettings {
  /**
   * Report archives started per run (each up to `breach.maxArchiveBytes`, streamed and verified);
   * the time reserve stops a run sooner when its invocation runs short.
   */
  readonly maxArchivesPerRun: number;
}

/**
 * The default is what a run does in under half its 15 minutes at S3's per-request latency (0.26 to
 * 0.35 s an archive, four at a time: `npm run bench -- scale`), so a 10,000-report backlog drains
 * in ten daily runs (docs/operations.md). A cap remains because the vendor states no limits
 * ("Limits: not shown"): a run never downloads more than this from it, however long the backlog;
 * the maximum is about twice what the time reserve lets a run start anyway.
 */
export const BREACH_RECONCILE_LIMITS = {
  maxArchivesPerRun: {
    variable: BREACH_VARIABLES.reconcileMaxArchives,
    bounds: { min: 1, max: 5_000, integer: true },
    default: 1_000,
  },
} as const;

export const BREACH_RECONCILE_DEFAULTS: BreachReconcileSettings = Object.freeze({
  maxArchivesPerRun: BREACH_RECONCILE_LIMITS.maxArchivesPerRun.default,
});

/** The settings from their variable; unset takes the default, a bad value names the variable. */
export function breachReconcileSettingsFromEnv(env: Env): BreachReconcileSettings {
  const { variable, bounds, default: fallback } = BREACH_RECONCILE_LIMITS.maxArchivesPerRun;
  const raw = optionalEnv(env, variable);
  if (raw === undefined) return { maxArchivesPerRun: fallback };
  const parsed = numberFromText(bounds).safeParse(raw);
  if (!parsed.success)
    throw new ConfigurationError(variable, parsed.error.issues[0]?.message ?? 'is invalid');
  return { maxArchivesPerRun: parsed.data };
}
