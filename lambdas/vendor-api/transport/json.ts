/**
 * Tolerant reading of the vendor's JSON answers. Their shapes are mostly "not shown" in the seeds,
 * so parsing never fails on its own: an operation that needs a field asks for it and turns a
 * missing one into a VendorResponseError; everything else keeps the raw text.
 */
import { VendorJsonLimitError, VendorResponseError } from '#lambdas/platform/errors';
import { jsonDepthExceeds } from '#lambdas/platform/input/json-depth';

export { jsonDepthExceeds } from '#lambdas/platform/input/json-depth';

/**
 * The bounds of a JSON answer. V8's JSON.parse takes any depth, but the walks after it do not:
 * JSON.stringify, structuredClone and our own redaction recurse, and a 20,000-deep answer throws
 * `RangeError: Maximum call stack size exceeded` in them, far from the vendor call. No answer of
 * the vendor's nests beyond a handful of levels. The size bound matches what the transport reads
 * of a whole answer (MAX_TEXT_BYTES, 8 MiB), for text that reaches a parser another way.
 */
export const JSON_LIMITS = { maxDepth: 64, maxChars: 8 * 1024 * 1024 } as const;

export type ParsedBody =
  | { readonly ok: true; readonly value: unknown }
  /** `limit`: the text was not parsed because it is past JSON_LIMITS (what it is past). */
  | { readonly ok: false; readonly text: string; readonly limit?: string };

/**
 * Empty body -> `{ ok: true, value: undefined }`; malformed -> `{ ok: false, text }`; past
 * JSON_LIMITS -> `{ ok: false, text, limit }`, unparsed.
 */
export function parseJsonBody(text: string, maxChars: number = JSON_LIMITS.maxChars): ParsedBody {
  if (text.trim() === '') return { ok: true, value: undefined };
  if (text.length > maxChars) {
    return { ok: false, text, limit: `the answer is longer than ${maxChars} characters` };
  }
  if (jsonDepthExceeds(text, JSON_LIMITS.maxDepth)) {
    return { ok: false, text, limit: `the answer nests deeper than ${JSON_LIMITS.maxDepth} levels` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, text };
  }
}

/**
 * The parsed value, or the raw text when it is not JSON (for operations that need no field).
 * JSON past JSON_LIMITS (or past `maxChars`, for an answer read with a larger byte cap) is refused
 * with VendorJsonLimitError naming `operation`.
 */
export function rawOf(text: string, operation = 'vendor answer', maxChars?: number): unknown {
  const parsed = parseJsonBody(text, maxChars);
  if (!parsed.ok && parsed.limit !== undefined) throw new VendorJsonLimitError(operation, parsed.limit);
  return parsed.ok ? parsed.value : parsed.text;
}

/** A JSON object, or a VendorResponseError naming the operation (for operations that need fields). */
export function requireObject(operation: string, text: string): Record<string, unknown> {
  const parsed = parseJsonBody(text);
  if (!parsed.ok && parsed.limit !== undefined) throw new VendorJsonLimitError(operation, parsed.limit);
  if (!parsed.ok) throw new VendorResponseError(operation, 'the body is not valid JSON');
  if (!isRecord(parsed.value)) {
    throw new VendorResponseError(operation, `expected a JSON object, got ${describe(parsed.value)}`);
  }
  return parsed.value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * What in a vendor's list could not be understood, by position (`null`: the body as a whole), with
 * a reason that describes the problem and never quotes the value.
 */
export interface UnreadableEntry {
  readonly index: number | null;
  readonly reason: string;
}

/** The first array found at the top level or under one of `fields`; undefined when none. */
export function findArray(value: unknown, fields: readonly string[]): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return undefined;
  for (const field of fields) {
    const inner = value[field];
    if (Array.isArray(inner)) return inner;
  }
  // One envelope deeper, e.g. {"data": {"items": [...]}}.
  for (const field of fields) {
    const inner = value[field];
    if (isRecord(inner)) {
      const nested = findArray(inner, fields);
      if (nested) return nested;
    }
  }
  return undefined;
}

/** The first non-empty string among `fields` of `record`. */
export function firstString(record: Record<string, unknown>, fields: readonly string[]): string | undefined {
  for (const field of fields) {
    const value = record[field];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** A describing word for error messages; never the value itself (it could be anything). */
export function describe(value: unknown): string {
  if (value === undefined) return 'an empty body';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The value at a dot path such as `data.items` or `result.0.id` (a number segment indexes an
 * array); undefined when any step is missing. For the configurable field paths of answers whose
 * shape the seeds do not show.
 */
export function valueAtPath(value: unknown, path: string): unknown {
  let node: unknown = value;
  for (const segment of path.split('.')) {
    if (Array.isArray(node) && /^\d+$/.test(segment)) node = node[Number(segment)];
    else if (isRecord(node)) node = node[segment];
    else return undefined;
  }
  return node;
}
