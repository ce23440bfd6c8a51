/**
 * Shapes the rotate answer can take, for testing a client that must not trust field names (the
 * vendor's API description does not show the answer). Every shape but `no-key` carries the real new key somewhere, and
 * most put something key-like but wrong (the key's id, a decoy) where a name-based search looks
 * first. Others test the call itself: `huge` (9 MiB, the key near its start), `slow` (trickled past
 * the 30 s per-request deadline), `same-key` (no rotation, the key in use handed back). Chosen per
 * request with the `rotate-answer` fault (control plane or `addFault`) or the
 * `--fault rotate-answer=<shape>` flag of `npm start -- rotate`, tuned by {@link RotateAnswerTuning}.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

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
  'huge',
  'slow',
  'same-key',
] as const;
export type RotateAnswerShape = (typeof ROTATE_ANSWER_SHAPES)[number];

export interface RotatedKey {
  readonly orgUuid: string;
  readonly apiKey: string;
  readonly keyId: string;
  readonly createdAt: string;
}

/** What a `rotate-answer` fault may tune besides its shape. */
export interface RotateAnswerTuning {
  /** `decoy-first`: key-shaped dead keys under `api_key` before the real one. @default 1 */
  readonly decoys?: number;
  /** Any shape: the new key is refused for this long after the rotate (it is propagating). @default 0 */
  readonly delaySeconds?: number;
  /** `slow`: how long the answer takes to arrive, trickled about a piece a second. @default 35 */
  readonly trickleSeconds?: number;
  /** `huge`: the answer's size. @default 9 MiB */
  readonly bytes?: number;
  /** `huge`: where the key is: near the start (default) or at the very end. */
  readonly keyAt?: 'start' | 'end';
}

export type RotateAnswerFault = { readonly shape: RotateAnswerShape } & RotateAnswerTuning;

export const HUGE_ANSWER_BYTES = 9 * 1024 * 1024;
export const SLOW_ANSWER_SECONDS = 35;

export interface RotateAnswerBody {
  readonly body: Buffer | AsyncIterable<Buffer>;
  readonly contentType: string;
  readonly length: number;
}

/** The rotate answer `fault` asks for: its body (streamed for `slow`), type and length. */
export function rotateAnswer(
  fault: RotateAnswerFault,
  k: RotatedKey,
  closing?: AbortSignal,
): RotateAnswerBody {
  if (fault.shape === 'huge') return hugeAnswer(k, fault.bytes ?? HUGE_ANSWER_BYTES, fault.keyAt ?? 'start');
  const { body, contentType } = answerText(fault.shape, fault, k);
  const bytes = Buffer.from(body, 'utf8');
  if (fault.shape !== 'slow') return { body: bytes, contentType, length: bytes.length };
  return {
    body: trickle(bytes, (fault.trickleSeconds ?? SLOW_ANSWER_SECONDS) * 1000, closing),
    contentType,
    length: bytes.length,
  };
}

/** `bytes` of JSON whose padding is one string far longer than any key, the key before or after it. */
function hugeAnswer(k: RotatedKey, bytes: number, keyAt: 'start' | 'end'): RotateAnswerBody {
  const key = JSON.stringify({ api_key: k.apiKey, key_id: k.keyId }).slice(1, -1);
  const frame = keyAt === 'start' ? `{${key},"audit":"` : '{"audit":"';
  const tail = keyAt === 'start' ? '"}' : `",${key}}`;
  const padding = Math.max(0, bytes - frame.length - tail.length);
  const body = Buffer.alloc(frame.length + padding + tail.length, 'x');
  body.write(frame, 0, 'utf8');
  body.write(tail, frame.length + padding, 'utf8');
  return { body, contentType: 'application/json', length: body.length };
}

/** The body in pieces about a second apart, the last at `totalMs`; the key is in the last piece. */
async function* trickle(body: Buffer, totalMs: number, closing?: AbortSignal): AsyncGenerator<Buffer> {
  // Every piece holds bytes, so the body really is still arriving at `totalMs`.
  const pieces = Math.min(body.length, Math.max(2, Math.ceil(totalMs / 1000) + 1));
  const edge = (i: number) => Math.round((i * body.length) / pieces);
  for (let i = 0; i < pieces; i++) {
    if (i > 0) await sleep(totalMs / (pieces - 1), undefined, closing ? { signal: closing } : {});
    yield body.subarray(edge(i), edge(i + 1));
  }
}

function answerText(
  shape: Exclude<RotateAnswerShape, 'huge'>,
  fault: RotateAnswerTuning,
  k: RotatedKey,
): { body: string; contentType: string } {
  const json = (value: unknown) => ({ body: JSON.stringify(value), contentType: 'application/json' });
  switch (shape) {
    case 'default':
      return json({ org_uuid: k.orgUuid, key_id: k.keyId, api_key: k.apiKey, created_at: k.createdAt });
    case 'id-under-key':
      return json({ org_uuid: k.orgUuid, key: k.keyId, secret: k.apiKey, created_at: k.createdAt });
    case 'decoy-first': {
      // Well-formed keys that the vendor does not accept, under the most common name, all before
      // the real one in the order a search by name meets them.
      const decoy = () => `sk_sim_${randomBytes(16).toString('hex')}`;
      const more = Array.from({ length: Math.max(0, (fault.decoys ?? 1) - 1) }, () => ({ api_key: decoy() }));
      return json({
        api_key: decoy(),
        note: 'api_key above is the previous key, now revoked',
        ...(more.length === 0 ? {} : { revoked: more }),
        data: { api_key: k.apiKey, key_id: k.keyId },
      });
    }
    case 'slow':
      // The key last, so an answer cut at any earlier point holds no key.
      return json({ org_uuid: k.orgUuid, key_id: k.keyId, created_at: k.createdAt, api_key: k.apiKey });
    case 'same-key':
      return json({ org_uuid: k.orgUuid, key_id: k.keyId, api_key: k.apiKey, created_at: k.createdAt });

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
