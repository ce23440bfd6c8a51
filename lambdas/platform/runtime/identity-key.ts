/**
 * The breach identity key (the HMAC key that names people) from Secrets Manager: read once per cold
 * start and cached; a failed read is not cached. Only PrepareWatchlist imports this, so only it
 * bundles the Secrets Manager client for it.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { createSecretsManagerReader, type SecretReader } from '#lambdas/platform/secrets';

/** A factory for `WatchlistDeps.identityKey` over BREACH_IDENTITY_KEY_SECRET_ARN. */
export function identityKeyFromSecret(secrets?: SecretReader) {
  return (env: Env, tools: Observability): (() => Promise<string>) => {
    const secretId = optionalEnv(env, ENV.breachIdentityKeySecretArn);
    if (secretId === undefined) {
      return () =>
        Promise.reject(
          new ConfigurationError(
            ENV.breachIdentityKeySecretArn,
            'is required: the secret of the key that names people',
          ),
        );
    }
    // The identity key is no vendor key, but is read through the same reader.
    const reader =
      secrets ??
      createSecretsManagerReader({ client: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})) });
    let key: Promise<string> | undefined;
    return () => {
      key ??= reader.getSecretString(secretId).catch((error: unknown) => {
        key = undefined;
        throw error;
      });
      return key;
    };
  };
}
