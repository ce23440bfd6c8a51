/**
 * Client of the vendor's key-management API (seed 001): read the org key's metadata and rotate it.
 * `Authorization: Bearer <key>` on every call. Rotation kills the old key at once, so this client
 * never repeats a rotate on its own and hands back the raw answer before any parsing can fail.
 */
import {
  ConfigurationError,
  VendorHttpError,
  VendorNetworkError,
  VendorResponseError,
  VendorTimeoutError,
} from '#core/errors';
import { ENV } from '#core/runtime/variables';
import { validateScanUuid } from '#core/validation';
import { VendorHttp } from './http.ts';
import { isRecord, parseJsonBody, rawOf, valueAtPath } from './json.ts';
import type { RotateKeyResult, VendorHttpSettings, VendorLogger } from './types.ts';

export interface KeysClientSettings extends VendorHttpSettings {
  /** The organisation whose key is read and rotated (a UUID in the path). */
  readonly orgUuid: string;
  /**
   * Dot path of the new key in the rotate answer, e.g. `data.credentials.key` (array indexes as
   * numbers: `keys.0.value`). @default search the common names, see `findNewKey`
   */
  readonly newKeyFieldPath?: string;
}

/** Field names a new key commonly hides under, in order of preference. Never `key_id`. */
export const NEW_KEY_FIELDS = [
  'api_key',
  'apiKey',
  'key',
  'token',
  'access_token',
  'secret',
  'new_key',
] as const;

/**
 * Finds the new key in a parsed rotate answer: at `fieldPath` when given, otherwise the first
 * non-empty string among `NEW_KEY_FIELDS` at the top level, then under `data`. Returns undefined
 * when nothing fits; the caller decides (the raw answer is already safe by then).
 */
export function findNewKey(json: unknown, fieldPath?: string): string | undefined {
  if (fieldPath !== undefined && fieldPath.trim() !== '') {
    return usableKey(valueAtPath(json, fieldPath));
  }
  for (const record of [json, isRecord(json) ? json.data : undefined]) {
    if (!isRecord(record)) continue;
    for (const field of NEW_KEY_FIELDS) {
      const key = usableKey(record[field]);
      if (key !== undefined) return key;
    }
  }
  return undefined;
}

function usableKey(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

export class KeysClient {
  private readonly http: VendorHttp;
  private readonly orgPath: string;
  private readonly newKeyFieldPath: string | undefined;
  private readonly logger: VendorLogger | undefined;

  constructor(settings: KeysClientSettings) {
    let org: string;
    try {
      org = validateScanUuid(settings.orgUuid, 'orgUuid');
    } catch {
      throw new ConfigurationError(
        ENV.orgUuid,
        'must be the organisation UUID (8-4-4-4-12 hexadecimal digits)',
      );
    }
    this.http = new VendorHttp('keys', settings, 'bearer');
    this.orgPath = `/orgs/${encodeURIComponent(org)}/api/key`;
    this.newKeyFieldPath = settings.newKeyFieldPath;
    this.logger = settings.logger;
  }

  async getKeyInfo(): Promise<{ raw: unknown }> {
    const res = await this.http.requestText({
      operation: 'keys.getKeyInfo',
      method: 'GET',
      path: this.orgPath,
      retry: 'idempotent',
    });
    return { raw: rawOf(res.text) };
  }

  /**
   * Rotates the org key. Never retried automatically, not even after a 429 or a 401:
   * - any error after the request left may mean the vendor rotated and the answer (the only copy
   *   of the new key) was lost; a second rotate would kill that key too;
   * - after a 401, refreshing the credential and rotating again could rotate a key that another
   *   rotation just issued and nobody has stored yet, locking every integration out.
   * The caller (the rotation workflow) decides, with the whole picture, whether to try again.
   *
   * The body is read whole as text and returned as `rawBody` before it is parsed, so the caller can
   * persist it even when the new key cannot be found in it.
   */
  async rotateKey(): Promise<RotateKeyResult> {
    const operation = 'keys.rotateKey';
    let res: Awaited<ReturnType<VendorHttp['requestText']>>;
    try {
      res = await this.http.requestText({
        operation,
        method: 'POST',
        path: `${this.orgPath}/rotate`,
        retry: 'never',
        refreshOnAuthFailure: false,
      });
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
    const rawBody = res.text;
    const parsed = parseJsonBody(rawBody);
    const json = parsed.ok ? parsed.value : undefined;
    return {
      rawBody,
      contentType: res.contentType,
      json,
      newKey: findNewKey(json, this.newKeyFieldPath),
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
