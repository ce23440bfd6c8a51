/**
 * The writing half of the secret access: versions and staging labels, for the key rotation
 * function (and its mirrors). Values never appear in an error or a log line; errors name the secret
 * and the version only.
 *
 * Writes that may pass by themselves (throttling, a service hiccup, the network) are retried a
 * bounded number of times with backoff: the value being written may be the only copy of a key the
 * vendor has just issued.
 */
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '#lambdas/platform/errors';
import { SecretAccessError } from '#lambdas/platform/secrets';
import { ROTATION_ERROR_NAME } from '#lambdas/rotation/errors';

export const STAGE = { current: 'AWSCURRENT', pending: 'AWSPENDING', previous: 'AWSPREVIOUS' } as const;

export interface SecretState {
  readonly arn: string;
  /** Version id → its staging labels; deprecated (label-less) versions are not listed. */
  readonly versions: ReadonlyMap<string, readonly string[]>;
  readonly lastRotated: Date | undefined;
  readonly created: Date | undefined;
}

export interface StoredVersion {
  readonly versionId: string;
  readonly value: string;
  readonly created: Date | undefined;
}

export interface SecretWriter {
  describe(secretId: string): Promise<SecretState>;
  /** A version's value; undefined when there is no such version or label, or it holds no value. */
  read(secretId: string, at: { versionId: string } | { stage: string }): Promise<StoredVersion | undefined>;
  /**
   * Stores `value` as version `token` with `stages`. Idempotent: the same value again is
   * `already-stored`; a different value already in that version is a {@link VersionConflictError}.
   */
  put(
    secretId: string,
    token: string,
    value: string,
    stages: readonly string[],
  ): Promise<'stored' | 'already-stored'>;
  /** Moves `stage` to version `to`, from version `from` (required when another version holds it). */
  moveStage(secretId: string, stage: string, to: string, from: string | undefined): Promise<void>;
  removeStage(secretId: string, stage: string, from: string): Promise<void>;
}

/** The version already holds a different value: Secrets Manager never overwrites one. */
export class VersionConflictError extends Error {
  constructor(secretId: string, versionId: string) {
    super(
      `Secret ${secretId} already holds a different value in version ${versionId}; nothing was overwritten`,
    );
    this.name = ROTATION_ERROR_NAME.VersionConflictError;
  }
}

/**
 * A staging-label update refused because the label is not where the call said (the version to
 * remove it from no longer holds it): another invocation moved it first.
 */
export class StageMovedError extends Error {
  constructor(secretId: string, stage: string) {
    super(`Secret ${secretId}: the staging label ${stage} is no longer where this invocation saw it`);
    this.name = ROTATION_ERROR_NAME.StageMovedError;
  }
}

export interface SecretWriterOptions {
  /** Attempts per call for errors that may pass. @default 4 */
  readonly attempts?: number;
  /** First backoff; doubled per attempt, with full jitter. @default 250 */
  readonly baseDelayMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const TRANSIENT = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'InternalServiceError',
  'ServiceUnavailable',
  'RequestTimeout',
  'TimeoutError',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
]);

const PERMANENT = new Set([
  'AccessDeniedException',
  'DecryptionFailure',
  'EncryptionFailure',
  'InvalidParameterException',
  'InvalidRequestException',
  'ResourceNotFoundException',
  'LimitExceededException',
  'ValidationException',
]);

