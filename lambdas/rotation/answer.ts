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
import type { SecretState } from '#lambdas/rotation/secret-writer';
import { rotateAnswerCandidates } from '#lambdas/rotation/vendor-api/rotate-answer';
import type { RotateKeyResult } from '#lambdas/rotation/vendor-api/types';
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
  /**
   * The key-shaped words of the whole body that `body` does not hold (those of a cut body's
   * missing part), in order; absent when the body is whole. Probed after the body's own.
   */
  readonly candidates?: readonly string[];
  /** Key-shaped words the whole body held, those past CANDIDATE_LIMITS.maxCandidates included. */
  readonly wordsSeen?: number;
}

interface AnswerRecord {
  readonly rotationAnswer: string;
  readonly receivedAt: string;
  readonly [ANSWER_FIELD]: KeptAnswer;
}

/** A stored answer, and when it was received: the propagation window runs from then. */
export interface StoredAnswer {
  readonly answer: KeptAnswer;
  readonly receivedAt: Date;
}

/** Version ids are 32 to 64 characters; a token may be 64 already, so it is hashed. */
export function answerVersionId(token: string): string {
  return `answer-${createHash('sha256').update(token).digest('hex').slice(0, 40)}`;
}

/** What {@link fitAnswer} keeps of: the vendor's answer, or one already kept (then re-fitted). */
export interface AnswerToFit {
  readonly body: string;
  readonly contentType: string | null;
  /** True when `body` is already only the head of a longer answer. @default false */
  readonly truncated?: boolean;
  /** Of the whole answer. @default `body`'s */
  readonly bodyBytes?: number;
  readonly sha256?: string;
  /** Key-shaped words of the whole answer with the byte offset each ends at. */
  readonly words?: readonly { readonly text: string; readonly endByte: number }[];
  readonly wordsSeen?: number;
}

/** Keeps at least this much of a cut body, however many words past it there are. */
const MIN_KEPT_BODY_BYTES = 16_384;

/**
 * The JSON text `build(kept)` makes, with as much of the answer as fits in a secret: the whole
 * body when it fits; else the key-shaped words past what is kept (up to all but
 * MIN_KEPT_BODY_BYTES of the secret), then the longest prefix of the body that fits beside them
 * (JSON escaping can grow a character up to six bytes, so the fit is measured, not estimated).
 */
export function fitAnswer(answer: AnswerToFit, build: (kept: KeptAnswer) => Record<string, unknown>): string {
  const whole = answer.body;
  const base = {
    contentType: answer.contentType ?? null,
    bodyBytes: answer.bodyBytes ?? Buffer.byteLength(whole, 'utf8'),
    sha256: answer.sha256 ?? createHash('sha256').update(whole).digest('hex'),
    // How many key-shaped words a body too long to keep held (its kept ones are `candidates`).
    ...(answer.truncated === true && answer.wordsSeen !== undefined ? { wordsSeen: answer.wordsSeen } : {}),
  };
  const wasCut = answer.truncated === true;
  const words = answer.words ?? [];
  const fits = (text: string) => Buffer.byteLength(text, 'utf8') <= MAX_SECRET_BYTES;
  const render = (chars: number, candidates: readonly string[]) =>
    JSON.stringify(
      build({
        ...base,
        body: whole.slice(0, chars),
        truncated: wasCut || chars < whole.length,
        ...(candidates.length === 0 ? {} : { candidates }),
      }),
    );
  if (!wasCut) {
    const full = render(whole.length, []);
    if (fits(full)) return full;
  }
  // Words first: they may hold the key from a part of the body no secret could keep. Not those
  // the kept body holds for sure (at least its first MIN_KEPT_BODY_BYTES / 6 bytes: JSON escaping
  // grows a byte to six at most), which would take room from the far ones.
  const room = new Set<string>();
  let budget = MAX_SECRET_BYTES - MIN_KEPT_BODY_BYTES - Buffer.byteLength(render(0, []), 'utf8');
  for (const word of words) {
    if (word.endByte <= MIN_KEPT_BODY_BYTES / 6) continue;
    // A JSON string and its comma; words are printable ASCII, so characters are bytes.
    budget -= JSON.stringify(word.text).length + 1;
    if (budget < 0) break;
    room.add(word.text);
  }
  const past = (chars: number) => {
    const keptBytes = Buffer.byteLength(whole.slice(0, chars), 'utf8');
    return words.filter((w) => w.endByte > keptBytes && room.has(w.text)).map((w) => w.text);
  };
  let low = 0;
  let high = whole.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(render(mid, past(mid)))) low = mid;
    else high = mid - 1;
  }
  // Never end on half of a surrogate pair: the stored text must stay valid UTF-16.
  const code = whole.charCodeAt(low - 1);
  const chars = code >= 0xd800 && code <= 0xdbff ? low - 1 : low;
  return render(chars, past(chars));
}

