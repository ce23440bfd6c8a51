/**
 * Which secret holds a vendor API's key, and the credential provider over it. Its own module so a
 * function that calls one API bundles no other API's client.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import {
  createSecretsManagerReader,
  credentialProviderFromSecret,
  type SecretReader,
  type VendorKeyChoice,
} from '#lambdas/platform/secrets';
import type { CredentialProvider } from '#lambdas/vendor-api/transport/types';

/**
 * The secret holding the key of one vendor API: that API's own secret when set (per-api mode),
 * else the org key's (one key serves every API by default).
 */
export function apiKeySecretId(env: Env, api: string): string {
  const own = vendorApiVariables(api).keySecretArn;
  const secretId = optionalEnv(env, own) ?? optionalEnv(env, ENV.vendorKeySecretArn);
  if (secretId === undefined) {
    throw new ConfigurationError(
      ENV.vendorKeySecretArn,
      `is required (or ${own}): the secret that holds the vendor API key`,
    );
  }
  return secretId;
}

/**
 * The key of `key.api` from Secrets Manager (cached; a 401 makes the client re-read it). `key.apis`
 * are every vendor API (lambdas/registry.ts), which the secret's `apiKeys` may name.
 */
export function vendorCredentials(
  env: Env,
  key: VendorKeyChoice & { readonly api: string },
  tools: Observability,
  secrets?: SecretReader,
): CredentialProvider {
  const reader =
    secrets ??
    createSecretsManagerReader({ client: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})) });
  return credentialProviderFromSecret(reader, apiKeySecretId(env, key.api), key);
}
