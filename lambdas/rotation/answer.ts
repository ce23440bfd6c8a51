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
import { rotateAnswerCandidates } from '#lambdas/vendor-api/keys/rotate-answer';
import type { RotateKeyResult } from '#lambdas/vendor-api/keys/types';
import type { RotationDeps } from './deps.ts';

export const ANSWER_STAGE = 'ROTATION-ANSWER';
/** The field of the secret that holds the vendor's answer; readers never look at it. */
export const ANSWER_FIELD = 'rotateAnswer';

/**
 * A SecretString holds at most 65,536 bytes (PutSecretValue, SecretString: "Maximum length of
 * 65536", https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html).
 * Counted in UTF-8 bytes to be safe whichever unit the service counts in.
 */
export const MAX_SECRET_BYTES = 65_536;

export interface KeptAnswer {
  /** The answer's HTTP status; absent in answers kept by older releases, which kept only 2xx ones. */
  readonly status?: number;
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
  /** The claim attempt whose rotate gave this answer; absent (meaning 1) in older records. */
  readonly attempt?: number;
  readonly receivedAt: string;
  readonly [ANSWER_FIELD]: KeptAnswer;
}

/** A stored answer, and when it was received: the propagation window runs from then. */
export interface StoredAnswer {
  readonly answer: KeptAnswer;
  readonly receivedAt: Date;
  /** The claim attempt whose rotate gave it. */
  readonly attempt: number;
}

/**
 * Version ids are 32 to 64 characters; a token may be 64 already, so it is hashed. One version per
 * claim attempt: a rotate that provably did nothing (an error answer, the current key still
 * working) is followed by another, whose answer must not overwrite the first. The first attempt's id
 * has no number, as releases that kept one answer per token named it.
 */
export function answerVersionId(token: string, attempt = 1): string {
  const hash = createHash('sha256').update(token).digest('hex').slice(0, 40);
  return attempt === 1 ? `answer-${hash}` : `answer-${attempt}-${hash}`;
}

/** True for a 2xx answer (and for an answer kept by a release that kept nothing else). */
export function isSuccessAnswer(answer: KeptAnswer): boolean {
  const status = answer.status ?? 200;
  return status >= 200 && status < 300;
}

/** What {@link fitAnswer} keeps of: the vendor's answer, or one already kept (then re-fitted). */
export interface AnswerToFit {
  readonly status?: number;
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
    ...(answer.status === undefined ? {} : { status: answer.status }),
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

/**
 * Stores the answer of claim `attempt` for `token` (idempotent: the same answer again is a no-op),
 * whatever its status: status, content type and body up to what a secret holds.
 */
export async function storeAnswer(
  deps: RotationDeps,
  secretId: string,
  token: string,
  attempt: number,
  answer: RotateKeyResult,
): Promise<void> {
  const { rawBody, contentType, status, retryAfterMs: _r, requestId: _i, ...facts } = answer;
  const value = fitAnswer({ body: rawBody, contentType: contentType ?? null, status, ...facts }, (kept) => ({
    rotationAnswer: token,
    attempt,
    receivedAt: deps.clock().toISOString(),
    [ANSWER_FIELD]: kept,
  }));
  const versionId = answerVersionId(token, attempt);
  try {
    await deps.secrets.put(secretId, versionId, value, [ANSWER_STAGE]);
  } catch (error) {
    // A put whose answer was lost may have stored it all the same.
    const stored = await deps.secrets.read(secretId, { versionId }).catch(() => undefined);
    if (stored === undefined) throw error;
  }
}

/**
 * The newest answer stored for `token`: the version holding the ROTATION-ANSWER label (each put
 * moves it to the newest), or the one of claim `attempt` when named. Undefined when its rotate has
 * not answered (or not yet).
 */
export async function readAnswer(
  deps: RotationDeps,
  secretId: string,
  token: string,
  at: { readonly state: SecretState } | { readonly attempt: number },
): Promise<StoredAnswer | undefined> {
  const versionId =
    'attempt' in at
      ? answerVersionId(token, at.attempt)
      : ([...at.state.versions].find(([, stages]) => stages.includes(ANSWER_STAGE))?.[0] ??
        answerVersionId(token));
  const stored = await deps.secrets.read(secretId, { versionId });
  if (stored === undefined) return undefined;
  try {
    const record = JSON.parse(stored.value) as Partial<AnswerRecord>;
    const answer = record[ANSWER_FIELD];
    if (record.rotationAnswer !== token || answer === undefined) return undefined;
    // An unreadable time (never written so) counts as long ago: the window is over.
    const receivedAt = new Date(record.receivedAt ?? 0);
    return {
      answer,
      receivedAt: Number.isNaN(receivedAt.getTime()) ? new Date(0) : receivedAt,
      attempt: typeof record.attempt === 'number' ? record.attempt : 1,
    };
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
  const holder = [...state.versions].find(([, stages]) => stages.includes(ANSWER_STAGE))?.[0];
  if (holder === undefined) return;
  const stored = await deps.secrets.read(secretId, { versionId: holder });
  if (stored !== undefined && answerTokenOf(stored.value) === token)
    await deps.secrets.removeStage(secretId, ANSWER_STAGE, holder);
}

function answerTokenOf(value: string): string | undefined {
  try {
    return (JSON.parse(value) as Partial<AnswerRecord>).rotationAnswer;
  } catch {
    return undefined;
  }
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
 * The AWSPENDING value: the current secret's other fields, the org, the key the readers use (when
 * one works) and the answer. Older answers and keys are dropped; the whole stays within a secret.
 */
export function pendingValue(
  fields: Record<string, unknown>,
  orgUuid: string,
  key: string | undefined,
  answer: KeptAnswer,
): string {
  const { apiKey: _a, api_key: _b, key: _c, [ANSWER_FIELD]: _d, ...kept } = fields;
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
    return { key, hasAnswer: json[ANSWER_FIELD] !== undefined };
  } catch {
    return { key: undefined, hasAnswer: false };
  }
}
