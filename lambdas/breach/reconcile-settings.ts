/**
 * Breach reconciliation's budget, as one setting: its variable, the bounds synth and the handler
 * hold it to, and its default. The configuration schema, the CDK binding and the handler take it
 * from here.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { numberFromText } from '#lambdas/platform/schema';

export interface BreachReconcileSettings {
  /**
   * Report archives started per run (each up to `breach.maxArchiveBytes`, streamed and verified);
   * the time reserve stops a run sooner when its invocation runs short.
   */
  readonly maxArchivesPerRun: number;
}

/**
 * The default lets a run take what its time allows for ordinary reports (a 10,000-report backlog
 * drains in five daily runs; docs/operations.md has the measured rate), while a cap remains
 * because the vendor states no limits ("Limits: not shown"): a run never downloads more than this
 * from it, however long the backlog, and a run's record names at most this many archives.
 */
export const BREACH_RECONCILE_LIMITS = {
  maxArchivesPerRun: {
    variable: ENV.breachReconcileMaxArchives,
    bounds: { min: 1, max: 10_000, integer: true },
    default: 2_000,
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
