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
  /** Report archives started per run (each up to `breach.maxArchiveBytes`, streamed and verified). */
  readonly maxArchivesPerRun: number;
}

export const BREACH_RECONCILE_LIMITS = {
  maxArchivesPerRun: {
    variable: ENV.breachReconcileMaxArchives,
    bounds: { min: 1, max: 500, integer: true },
    default: 25,
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
