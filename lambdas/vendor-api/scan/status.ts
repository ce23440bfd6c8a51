/**
 * Scan status classification. The vendor's API description shows no status values, so the vendor's word is mapped to a
 * state through a configurable vocabulary; anything unrecognised is `unknown` (the workflow treats
 * that as still running, bounded by its deadline) and the raw body is always kept.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { redactText, redactVendorText } from '#lambdas/platform/redaction/redact';
import { JSON_LIMITS, jsonDepthExceeds } from '#lambdas/vendor-api/transport/json';
import type { ScanState, ScanStatus, StatusVocabulary } from './types.ts';

export const DEFAULT_STATUS_VOCABULARY: StatusVocabulary = {
  pending: ['queued', 'pending', 'created', 'waiting', 'scheduled', 'new', 'accepted'],
  running: ['running', 'in_progress', 'in-progress', 'processing', 'scanning', 'started', 'active'],
  succeeded: ['completed', 'complete', 'succeeded', 'success', 'done', 'finished'],
  failed: [
    'failed',
    'failure',
    'error',
    'errored',
    'cancelled',
    'canceled',
    'aborted',
    'timeout',
    'timed_out',
    'rejected',
  ],
};

const CATEGORIES = ['pending', 'running', 'succeeded', 'failed'] as const;
const STATUS_FIELDS = ['status', 'state', 'scan_status', 'phase'] as const;
const PROGRESS_FIELDS = ['progress', 'percent', 'percentage', 'progress_percent'] as const;
/** Fields a vendor commonly wraps the scan record in. */
const ENVELOPES = ['scan', 'data'] as const;
const MAX_RAW_BYTES = 64 * 1024;
const MAX_WORD_LENGTH = 64;

/**
 * Parses the `STATUS_VOCABULARY` setting: a JSON object with any of `pending`, `running`,
 * `succeeded`, `failed`, each an array of words. Categories left out keep their default words, so a
 * deployment can add one vendor word without restating the rest.
 *
 * @param setting where the JSON came from (the scan workflow's variable), named in errors
 * @throws ConfigurationError naming `setting` and what is wrong
 */
export function parseStatusVocabulary(json: string, setting: string): StatusVocabulary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new ConfigurationError(setting, 'is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigurationError(
      setting,
      'must be a JSON object with arrays "pending", "running", "succeeded" and/or "failed"',
    );
  }
  const record = parsed as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(CATEGORIES as readonly string[]).includes(key)) {
      throw new ConfigurationError(
        setting,
        `has an unknown key "${key}" (expected pending, running, succeeded, failed)`,
      );
    }
  }
  const result: Record<(typeof CATEGORIES)[number], readonly string[]> = { ...DEFAULT_STATUS_VOCABULARY };
  for (const category of CATEGORIES) {
    const words = record[category];
    if (words === undefined) continue;
    if (!Array.isArray(words))
      throw new ConfigurationError(setting, `"${category}" must be an array of strings`);
    words.forEach((word, index) => {
      if (typeof word !== 'string' || word.trim() === '') {
        throw new ConfigurationError(setting, `"${category}"[${index}] must be a non-empty string`);
      }
    });
    result[category] = words.map((w: string) => w.trim());
  }
  // The same word in two categories would make the outcome depend on lookup order.
  const owner = new Map<string, string>();
  for (const category of CATEGORIES) {
    for (const word of result[category]) {
      const key = normaliseWord(word);
      const other = owner.get(key);
      if (other !== undefined && other !== category) {
        throw new ConfigurationError(
          setting,
          `the word "${word}" is listed under both "${other}" and "${category}"`,
        );
      }
      owner.set(key, category);
    }
  }
  return result;
}

/**
 * Classifies a status answer: the word from a `status`/`state`/`scan_status`/`phase` field (top
 * level, or under `scan`/`data`), a JSON string, or a bare text body (`running`, or a
 * `status: running` line). Matching ignores case and treats ` `, `-` and `_` alike.
 */
