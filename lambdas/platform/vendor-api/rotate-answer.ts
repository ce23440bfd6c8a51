/**
 * Which strings in the vendor's rotate answer could be the new key. The seeds do not show the
 * answer's shape, so no field name is trusted: every string that could be a key is a candidate,
 * and the caller keeps the one that `GET …/api/key` accepts. Field names only decide the order
 * (the configured path first, then the common key names, then everything else as it appears).
 *
 * Everything here is bounded, because the answer is untrusted input: the body scanned, the depth
 * and number of JSON nodes walked, how long a candidate may be and how many are returned.
 */
import { isRecord, parseJsonBody, valueAtPath } from './json.ts';

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
  /** At most this many probes per rotation (each is one `GET …/api/key`). */
  maxCandidates: 24,
  minChars: 8,
  maxChars: 512,
  /** Nesting followed, JSON strings that hold JSON included. */
  maxDepth: 8,
  /** JSON values visited in all. */
  maxNodes: 10_000,
  /** Characters of the body scanned; a longer answer is scanned up to here. */
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

export interface CandidateOptions {
  /** Dot path of the key (`rotation.newKeyFieldPath`), tried first when it names a string. */
  readonly fieldPath?: string | undefined;
  /** Strings never to probe: the dead old key (a 401 proves nothing) and the org's id. */
  readonly exclude?: readonly string[];
}

/** The candidate keys in `rawBody`, in probing order, without duplicates, at most maxCandidates. */
export function rotateAnswerCandidates(rawBody: string, options: CandidateOptions = {}): string[] {
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
    walk(parsed.value, undefined, 0, { nodes: 0 }, preferred, others);
  } else {
    // Not JSON (text, or JSON cut short): every whitespace- or quote-separated word may be it.
    for (const word of body.split(/[\s"'`,;<>(){}[\]]+/)) others.push(word);
  }
  const excluded = new Set(options.exclude ?? []);
  const out: string[] = [];
  for (const candidate of [...preferred, ...others]) {
    if (out.length >= CANDIDATE_LIMITS.maxCandidates) break;
    if (!couldBeKey(candidate) || excluded.has(candidate) || out.includes(candidate)) continue;
    out.push(candidate);
  }
  return out;
}

function walk(
  value: unknown,
  name: string | undefined,
  depth: number,
  budget: { nodes: number },
  preferred: string[],
  others: string[],
): void {
  budget.nodes += 1;
  if (depth > CANDIDATE_LIMITS.maxDepth || budget.nodes > CANDIDATE_LIMITS.maxNodes) return;
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
