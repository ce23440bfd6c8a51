/** Daily: publishes the org key's age (ApiKeyAgeDays), which the key-age alarm watches. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import { requireEnv } from '#lambdas/platform/runtime/env';
import { createLazyHandler, type Handler, powertoolsMetrics } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { createSecretWriter, type SecretWriter } from '#lambdas/platform/secret-writer';
import { type KeyAge, measureKeyAge } from '#lambdas/rotation/age';

export interface KeyAgeDeps {
  readonly secrets: SecretWriter;
  readonly metrics: PipelineMetrics;
  readonly clock: () => Date;
  readonly secretId: string;
}

export function createCheckApiKeyAgeHandler(deps: KeyAgeDeps): Handler<unknown, KeyAge> {
  return async () => measureKeyAge(deps, deps.secretId);
}

export const handler = createLazyHandler({
  deps: (tools): KeyAgeDeps => ({
    secrets: createSecretWriter(tools.tracer.captureAWSv3Client(new SecretsManagerClient({}))),
    metrics: powertoolsMetrics(tools.metrics),
    clock: () => new Date(),
    secretId: requireEnv(process.env, ENV.rotatedSecretArn),
  }),
  handler: createCheckApiKeyAgeHandler,
});
