/**
 * The vendor's rotate answer, kept before anything interprets it.
 *
 * The moment `rotate` answers, the old key is dead and the answer is the only copy of the new one.
 * Its shape is not shown by the seeds, so the key is whichever string in it the vendor accepts
 * (`GET …/api/key`), and finding that takes requests that may fail or outlive the invocation. So the
 * answer is first written, whole and unparsed, to a version of the rotated secret itself (label
 * ROTATION-ANSWER, id derived from the token, like the claim): as durable and as encrypted as the
 * key. Only then are the candidates probed; a later attempt resumes from the stored answer and
 * never calls rotate again. The AWSPENDING version then holds the key the readers use (`apiKey`)
 * beside the same answer (`rotateAnswer`), or the answer alone when no string in it works.
 */
import { createHash } from 'node:crypto';
import type { SecretState } from '#lambdas/platform/secret-writer';
import { rotateAnswerCandidates } from '#lambdas/platform/vendor-api/rotate-answer';
import type { RotateKeyResult } from '#lambdas/platform/vendor-api/types';
import type { RotationDeps } from './deps.ts';

export const ANSWER_STAGE = 'ROTATION-ANSWER';
/** The field of the secret that holds the vendor's answer; readers never look at it. */
export const ANSWER_FIELD = 'rotateAnswer';
/** The field older releases stored an answer without a key under; dropped from new values. */
export const LEGACY_ANSWER_FIELD = 'unreadableRotateAnswer';

/**
 * A SecretString holds at most 65,536 bytes (PutSecretValue, SecretString: "Maximum length of
 * 65536", https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html).
 * Counted in UTF-8 bytes to be safe whichever unit the service counts in.
 */
export const MAX_SECRET_BYTES = 65_536;

export interface KeptAnswer {
  readonly contentType: string | null;
  /** The body as received, or its first part when the whole would not fit in the secret. */
  readonly body: string;
  readonly truncated: boolean;
  /** UTF-8 bytes of the whole body, and its SHA-256, so a cut one is recognisable as cut. */
  readonly bodyBytes: number;
  readonly sha256: string;
}

interface AnswerRecord {
  readonly rotationAnswer: string;
  readonly receivedAt: string;
  readonly [ANSWER_FIELD]: KeptAnswer;
}

/** Version ids are 32 to 64 characters; a token may be 64 already, so it is hashed. */
export function answerVersionId(token: string): string {
  return `answer-${createHash('sha256').update(token).digest('hex').slice(0, 40)}`;
}

/**
 * The JSON text `build(answer)` makes, with as much of the body as fits in a secret: the whole
 * body when it fits, else the longest prefix that does (JSON escaping can grow a character up to six
 * bytes, so the fit is measured, not estimated).
 */
export function fitAnswer(
  answer: Pick<RotateKeyResult, 'rawBody' | 'contentType'>,
  build: (kept: KeptAnswer) => Record<string, unknown>,
): string {
  const whole = answer.rawBody;
  const base = {
    contentType: answer.contentType ?? null,
    bodyBytes: Buffer.byteLength(whole, 'utf8'),
    sha256: createHash('sha256').update(whole).digest('hex'),
  };
  const render = (chars: number) =>
    JSON.stringify(build({ ...base, body: whole.slice(0, chars), truncated: chars < whole.length }));
  const full = render(whole.length);
  if (Buffer.byteLength(full, 'utf8') <= MAX_SECRET_BYTES) return full;
  let low = 0;
  let high = whole.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(render(mid), 'utf8') <= MAX_SECRET_BYTES) low = mid;
    else high = mid - 1;
  }
  // Never end on half of a surrogate pair: the stored text must stay valid UTF-16.
  const code = whole.charCodeAt(low - 1);
  return render(code >= 0xd800 && code <= 0xdbff ? low - 1 : low);
}

