/**
 * Which secret holds a vendor API's key, and the credential provider over it. Its own module so a
 * function that calls one API bundles no other API's client.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import type { VendorApi } from '#lambdas/platform/handler-declaration';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';
import type { Observability } from '#lambdas/platform/runtime/observability';
import { ENV } from '#lambdas/platform/runtime/variables';
import {
  createSecretsManagerReader,
  credentialProviderFromSecret,
  type SecretReader,
} from '#lambdas/platform/secrets';
import type { CredentialProvider } from '#lambdas/platform/vendor-api/types';

/**
 * The secret holding the key of one vendor API: that API's own secret when set (per-api mode),
 * else the org key's (one key serves all three APIs by default).
 */
export function apiKeySecretId(env: Env, api: VendorApi): string {
  const secretId = optionalEnv(env, ENV.apiKeySecretArn[api]) ?? optionalEnv(env, ENV.vendorKeySecretArn);
  if (secretId === undefined) {
    throw new ConfigurationError(
      ENV.vendorKeySecretArn,
      `is required (or ${ENV.apiKeySecretArn[api]}): the secret that holds the vendor API key`,
    );
  }
  return secretId;
}

/** The key of one vendor API from Secrets Manager (cached; a 401 makes the client re-read it). */
export function vendorCredentials(
  env: Env,
  api: VendorApi,
  tools: Observability,
  secrets?: SecretReader,
): CredentialProvider {
  const reader =
    secrets ??
    createSecretsManagerReader({ client: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})) });
  return credentialProviderFromSecret(reader, apiKeySecretId(env, api), api);
}
