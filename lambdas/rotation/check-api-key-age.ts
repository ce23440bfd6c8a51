/**
 * The daily age check: how long since the org key was last rotated. Native rotation failing
 * silently (a disabled schedule, a function that keeps failing, a rotation stuck in AWSPENDING) shows
 * up here as an age past the schedule's period, which the key-age alarm watches.
 */

import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import { requireEnv } from '#lambdas/platform/runtime/env';
import { createLazyHandler, type Handler, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import type { MetricName } from '#lambdas/registry';
import { ROTATION_METRIC } from '#lambdas/registry';
import { createSecretWriter, type SecretWriter } from '#lambdas/rotation/secret-writer';

export interface KeyAge {
  readonly ageDays: number;
  /** When the key last changed by rotation, or the secret's creation when it never rotated. */
  readonly since: string | undefined;
}

const DAY_MS = 86_400_000;

export async function measureKeyAge(
  deps: { secrets: SecretWriter; metrics: PipelineMetrics<MetricName>; clock: () => Date },
  secretId: string,
): Promise<KeyAge> {
  const state = await deps.secrets.describe(secretId);
  const since = state.lastRotated ?? state.created;
  // No date at all is reported as very old: the alarm must fire, not stay quiet.
  const ageDays = since === undefined ? 36_500 : (deps.clock().getTime() - since.getTime()) / DAY_MS;
  deps.metrics.record(ROTATION_METRIC.apiKeyAge, Math.round(ageDays * 100) / 100, 'NoUnit', {
    workflow: 'rotation',
  });
  return { ageDays, since: since?.toISOString() };
}

/** Daily: publishes the org key's age (ApiKeyAgeDays), which the key-age alarm watches. */
export interface KeyAgeDeps {
  readonly secrets: SecretWriter;
  readonly metrics: PipelineMetrics<MetricName>;
  readonly clock: () => Date;
  readonly secretId: string;
}

export function createCheckApiKeyAgeHandler(deps: KeyAgeDeps): Handler<unknown, KeyAge> {
  return async () => measureKeyAge(deps, deps.secretId);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools): KeyAgeDeps => ({
    secrets: createSecretWriter(tools.tracer.captureAWSv3Client(new SecretsManagerClient({}))),
    metrics: powertoolsMetrics(tools.metrics),
    clock: () => new Date(),
    secretId: requireEnv(process.env, ENV.rotatedSecretArn),
  }),
  handler: createCheckApiKeyAgeHandler,
});