export function createSecretWriter(
  client: SecretsManagerClient,
  options: SecretWriterOptions = {},
): SecretWriter {
  const attempts = options.attempts ?? 4;
  const baseDelayMs = options.baseDelayMs ?? 250;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = options.random ?? Math.random;

  async function call<T>(secretId: string, what: string, send: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        const name = errorName(error);
        if (PERMANENT.has(name) || name === 'ResourceExistsException') throw error;
        if (!TRANSIENT.has(name) && !isRetryableSdkError(error)) throw error;
        if (attempt >= attempts) {
          throw new SecretAccessError(secretId, `${what} failed ${attempts} times (${name})`, {
            retryable: true,
            cause: error,
          });
        }
        await sleep(Math.floor(random() * baseDelayMs * 2 ** (attempt - 1)));
      }
    }
  }

  async function updateStage(
    secretId: string,
    input: { VersionStage: string; MoveToVersionId?: string; RemoveFromVersionId?: string },
  ): Promise<void> {
    let sent = 0;
    try {
      await call(secretId, 'UpdateSecretVersionStage', () => {
        sent += 1;
        return client.send(new UpdateSecretVersionStageCommand({ SecretId: secretId, ...input }));
      });
    } catch (error) {
      // Secrets Manager answers so when RemoveFromVersionId does not hold the label (any more):
      // our own earlier try may have moved it and lost its answer, or another invocation did.
      if (errorName(error) === 'InvalidParameterException' && input.RemoveFromVersionId !== undefined) {
        if (triedBefore(error, sent) && (await labelIsWhereAsked(secretId, input))) return;
        throw new StageMovedError(secretId, input.VersionStage);
      }
      throw permanentError(secretId, error);
    }
  }

  async function labelIsWhereAsked(
    secretId: string,
    input: { VersionStage: string; MoveToVersionId?: string; RemoveFromVersionId?: string },
  ): Promise<boolean> {
    const out = await client.send(new DescribeSecretCommand({ SecretId: secretId })).catch(() => undefined);
    const holders = Object.entries(out?.VersionIdsToStages ?? {})
      .filter(([, stages]) => stages.includes(input.VersionStage))
      .map(([id]) => id);
    return input.MoveToVersionId === undefined
      ? !holders.includes(input.RemoveFromVersionId ?? '')
      : holders.includes(input.MoveToVersionId);
  }

  return {
    async describe(secretId) {
      const out = await call(secretId, 'DescribeSecret', () =>
        client.send(new DescribeSecretCommand({ SecretId: secretId })),
      );
      return {
        arn: out.ARN ?? secretId,
        versions: new Map(Object.entries(out.VersionIdsToStages ?? {})),
        lastRotated: out.LastRotatedDate,
        created: out.CreatedDate,
      };
    },
    async read(secretId, at) {
      try {
        const out = await call(secretId, 'GetSecretValue', () =>
          client.send(
            new GetSecretValueCommand({
              SecretId: secretId,
              ...('versionId' in at ? { VersionId: at.versionId } : { VersionStage: at.stage }),
            }),
          ),
        );
        if (out.SecretString === undefined || out.VersionId === undefined) return undefined;
        return { versionId: out.VersionId, value: out.SecretString, created: out.CreatedDate };
      } catch (error) {
        if (errorName(error) === 'ResourceNotFoundException') return undefined;
        throw permanentError(secretId, error);
      }
    },
    async put(secretId, token, value, stages) {
      try {
        await call(secretId, 'PutSecretValue', () =>
          client.send(
            new PutSecretValueCommand({
              SecretId: secretId,
              ClientRequestToken: token,
              SecretString: value,
              VersionStages: [...stages],
            }),
          ),
        );
        return 'stored';
      } catch (error) {
        if (errorName(error) !== 'ResourceExistsException') throw permanentError(secretId, error);
        // An earlier attempt may have stored it and lost the answer: the same value is success.
        const stored = await this.read(secretId, { versionId: token });
        if (stored?.value === value) return 'already-stored';
        throw new VersionConflictError(secretId, token);
      }
    },
    moveStage(secretId, stage, to, from) {
      return updateStage(secretId, {
        VersionStage: stage,
        MoveToVersionId: to,
        ...(from === undefined ? {} : { RemoveFromVersionId: from }),
      });
    },
    removeStage(secretId, stage, from) {
      return updateStage(secretId, { VersionStage: stage, RemoveFromVersionId: from });
    },
  };
}

/** True when an earlier try of this call was sent: by this writer, or by the SDK's own retries. */
function triedBefore(error: unknown, sent: number): boolean {
  const attempts = (error as { $metadata?: { attempts?: unknown } } | undefined)?.$metadata?.attempts;
  return sent > 1 || (typeof attempts === 'number' && attempts > 1);
}

function errorName(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown } | undefined;
  if (typeof e?.code === 'string' && TRANSIENT.has(e.code)) return e.code;
  return typeof e?.name === 'string' ? e.name : 'UnknownError';
}

function isRetryableSdkError(error: unknown): boolean {
  const e = error as { $retryable?: unknown; $fault?: unknown } | undefined;
  return e?.$retryable !== undefined || e?.$fault === 'server';
}

/** Permanent Secrets Manager errors become ConfigurationErrors naming the secret; others pass. */
function permanentError(secretId: string, error: unknown): unknown {
  const name = errorName(error);
  if (!PERMANENT.has(name)) return error;
  return new ConfigurationError(
    secretId,
    `cannot be written (${name}): check the ARN, the version and the function's permissions`,
  );
}
