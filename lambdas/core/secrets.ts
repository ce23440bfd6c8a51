/**
 * The one way the pipeline reads secrets (vendor API keys today; whatever parts 3-5 add later).
 *
 * Secret values never appear in an error or a log line: errors name the secret id only. That is also
 * why JSON parse errors are not passed on (V8 quotes the offending text in them).
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError, ERROR_NAME } from '#core/errors';
import type { CredentialProvider } from '#core/vendor/types';

export interface SecretReader {
  /**
   * The secret's current string value. Implementations may cache; `forceRefresh` bypasses the cache
   * (after a 401 the vendor clients ask once more, in case the key was rotated).
   */
  getSecretString(secretId: string, options?: { forceRefresh?: boolean }): Promise<string>;
}

/**
 * Reading the secret failed for a reason that may pass (throttling, a Secrets Manager outage, the
 * network). Permanent problems (no such secret, access denied, cannot decrypt) are ConfigurationErrors.
 */
export class SecretAccessError extends Error {
  readonly secretId: string;
  readonly retryable: boolean;
  constructor(secretId: string, reason: string, options: { retryable: boolean; cause?: unknown }) {
    super(
      `Reading secret ${secretId} failed: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = ERROR_NAME.SecretAccessError;
    this.secretId = secretId;
    this.retryable = options.retryable;
  }
}

/** Secrets Manager errors that a human must fix; anything else may pass by itself. */
const PERMANENT_SECRETS_ERRORS = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'DecryptionFailure',
  'InvalidParameterException',
  'InvalidRequestException',
  'UnrecognizedClientException',
  'ValidationException',
]);

export interface SecretsManagerReaderOptions {
  /** Defaults to a client for the Lambda's region. */
  readonly client?: SecretsManagerClient;
  /**
   * How long a value is reused before Secrets Manager is asked again. Short, because a rotation
   * kills the old key at once: a 401 forces a refresh anyway. @default 60
   */
  readonly maxAgeSeconds?: number;
}

/** A SecretReader over Secrets Manager (AWSCURRENT), cached by Powertools Parameters. */
export function createSecretsManagerReader(options: SecretsManagerReaderOptions = {}): SecretReader {
  const maxAge = options.maxAgeSeconds ?? 60;
  const provider = new SecretsProvider(options.client ? { awsSdkV3Client: options.client } : {});
  return {
    async getSecretString(secretId, readOptions) {
      let value: string | Uint8Array | undefined;
      try {
        value = await provider.get(secretId, { maxAge, forceFetch: readOptions?.forceRefresh === true });
      } catch (error) {
        throw secretsError(secretId, error);
      }
      if (value === undefined) throw new ConfigurationError(secretId, 'the secret has no value');
      const text =
        typeof value === 'string' ? value : new TextDecoder('utf-8', { fatal: false }).decode(value);
      if (text.trim() === '') throw new ConfigurationError(secretId, 'the secret is empty');
      return text;
    },
  };
}

export interface StaticSecretReader extends SecretReader {
  /** Replaces a value, e.g. after a local key rotation. */
  setSecretString(secretId: string, value: string): void;
}

/** A SecretReader over fixed values, for the local runner and tests (no AWS involved). */
export function createStaticSecretReader(values: Readonly<Record<string, string>>): StaticSecretReader {
  const store = new Map(Object.entries(values));
  return {
    async getSecretString(secretId) {
      const value = store.get(secretId);
      if (value === undefined) throw new ConfigurationError(secretId, 'no such secret is configured');
      return value;
    },
    setSecretString(secretId, value) {
      store.set(secretId, value);
    },
  };
}

/** Field names an API key may be stored under in a JSON secret, in order of preference. */
const API_KEY_FIELDS = ['apiKey', 'api_key', 'key'] as const;

/**
 * The API key inside a secret's value: either the bare key, or JSON with `apiKey` (or `api_key`,
 * `key`). Throws a ConfigurationError naming `secretId` (never the value) when there is none.
 */
export function apiKeyFromSecretValue(value: string, secretId: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new ConfigurationError(secretId, 'the secret is empty');
  let key: string;
  if (trimmed.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      throw new ConfigurationError(secretId, 'the secret looks like JSON but does not parse');
    }
    const record = json as Record<string, unknown>;
    const field = API_KEY_FIELDS.find(
      (name) => typeof record[name] === 'string' && record[name].trim() !== '',
    );
    if (field === undefined) {
      throw new ConfigurationError(
        secretId,
        'the JSON secret has no non-empty "apiKey", "api_key" or "key" field',
      );
    }
    key = String(record[field]).trim();
  } else {
    key = trimmed;
  }
  // The key goes into an HTTP header: anything but visible ASCII would break the request (or the
  // header), so it is a configuration mistake such as a pasted line break or a quoted string.
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new ConfigurationError(secretId, 'the API key contains whitespace or non-printable characters');
  }
  return key;
}

/** A vendor CredentialProvider that reads the key from a secret on every call (the reader caches). */
export function credentialProviderFromSecret(reader: SecretReader, secretId: string): CredentialProvider {
  return async (options) => {
    const value = await reader.getSecretString(
      secretId,
      options?.forceRefresh === true ? { forceRefresh: true } : undefined,
    );
    return apiKeyFromSecretValue(value, secretId);
  };
}

function secretsError(secretId: string, error: unknown): Error {
  // Powertools wraps SDK failures in GetParameterError with the SDK error as `cause`.
  const root = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const name = root instanceof Error ? root.name : 'UnknownError';
  if (PERMANENT_SECRETS_ERRORS.has(name)) {
    return new ConfigurationError(
      secretId,
      `cannot be read (${name}): check the ARN and the function's permissions`,
    );
  }
  return new SecretAccessError(secretId, name, { retryable: true, cause: root });
}
