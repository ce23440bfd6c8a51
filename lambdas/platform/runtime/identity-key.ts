/**
 * HMAC keys of the breach workflow from Secrets Manager: the identity key (names people) and the
 * report naming key (names report folders). Each is read once per cold start and cached; a failed
 * read is not cached. Only the functions that name people or reports import this.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
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

/** A factory for `WatchlistDeps.identityKey` over BREACH_IDENTITY_KEY_SECRET_ARN. */
export function identityKeyFromSecret(secrets?: SecretReader) {
  return hmacKeyFromSecret(ENV.breachIdentityKeySecretArn, 'the key that names people', secrets);
}

/** A factory for `BreachDeps.reportNamingKey` over BREACH_REPORT_NAMING_KEY_SECRET_ARN. */
export function reportNamingKeyFromSecret(secrets?: SecretReader) {
  return hmacKeyFromSecret(ENV.breachReportNamingKeySecretArn, 'the key that names report folders', secrets);
}
