/**
 * The one way the pipeline reads secrets (vendor API keys today; whatever parts 3-5 add later).
 *
 * Secret values never appear in an error or a log line: errors name the secret id only. That is also
 * why JSON parse errors are not passed on (V8 quotes the offending text in them).
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError, ERROR_NAME } from '#lambdas/platform/errors';
import { rememberKeyValue } from '#lambdas/platform/redaction/redact';
import type { CredentialProvider } from '#lambdas/vendor-api/transport/types';
import { API_KEY_FIELDS } from './secret-placeholder.ts';

export interface SecretReader {
  /**
   * The secret's current string value. Implementations may cache; `forceRefresh` bypasses the cache
   * (after a 401 the vendor clients ask once more, in case the key was rotated).
   */
  getSecretString(secretId: string, options?: { forceRefresh?: boolean }): Promise<string>;
  /**
   * The value of the secret's AWSPENDING version (never cached), or undefined when no rotation holds
   * one: no AWSPENDING label, or the value-less version `RotateSecret` creates.
   */
  getPendingSecretString?(secretId: string): Promise<string | undefined>;
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

/** The staging label of the version a rotation in progress is building. */
export const PENDING_STAGE = 'AWSPENDING';

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
  const client = options.client ?? new SecretsManagerClient({});
  const provider = new SecretsProvider({ awsSdkV3Client: client });
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
    async getPendingSecretString(secretId) {
      try {
        // Straight from the client: Powertools caches by secret id alone, so a pending value read
        // through it would be served later as the current one.
        const answer = await client.send(
          new GetSecretValueCommand({ SecretId: secretId, VersionStage: PENDING_STAGE }),
        );
        if (answer.SecretString !== undefined) return answer.SecretString;
        if (answer.SecretBinary === undefined) return undefined;
        return new TextDecoder('utf-8', { fatal: false }).decode(answer.SecretBinary);
      } catch (error) {
        // No AWSPENDING label, or the value-less version RotateSecret made: no rotation holds a key.
        if (rootErrorName(error) === 'ResourceNotFoundException') return undefined;
        throw secretsError(secretId, error);
      }
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

/**
 * The org credentials secret, as JSON: `{"apiKey": "...", "orgUuid": "...", "apiKeys": {"<api>": "..."}}`
 * (e.g. `{"scan": "..."}`). `apiKeys` optionally gives one API its own key; a bare key string is
 * accepted too.
 */
export interface VendorCredentialsValue {
  /** The org key (`apiKey`, or `api_key` / `key`, or the bare string). */
  readonly apiKey: string;
  readonly orgUuid: string | undefined;
  /** Keys of single APIs that do not use the org key. */
  readonly apiKeys: Readonly<Partial<Record<string, string>>>;
  /** Every field of a JSON secret, so a writer keeps what it does not know about. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Parses the credentials secret. `apis` are every vendor API (lambdas/registry.ts): `apiKeys`
 * naming another is a mistake worth stopping on (a typo would silently fall back to the org key).
 * Throws a ConfigurationError naming `secretId` (never the value) when there is no usable key.
 */
export function parseVendorCredentials(
  value: string,
  secretId: string,
  apis: readonly string[],
): VendorCredentialsValue {
  const trimmed = value.trim();
  if (trimmed === '') throw new ConfigurationError(secretId, 'the secret is empty');
  if (!trimmed.startsWith('{')) {
    return {
      apiKey: checkedKey(trimmed, secretId, 'the API key'),
      orgUuid: undefined,
      apiKeys: {},
      fields: {},
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    throw new ConfigurationError(secretId, 'the secret looks like JSON but does not parse');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new ConfigurationError(secretId, 'the JSON secret must be an object');
  }
  const record = json as Record<string, unknown>;
  const field = API_KEY_FIELDS.find((name) => typeof record[name] === 'string' && record[name].trim() !== '');
  if (field === undefined) {
    throw new ConfigurationError(
      secretId,
      'the JSON secret has no non-empty "apiKey", "api_key" or "key" field',
    );
  }
  const apiKeys: Partial<Record<string, string>> = {};
  const perApi = record.apiKeys;
  if (perApi !== undefined) {
    if (perApi === null || typeof perApi !== 'object' || Array.isArray(perApi)) {
      throw new ConfigurationError(
        secretId,
        `"apiKeys" must be an object such as {"${apis[0] ?? '<api>'}": "<key>"}`,
      );
    }
    for (const [api, key] of Object.entries(perApi)) {
      if (!apis.includes(api)) {
        throw new ConfigurationError(
          secretId,
          `"apiKeys" names an unknown API (expected ${apis.join(', ')})`,
        );
      }
      if (typeof key !== 'string')
        throw new ConfigurationError(secretId, `"apiKeys.${api}" must be a string`);
      apiKeys[api] = checkedKey(key.trim(), secretId, `"apiKeys.${api}"`);
    }
  }
  const org = record.orgUuid;
  if (org !== undefined && typeof org !== 'string')
    throw new ConfigurationError(secretId, '"orgUuid" must be a string');
  return {
    apiKey: checkedKey(String(record[field]).trim(), secretId, 'the API key'),
    orgUuid: typeof org === 'string' && org.trim() !== '' ? org.trim() : undefined,
    apiKeys,
    fields: record,
  };
}

/**
 * The key goes into an HTTP header: anything but visible ASCII would break the request (or the
 * header), so it is a configuration mistake such as a pasted line break or a quoted string.
 */
function checkedKey(key: string, secretId: string, what: string): string {
  if (key === '') throw new ConfigurationError(secretId, `${what} is empty`);
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new ConfigurationError(secretId, `${what} contains whitespace or non-printable characters`);
  }
  // Every key read from a secret (current or pending) is one a vendor could echo back.
  rememberKeyValue(key);
  return key;
}

/** Which key of a credentials secret is wanted, and the API names its `apiKeys` may use. */
export interface VendorKeyChoice {
  /** Every vendor API (lambdas/registry.ts); see parseVendorCredentials. */
  readonly apis: readonly string[];
  /**
   * The API that will send the key: its own key under `apiKeys` when there is one, else the org key.
   * @default - the org key
   */
  readonly api?: string;
}

/**
 * The API key inside a secret's value for `key.api` (its own key under `apiKeys` when there is one,
 * else the org key). Throws a ConfigurationError naming `secretId` (never the value) when there is none.
 */
export function apiKeyFromSecretValue(value: string, secretId: string, key: VendorKeyChoice): string {
  const credentials = parseVendorCredentials(value, secretId, key.apis);
  return (key.api === undefined ? undefined : credentials.apiKeys[key.api]) ?? credentials.apiKey;
}

/**
 * A vendor CredentialProvider that reads the key from a secret on every call (the reader caches).
 * Asked for the pending key, it reads AWSPENDING: undefined when there is none or it holds no key.
 */
export function credentialProviderFromSecret(
  reader: SecretReader,
  secretId: string,
  key: VendorKeyChoice,
): CredentialProvider {
  return async (options) => {
    if (options?.pending === true) {
      const pending = await reader.getPendingSecretString?.(secretId);
      if (pending === undefined) return undefined;
      try {
        return apiKeyFromSecretValue(pending, secretId, key);
      } catch {
        // A rotation that stored an answer it could not read: nothing usable, and no value to quote.
        return undefined;
      }
    }
    const value = await reader.getSecretString(
      secretId,
      options?.forceRefresh === true ? { forceRefresh: true } : undefined,
    );
    return apiKeyFromSecretValue(value, secretId, key);
  };
}

/** The SDK error's name: Powertools wraps SDK failures in GetParameterError with it as `cause`. */
function rootErrorName(error: unknown): string {
  const root = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return root instanceof Error ? root.name : 'UnknownError';
}

function secretsError(secretId: string, error: unknown): Error {
  const root = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const name = rootErrorName(error);
  if (PERMANENT_SECRETS_ERRORS.has(name)) {
    return new ConfigurationError(
      secretId,
      `cannot be read (${name}): check the ARN and the function's permissions`,
    );
  }
  return new SecretAccessError(secretId, name, { retryable: true, cause: root });
}
