/**
 * Keys of keyed hashes (HMAC) from Secrets Manager, such as the keys that name people and report
 * folders: each is read once per cold start and cached; a failed read is not cached. Only the
 * functions that name things with a keyed hash import this (each workflow names its key's variable).
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { createSecretsManagerReader, type SecretReader } from '#lambdas/platform/secrets';

/** A factory for a key held in the secret that `variable` names; `purpose` says what it is for. */
export function hmacKeyFromSecret(variable: string, purpose: string, secrets?: SecretReader) {
  return (env: Env, tools: Observability): (() => Promise<string>) => {
    const secretId = optionalEnv(env, variable);
    if (secretId === undefined) {
      return () => Promise.reject(new ConfigurationError(variable, `is required: the secret of ${purpose}`));
    }
    // These keys are no vendor keys, but are read through the same reader.
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
