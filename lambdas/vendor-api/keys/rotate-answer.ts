/**
 * Which strings in the vendor's rotate answer could be the new key. The vendor's API description does not show the
 * answer's shape, so no field name is trusted: every string that could be a key is a candidate,
 * and the caller keeps the one that `GET …/api/key` accepts. Field names only decide the order
 * (the configured path first, then the common key names, then everything else as it appears).
 *
 * Everything here is bounded, because the answer is untrusted input: the body scanned, the depth
 * and number of JSON nodes walked, how many candidates are returned, and a candidate's length only
 * by what a secret can store. Candidates that no field name marks are ordered by how key-like they
 * look ({@link keyLikeness}), so a key among words, dates and ids is probed early.
 */
import { createHash } from 'node:crypto';
import { isRecord, JSON_LIMITS, parseJsonBody, valueAtPath } from '#lambdas/vendor-api/transport/json';

/** Field names a new key commonly hides under: tried before other strings, never trusted alone. */
export const NEW_KEY_FIELDS = [
  'api_key',
  'apiKey',
  'key',
  'token',
  'access_token',
  'secret',
  'new_key',
  'value',
] as const;

export const CANDIDATE_LIMITS = {
  /**
   * At most this many probes per round (each is one `GET …/api/key`). Large on purpose: a key
   * behind a few dozen decoys must still be found; the count tried is logged.
   */
  maxCandidates: 1_000,
  minChars: 8,
  /**
   * The longest key kept: signed tokens run to several KiB, so no bound below what a secret can
   * store (65,536 bytes, a printable character escaped to at most two in JSON) beside the rest of
   * its value. A longer string could never be stored as the key, so it is never probed.
   */
  maxChars: 24_576,
  /** Nesting followed, JSON strings that hold JSON included: as deep as a vendor answer may be. */
  maxDepth: JSON_LIMITS.maxDepth,
  /** JSON values visited in all. */
  maxNodes: 10_000,
  /**
   * Characters of the body parsed as JSON (and so ordered by field name); the rest of a longer
   * answer is still scanned for key-shaped words as it streams ({@link RotateAnswerScanner}).
   */
  maxBodyChars: 1_048_576,
} as const;

/**
 * A key travels in `Authorization: Bearer <key>`: printable ASCII without spaces, within the
 * length bounds. Anything else cannot be the key (and must never reach a header).
 */
function couldBeKey(value: string): boolean {
  return (
    value.length >= CANDIDATE_LIMITS.minChars &&
    value.length <= CANDIDATE_LIMITS.maxChars &&
    /^[\x21-\x7e]+$/.test(value)
  );
}

/**
 * Bytes that end a word: whitespace and controls, the quotes and brackets of JSON and text, the
 * backslash (so a key inside an escaped JSON string is not glued to its escapes), non-ASCII.
 */
const ENDS_WORD = (() => {
  const table = new Uint8Array(256).fill(1);
  for (let byte = 0x21; byte <= 0x7e; byte++) table[byte] = 0;
  for (const char of '"\'`,;<>(){}[]\\') table[char.charCodeAt(0)] = 1;
  return table;
})();

export interface AnswerWord {
  readonly text: string;
  readonly endByte: number;
}

/** What a rotate answer held, read to its end however large (the transport hands it over as it streams). */
export interface ScannedRotateAnswer {
  /** The first `headBytes` of the body as UTF-8 text; the whole body when `truncated` is false. */
  readonly head: string;
  readonly truncated: boolean;
  /** Bytes of the whole (decoded) body, and its SHA-256 in hex. */
  readonly bodyBytes: number;
  readonly sha256: string;
  /**
   * Every distinct key-shaped word of the whole body, in order of appearance, up to maxCandidates,
   * each with the byte offset where it ends (so a caller keeping part of the body knows which
   * words its part already holds).
   */
  readonly words: readonly AnswerWord[];
  /** Distinct key-shaped words seen in all, the ones past maxCandidates included. */
  readonly wordsSeen: number;
}

/**
 * Reads a rotate answer chunk by chunk: keeps its head, hashes and counts it all, and picks out
 * every key-shaped word anywhere in it (the separators of {@link rotateAnswerCandidates}'s text
 * split), so no part of an answer too large to keep goes unseen. Memory stays bounded: the head,
 * one word being built (dropped past maxChars) and at most maxCandidates words.
 */
export class RotateAnswerScanner {
  private readonly headChunks: Buffer[] = [];
  private headSize = 0;
  private bytes = 0;
  private readonly hash = createHash('sha256');
  private readonly seen = new Set<string>();
  private readonly kept: AnswerWord[] = [];
  private word: number[] = [];
  private wordTooLong = false;
  /** Key-shaped words past maxCandidates: counted, not kept (nor remembered, so repeats count). */
  private dropped = 0;