/** Stores the answer for `token` (idempotent: the same answer again is a no-op). */
export async function storeAnswer(
  deps: RotationDeps,
  secretId: string,
  token: string,
  answer: RotateKeyResult,
): Promise<void> {
  const value = fitAnswer(answer, (kept) => ({
    rotationAnswer: token,
    receivedAt: deps.clock().toISOString(),
    [ANSWER_FIELD]: kept,
  }));
  try {
    await deps.secrets.put(secretId, answerVersionId(token), value, [ANSWER_STAGE]);
  } catch (error) {
    // A put whose answer was lost may have stored it all the same.
    const stored = await deps.secrets
      .read(secretId, { versionId: answerVersionId(token) })
      .catch(() => undefined);
    if (stored === undefined) throw error;
  }
}

/** The answer stored for `token`, or undefined when its rotate has not answered (or not yet). */
export async function readAnswer(
  deps: RotationDeps,
  secretId: string,
  token: string,
): Promise<KeptAnswer | undefined> {
  const stored = await deps.secrets.read(secretId, { versionId: answerVersionId(token) });
  if (stored === undefined) return undefined;
  try {
    const record = JSON.parse(stored.value) as Partial<AnswerRecord>;
    return record.rotationAnswer === token ? record[ANSWER_FIELD] : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the answer label once the key is current; the version is left for Secrets Manager. */
export async function clearAnswer(
  deps: RotationDeps,
  secretId: string,
  state: SecretState,
  token: string,
): Promise<void> {
  const id = answerVersionId(token);
  if (state.versions.get(id)?.includes(ANSWER_STAGE))
    await deps.secrets.removeStage(secretId, ANSWER_STAGE, id);
}

export type ProbeResult =
  | { readonly key: string; readonly tried: number }
  | { readonly key: undefined; readonly tried: number };

/**
 * Tries each candidate in the answer as the Bearer key of `GET …/api/key`, in order, and returns the
 * first the vendor accepts. One request per candidate (no refresh, no pending fallback); a candidate
 * is never logged. An answer that proves nothing (throttled, unavailable) throws: the answer stays
 * stored and the next attempt probes again.
 */
export async function findWorkingKey(
  deps: RotationDeps,
  answer: KeptAnswer,
  orgUuid: string,
  exclude: readonly string[],
): Promise<ProbeResult> {
  const candidates = rotateAnswerCandidates(answer.body, {
    fieldPath: deps.settings.newKeyFieldPath,
    exclude,
  });
  let tried = 0;
  for (const candidate of candidates) {
    tried += 1;
    const vendor = deps.keys(candidate, orgUuid);
    try {
      if (await vendor.keyAccepted()) return { key: candidate, tried };
    } finally {
      await vendor.close();
    }
  }
  return { key: undefined, tried };
}

/**
 * The AWSPENDING value: the current secret's other fields, the org, the key the readers use (when
 * one works) and the answer. Older answers and keys are dropped; the whole stays within a secret.
 */
export function pendingValue(
  fields: Record<string, unknown>,
  orgUuid: string,
  key: string | undefined,
  answer: KeptAnswer,
): string {
  const { apiKey: _a, api_key: _b, key: _c, [LEGACY_ANSWER_FIELD]: _d, [ANSWER_FIELD]: _e, ...kept } = fields;
  const base = { ...kept, orgUuid, ...(key === undefined ? {} : { apiKey: key }) };
  // Re-fit from the stored body: it is already within a secret on its own, the fields add a little.
  return fitAnswer({ rawBody: answer.body, contentType: answer.contentType ?? undefined }, (kept2) => ({
    ...base,
    [ANSWER_FIELD]: {
      ...kept2,
      truncated: answer.truncated || kept2.truncated,
      bodyBytes: answer.bodyBytes,
      sha256: answer.sha256,
    },
  }));
}

/** A stored pending value with its key, or its answer alone. */
export function pendingKeyOf(value: string): { key: string | undefined; hasAnswer: boolean } {
  try {
    const json = JSON.parse(value) as Record<string, unknown>;
    const key = typeof json.apiKey === 'string' && json.apiKey.trim() !== '' ? json.apiKey : undefined;
    return { key, hasAnswer: json[ANSWER_FIELD] !== undefined || json[LEGACY_ANSWER_FIELD] !== undefined };
  } catch {
    return { key: undefined, hasAnswer: false };
  }
}
