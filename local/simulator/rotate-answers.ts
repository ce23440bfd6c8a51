/**
 * Shapes the rotate answer can take, for testing a client that must not trust field names (the
 * seeds do not show the answer). Every shape but `no-key` carries the real new key somewhere, and
 * most put something key-like but wrong (the key's id, a decoy) where a name-based search looks
 * first. Chosen per request with the `rotate-answer` fault (control plane or `addFault`) or the
 * `--fault rotate-answer=<shape>` flag of `npm start -- rotate`.
 */
import { randomBytes } from 'node:crypto';

export const ROTATE_ANSWER_SHAPES = [
  'default',
  'id-under-key',
  'decoy-first',
  'nested',
  'array',
  'odd-name',
  'json-string',
  'plain-text',
  'no-key',
] as const;
export type RotateAnswerShape = (typeof ROTATE_ANSWER_SHAPES)[number];

export interface RotatedKey {
  readonly orgUuid: string;
  readonly apiKey: string;
  readonly keyId: string;
  readonly createdAt: string;
}

/** The body and content type of the rotate answer in `shape`. */
export function rotateAnswer(shape: RotateAnswerShape, k: RotatedKey): { body: string; contentType: string } {
  const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: 'application/json' });
  switch (shape) {
    case 'default':
      return json({ org_uuid: k.orgUuid, key_id: k.keyId, api_key: k.apiKey, created_at: k.createdAt });
    case 'id-under-key':
      return json({ org_uuid: k.orgUuid, key: k.keyId, secret: k.apiKey, created_at: k.createdAt });
    case 'decoy-first':
      // A well-formed key that the vendor does not accept, under the most common name.
      return json({
        api_key: `sk_sim_${randomBytes(16).toString('hex')}`,
        note: 'api_key above is the previous key, now revoked',
        data: { api_key: k.apiKey, key_id: k.keyId },
      });
    case 'nested':
      return json({
        data: { id: k.keyId, credentials: { kind: 'bearer', value: k.apiKey }, created_at: k.createdAt },
      });
    case 'array':
      return json({ keys: [{ key: k.keyId, status: 'active' }, [k.createdAt, k.apiKey]] });
    case 'odd-name':
      return json({ org_uuid: k.orgUuid, key_id: k.keyId, 'x-issued-credential-material': k.apiKey });
    case 'json-string':
      return json({
        result: 'ok',
        payload: JSON.stringify({ key: k.keyId, issued: { bearer: k.apiKey } }),
      });
    case 'plain-text':
      return {
        body: `Key ${k.keyId} rotated at ${k.createdAt}.\nNew key: ${k.apiKey}\nStore it now; it is not shown again.\n`,
        contentType: 'text/plain; charset=utf-8',
      };
    case 'no-key':
      return json({
        org_uuid: k.orgUuid,
        key_id: k.keyId,
        created_at: k.createdAt,
        message: 'key rotated; reveal it once in the console',
      });
  }
}

export function isRotateAnswerShape(value: unknown): value is RotateAnswerShape {
  return typeof value === 'string' && (ROTATE_ANSWER_SHAPES as readonly string[]).includes(value);
}