  constructor(private readonly headBytes: number) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    if (this.headSize < this.headBytes) {
      const part = chunk.subarray(0, this.headBytes - this.headSize);
      this.headChunks.push(part);
      this.headSize += part.length;
    }
    const start = this.bytes - chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (ENDS_WORD[byte] === 1) {
        this.endWord(start + i);
      } else if (this.word.length < CANDIDATE_LIMITS.maxChars) {
        this.word.push(byte);
      } else {
        this.wordTooLong = true;
      }
    }
  }

  finish(): ScannedRotateAnswer {
    this.endWord(this.bytes);
    const truncated = this.bytes > this.headSize;
    return {
      head: Buffer.concat(this.headChunks).toString('utf8'),
      truncated,
      bodyBytes: this.bytes,
      sha256: this.hash.digest('hex'),
      words: this.kept,
      wordsSeen: this.kept.length + this.dropped,
    };
  }

  private endWord(endByte: number): void {
    if (this.word.length > 0 && !this.wordTooLong) {
      const word = Buffer.from(this.word).toString('latin1');
      if (couldBeKey(word) && !this.seen.has(word)) {
        if (this.kept.length < CANDIDATE_LIMITS.maxCandidates) {
          this.seen.add(word);
          this.kept.push({ text: word, endByte });
        } else {
          this.dropped += 1;
        }
      }
    }
    this.word = [];
    this.wordTooLong = false;
  }
}

export interface CandidateOptions {
  /** Dot path of the key (`rotation.newKeyFieldPath`), tried first when it names a string. */
  readonly fieldPath?: string | undefined;
  /** Strings never to probe: the dead old key (a 401 proves nothing) and the org's id. */
  readonly exclude?: readonly string[];
}

/**
 * The candidate keys in `rawBody`, in probing order, without duplicates, at most maxCandidates;
 * `more` (words a scanner found past the kept body) go after the body's own.
 */
export function rotateAnswerCandidates(
  rawBody: string,
  options: CandidateOptions = {},
  more: readonly string[] = [],
): string[] {
  const body = rawBody.slice(0, CANDIDATE_LIMITS.maxBodyChars);
  const preferred: string[] = [];
  const others: string[] = [];
  const parsed = parseJsonBody(body);
  if (parsed.ok) {
    const path = options.fieldPath?.trim();
    if (path) {
      const atPath = valueAtPath(parsed.value, path);
      if (typeof atPath === 'string') preferred.push(atPath.trim());
    }
    const budget = { nodes: 0, cut: false };
    walk(parsed.value, undefined, 0, budget, preferred, others);
    // JSON deeper or larger than the walk follows: its words are still candidates, after the rest.
    if (budget.cut) others.push(...wordsOf(body));
  } else {
    // Not JSON (text, or JSON cut short): every whitespace- or quote-separated word may be it.
    others.push(...wordsOf(body));
  }
  const excluded = new Set(options.exclude ?? []);
  const out: string[] = [];
  // A stable sort: equally key-like strings keep the order they appear in.
  const rest = [...others, ...more].sort((a, b) => keyLikeness(b) - keyLikeness(a));
  for (const candidate of [...preferred, ...rest]) {
    if (out.length >= CANDIDATE_LIMITS.maxCandidates) break;
    if (!couldBeKey(candidate) || excluded.has(candidate) || out.includes(candidate)) continue;
    out.push(candidate);
  }
  return out;
}

/** The words of a text, split as {@link ENDS_WORD} splits a streamed answer. */
function wordsOf(text: string): string[] {
  return text.split(/[\s"'`,;<>(){}[\]\\]+/);
}

function walk(
  value: unknown,
  name: string | undefined,
  depth: number,
  budget: { nodes: number; cut: boolean },
  preferred: string[],
  others: string[],
): void {
  budget.nodes += 1;
  if (depth > CANDIDATE_LIMITS.maxDepth || budget.nodes > CANDIDATE_LIMITS.maxNodes) {
    budget.cut = true;
    return;
  }
  if (typeof value === 'string') {
    const text = value.trim();
    // A JSON document inside a string field: its own strings are the candidates, then the string.
    if (/^[[{]/.test(text)) {
      const inner = parseJsonBody(text);
      if (inner.ok) {
        walk(inner.value, name, depth + 1, budget, preferred, others);
        return;
      }
    }
    const preferredName = name !== undefined && (NEW_KEY_FIELDS as readonly string[]).includes(name);
    (preferredName ? preferred : others).push(text);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walk(item, name, depth + 1, budget, preferred, others);
    return;
  }
  if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) walk(item, key, depth + 1, budget, preferred, others);
  }
}

/**
 * How much `text` looks like an API key, for probing order only (every candidate is still probed):
 * long, of mixed character classes, or a JWT, scores high; a date, a UUID, a URL or path, an
 * address, or a plain word scores low.
 */
export function keyLikeness(text: string): number {
  if (/^eyJ[\w-]+\.[\w-]+\.[\w-]*$/.test(text)) return 10;
  let score = 0;
  for (const kind of [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/]) if (kind.test(text)) score += 1;
  if (text.length >= 32) score += 3;
  else if (text.length >= 20) score += 2;
  else if (text.length >= 16) score += 1;
  const notAKey =
    /^\d{4}-\d{2}-\d{2}/.test(text) ||
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text) ||
    /:\/\/|^\/|@/.test(text) ||
    /^[A-Za-z][a-z]*([_.-][A-Za-z][a-z]*)*[.:!?]?$/.test(text);
  return notAKey ? score - 6 : score;
}