export function classifyScanStatus(
  rawBody: string,
  contentType: string | undefined,
  vocabulary: StatusVocabulary = DEFAULT_STATUS_VOCABULARY,
): ScanStatus {
  const json = parseMaybeJson(rawBody, contentType);
  let word: string | undefined;
  let progress: number | undefined;
  if (json.ok) {
    if (typeof json.value === 'string') word = json.value;
    else if (isRecord(json.value)) {
      for (const record of candidateRecords(json.value)) {
        word ??= findWord(record);
        progress ??= findProgress(record);
      }
    }
  } else {
    word = wordFromText(rawBody);
  }
  const vendorStatus = word?.trim() || undefined;
  return {
    state: vendorStatus === undefined ? 'unknown' : stateOf(vendorStatus, vocabulary),
    vendorStatus: vendorStatus === undefined ? undefined : redactText(vendorStatus).slice(0, MAX_WORD_LENGTH),
    progress,
    // Classified from the vendor's bytes, kept redacted: a status answer that echoes the request's
    // Authorization header would otherwise carry the key into the state payload, the execution
    // history and the manifest. Redacted before the cut, so no key is left half-shown at the edge.
    raw: boundUtf8(redactVendorText(rawBody), MAX_RAW_BYTES),
    contentType,
  };
}

/** The state a vendor status word stands for (case, ` `, `-` and `_` ignored); `unknown` otherwise. */
export function stateOf(word: string, vocabulary: StatusVocabulary): ScanState {
  const key = normaliseWord(word);
  for (const category of CATEGORIES) {
    if (vocabulary[category].some((w) => normaliseWord(w) === key)) return category;
  }
  return 'unknown';
}

function normaliseWord(word: string): string {
  return word
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

type MaybeJson = { ok: true; value: unknown } | { ok: false };

function parseMaybeJson(text: string, contentType: string | undefined): MaybeJson {
  const trimmed = text.trim();
  const looksJson = /json/i.test(contentType ?? '') || /^[[{"]/.test(trimmed);
  if (!looksJson || trimmed === '') return { ok: false };
  // Too deep to walk safely: read as text, like an answer that is not JSON.
  if (jsonDepthExceeds(trimmed, JSON_LIMITS.maxDepth)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(trimmed) };
  } catch {
    return { ok: false };
  }
}

/** The record itself first, then its envelopes: the top level wins when both carry a field. */
function candidateRecords(record: Record<string, unknown>): Record<string, unknown>[] {
  const out = [record];
  for (const name of ENVELOPES) {
    const inner = record[name];
    if (isRecord(inner)) out.push(inner);
  }
  return out;
}

function fieldOf(record: Record<string, unknown>, name: string): unknown {
  if (name in record) return record[name];
  // Vendors vary the case of field names (Status, STATE); the exact name wins above.
  const found = Object.keys(record).find((k) => k.toLowerCase() === name);
  return found === undefined ? undefined : record[found];
}

function findWord(record: Record<string, unknown>): string | undefined {
  for (const name of STATUS_FIELDS) {
    const value = fieldOf(record, name);
    if (typeof value === 'string' && value.trim() !== '') return value;
    // `{"status": {"state": "running"}}` and similar one-level objects.
    if (isRecord(value)) {
      for (const inner of ['name', 'state', 'status', 'value', 'code']) {
        const v = fieldOf(value, inner);
        if (typeof v === 'string' && v.trim() !== '') return v;
      }
    }
  }
  return undefined;
}

/**
 * Progress in 0..100. A `progress` between 0 and 1 (exclusive) is read as a fraction; fields named
 * percent-something are always percentages. A bare 1 therefore means 1 %, the safer reading: it
 * cannot make an unfinished scan look done.
 */
function findProgress(record: Record<string, unknown>): number | undefined {
  for (const name of PROGRESS_FIELDS) {
    const raw = fieldOf(record, name);
    let value: number | undefined;
    if (typeof raw === 'number') value = raw;
    else if (typeof raw === 'string' && /^\s*-?\d+(\.\d+)?\s*%?\s*$/.test(raw)) {
      value = Number.parseFloat(raw);
      if (raw.includes('%')) return clamp(value);
    }
    if (value === undefined || !Number.isFinite(value)) continue;
    if (name === 'progress' && value > 0 && value < 1) value *= 100;
    return clamp(value);
  }
  return undefined;
}

function clamp(value: number): number {
  return Math.min(100, Math.max(0, value));
}

function wordFromText(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  // A bare word (`running`, `"done"`), possibly quoted.
  const bare = /^["']?([A-Za-z][\w -]{0,62})["']?$/.exec(trimmed);
  if (bare && !trimmed.includes('\n')) return bare[1];
  // `status: running` / `state=done` lines in a plain-text answer.
  const line = /^\s*(?:status|state|scan_status|phase)\s*[:=]\s*["']?([A-Za-z][\w-]*)/im.exec(trimmed);
  return line?.[1];
}

/** Cuts to at most `limit` UTF-8 bytes without leaving half a character at the end. */
function boundUtf8(text: string, limit: number): string {
  if (Buffer.byteLength(text, 'utf8') <= limit) return text;
  return Buffer.from(text, 'utf8')
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
