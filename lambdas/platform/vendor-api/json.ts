/**
 * Tolerant reading of the vendor's JSON answers. Their shapes are mostly "not shown" in the seeds,
 * so parsing never fails on its own: an operation that needs a field asks for it and turns a
 * missing one into a VendorResponseError; everything else keeps the raw text.
 */
import { VendorResponseError } from '#lambdas/platform/errors';

export type ParsedBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly text: string };

/** Empty body -> `{ ok: true, value: undefined }`; malformed -> `{ ok: false, text }`. */
export function parseJsonBody(text: string): ParsedBody {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, text };
  }
}

/** The parsed value, or the raw text when it is not JSON (for operations that need no field). */
export function rawOf(text: string): unknown {
  const parsed = parseJsonBody(text);
  return parsed.ok ? parsed.value : parsed.text;
}

/** A JSON object, or a VendorResponseError naming the operation (for operations that need fields). */
export function requireObject(operation: string, text: string): Record<string, unknown> {
  const parsed = parseJsonBody(text);
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