/** Stores the answer for `token` (idempotent: the same answer again is a no-op). */
export async function storeAnswer(
  deps: RotationDeps,
  secretId: string,
  token: string,
  answer: RotateKeyResult,
): Promise<void> {
  const { rawBody, contentType, ...facts } = answer;
  const value = fitAnswer({ body: rawBody, contentType: contentType ?? null, ...facts }, (kept) => ({
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
): Promise<StoredAnswer | undefined> {
  const stored = await deps.secrets.read(secretId, { versionId: answerVersionId(token) });
  if (stored === undefined) return undefined;
  try {
    const record = JSON.parse(stored.value) as Partial<AnswerRecord>;
    const answer = record[ANSWER_FIELD];
    if (record.rotationAnswer !== token || answer === undefined) return undefined;
    // An unreadable time (never written so) counts as long ago: the window is over.
    const receivedAt = new Date(record.receivedAt ?? 0);
    return { answer, receivedAt: Number.isNaN(receivedAt.getTime()) ? new Date(0) : receivedAt };
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

/** One round of probes: the key that works (the current one when the vendor handed it back), and how many were tried. */
export interface ProbeRound {
  readonly key: string | undefined;
  /** True when the key that works is the current key, which the answer holds: the vendor did not change it. */
  readonly unchanged: boolean;
  readonly tried: number;
}

/** The strings of a kept answer that could be the key, in probing order: the body's, then the words past it. */
export function candidatesOf(deps: RotationDeps, answer: KeptAnswer, exclude: readonly string[]): string[] {
  return rotateAnswerCandidates(
    answer.body,
    { fieldPath: deps.settings.newKeyFieldPath, exclude },
    answer.candidates ?? [],
  );
}

/**
 * Tries each candidate in the answer as the Bearer key of `GET …/api/key`, in order, and returns the
 * first the vendor accepts. The current key is tried last, and only when the answer holds it: the
 * vendor then handed back the key it already had, and a new key anywhere in the answer wins over
 * it. One request per candidate (no refresh, no pending fallback); a candidate is never logged. An
 * answer that proves nothing (throttled, unavailable) throws: the answer stays stored and the next
 * attempt probes again.
 */
export async function probeRound(
  deps: RotationDeps,
  answer: KeptAnswer,
  orgUuid: string,
  currentKey: string,
): Promise<ProbeRound> {
  const candidates = candidatesOf(deps, answer, [orgUuid]);
  const others = candidates.filter((candidate) => candidate !== currentKey);
  const ordered = others.length < candidates.length ? [...others, currentKey] : others;
  let tried = 0;
  for (const candidate of ordered) {
    tried += 1;
    const vendor = deps.keys(candidate, orgUuid);
    try {
      if (await vendor.keyAccepted()) return { key: candidate, unchanged: candidate === currentKey, tried };
    } finally {
      await vendor.close();
    }
  }
  return { key: undefined, unchanged: false, tried };
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
  // Re-fit from the stored answer: it is already within a secret on its own, the fields add a little.
  const { candidates, ...rest } = answer;
  const bodyBytes = Buffer.byteLength(answer.body, 'utf8');
  const words = (candidates ?? []).map((text) => ({ text, endByte: bodyBytes + 1 }));
  return fitAnswer({ ...rest, words }, (kept) => ({ ...base, [ANSWER_FIELD]: kept }));
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
