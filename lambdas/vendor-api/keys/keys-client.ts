/**
 * Client of the vendor's key-management API (seed 001): read the org key's metadata and rotate it.
 * `Authorization: Bearer <key>` on every call. Rotation kills the old key at once, so this client
 * never repeats a rotate on its own and hands back the raw answer before any parsing can fail.
 */
import {
  ConfigurationError,
  VendorAuthError,
  VendorError,
  VendorHttpError,
  VendorNetworkError,
  VendorResponseError,
  VendorThrottledError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { validateUuid } from '#lambdas/platform/input/validation';
import { ENV } from '#lambdas/platform/runtime/variables';
import { type RetryMode, VendorHttp } from '#lambdas/vendor-api/transport/http';
import { rawOf } from '#lambdas/vendor-api/transport/json';
import type { VendorHttpSettings, VendorLogger } from '#lambdas/vendor-api/transport/types';
import { CANDIDATE_LIMITS, RotateAnswerScanner, type ScannedRotateAnswer } from './rotate-answer.ts';
import type { KeyProbe, RotateKeyOptions, RotateKeyResult } from './types.ts';

/** Bytes of the rotate answer kept as text: what the key search parses as JSON, and more than a secret holds. */
const ROTATE_ANSWER_HEAD_BYTES = CANDIDATE_LIMITS.maxBodyChars;

export interface KeysClientSettings extends VendorHttpSettings {
  /** The organisation whose key is read and rotated (a UUID in the path). */
  readonly orgUuid: string;
}

export class KeysClient {
  private readonly http: VendorHttp;
  private readonly orgPath: string;
  private readonly logger: VendorLogger | undefined;

  constructor(settings: KeysClientSettings) {
    let org: string;
    try {
      org = validateUuid(settings.orgUuid, 'orgUuid');
    } catch {
      throw new ConfigurationError(
        ENV.orgUuid,
        'must be the organisation UUID (8-4-4-4-12 hexadecimal digits)',
      );
    }
    this.http = new VendorHttp('keys', settings, 'bearer');
    this.orgPath = `/orgs/${encodeURIComponent(org)}/api/key`;
    this.logger = settings.logger;
  }

  async getKeyInfo(): Promise<{ raw: unknown }> {
    const res = await this.http.requestText({
      operation: 'keys.getKeyInfo',
      method: 'GET',
      path: this.orgPath,
      retry: 'idempotent',
    });
    return { raw: rawOf(res.text, 'keys.getKeyInfo') };
  }

  /**
   * What the vendor says of this client's key ({@link KeyProbe}): one `GET …/api/key` with no
   * credential refresh and no pending fallback, so the answer is about exactly this key. `retry`
   * `never` leaves the waiting to the caller (the rotation's probe rounds, on their own clock).
   */
  async probeKey(retry: RetryMode = 'idempotent'): Promise<KeyProbe> {
    try {
      const res = await this.http.requestText({
        operation: 'keys.getKeyInfo',
        method: 'GET',
        path: this.orgPath,
        retry,
        refreshOnAuthFailure: false,
      });
      return isErrorBody(res.text) ? { verdict: 'not-this-key', status: res.status } : { verdict: 'works' };
    } catch (error) {
      if (error instanceof VendorAuthError) return { verdict: 'not-this-key', status: error.status };
      if (error instanceof VendorThrottledError)
        return { verdict: 'try-later', retryAfterMs: error.retryAfterMs, error };
      if (error instanceof VendorHttpError && error.status < 500)
        return { verdict: 'not-this-key', status: error.status };
      // 5xx, timeouts, resets, an answer too large or undecodable: nothing proven about the key.
      if (error instanceof VendorError) return { verdict: 'try-later', retryAfterMs: undefined, error };
      throw error;
    }
  }

  /**
   * Whether the vendor accepts this client's key ({@link probeKey} after the usual idempotent
   * retries). Throws when the answer proves nothing either way (throttled, unavailable, unreachable).
   */
  async keyAccepted(): Promise<boolean> {
    const probe = await this.probeKey();
    if (probe.verdict === 'try-later') throw probe.error;
    return probe.verdict === 'works';
  }

  /**
   * Rotates the org key. Never retried automatically, not even after a 429 or a 401:
   * - any error after the request left may mean the vendor rotated and the answer (the only copy
   *   of the new key) was lost; a second rotate would kill that key too;
   * - after a 401, refreshing the credential and rotating again could rotate a key that another
   *   rotation just issued and nobody has stored yet, locking every integration out.
   * The caller (the rotation workflow) decides, with the whole picture, whether to try again.
   *
   * The answer has its own rules, because it cannot be asked for again: it is read to its end
   * within `options.timeoutMs` (the invocation's time, not the per-request deadline) with no size
   * cap that drops anything unseen, whatever its status (a vendor may rotate and then answer an
   * error that holds the key). Its head is returned as `rawBody`, uninterpreted, with its status and
   * every key-shaped word of the whole body (./rotate-answer.ts): the caller stores them before
   * anything looks for the key in them.
   */
  async rotateKey(options: RotateKeyOptions): Promise<RotateKeyResult> {
    const operation = 'keys.rotateKey';
    let res: Awaited<ReturnType<VendorHttp['requestAnswer']>> & { value: ScannedRotateAnswer };
    try {
      res = await this.http.requestAnswer(
        {
          operation,
          method: 'POST',
          path: `${this.orgPath}/rotate`,
          retry: 'never',
          refreshOnAuthFailure: false,
        },
        options.timeoutMs,
        async (body) => {
          const scanner = new RotateAnswerScanner(ROTATE_ANSWER_HEAD_BYTES);
          for await (const chunk of body) scanner.push(chunk);
          return scanner.finish();
        },
      );
    } catch (error) {
      if (outcomeUnknown(error)) {
        // Operators must hear this one: the vendor may have rotated, and only it knows the new key.
        this.logger?.warn('key rotation outcome unknown: the old key may already be dead', {
          operation,
          errorName: (error as Error).name,
        });
      }
      throw error;
    }
    const { head, ...scanned } = res.value;
    return {
      status: res.status,
      retryAfterMs: res.retryAfterMs,
      requestId: res.requestId,
      rawBody: head,
      contentType: res.contentType,
      ...scanned,
    };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** True when the rotate request may have been processed although no answer arrived intact. */
function outcomeUnknown(error: unknown): boolean {
  if (error instanceof VendorNetworkError) return !error.requestNotSent;
  if (error instanceof VendorTimeoutError || error instanceof VendorResponseError) return true;
  return error instanceof VendorHttpError && error.status >= 500;
}

/** Fields whose presence makes a 2xx JSON answer an error in disguise, not the key's information. */
const ERROR_WORDS = new Set([
  'error',
  'fail',
  'failed',
  'failure',
  'unauthorized',
  'forbidden',
  'invalid',
  'denied',
]);

/**
 * True when a 2xx body says it is an error: a JSON object with an `error` or non-empty `errors`,
 * `success` or `ok` false, or a `status` word that means failure. Anything else is the key's
 * information, whose fields the vendor does not show.
 */
export function isErrorBody(text: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return false;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return false;
  const answer = json as Record<string, unknown>;
  const present = (value: unknown) =>
    value !== undefined &&
    value !== null &&
    value !== false &&
    value !== '' &&
    !(Array.isArray(value) && value.length === 0);
  if (present(answer.error) || present(answer.errors)) return true;
  if (answer.success === false || answer.ok === false) return true;
  return typeof answer.status === 'string' && ERROR_WORDS.has(answer.status.trim().toLowerCase());
}
