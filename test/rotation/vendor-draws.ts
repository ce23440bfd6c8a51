/**
 * fast-check arbitraries for a vendor's key-management API, drawn from what the seeds leave open:
 * the rotate answer (status, content type, body shape and size, where the key is, decoys, speed),
 * the key itself (8 characters to several KiB; base64, hex, JWT or opaque), how a wrong key is
 * refused, how long a new key takes to work, and faults on the secret writes.
 */
import fc from 'fast-check';
import type { VendorBehaviour, WrongKeyAnswer } from '../kit/generated-vendor.ts';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const BASE64 = `${LOWER}${LOWER.toUpperCase()}${DIGITS}+/`;
const BASE64URL = `${LOWER}${LOWER.toUpperCase()}${DIGITS}-_`;
/** Printable ASCII a key may hold: no space, and none of the quotes and brackets that end a word in text. */
const OPAQUE = `${BASE64URL}.~!#$%&*+=?@^|:/`;

const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });

/** Mostly short, sometimes long: a key's or a decoy's length. */
const length = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 8, max: 64 }) },
  { weight: 2, arbitrary: fc.integer({ min: 65, max: 700 }) },
  { weight: 1, arbitrary: fc.integer({ min: 701, max: 6_000 }) },
);

/** A key (or a decoy shaped like one) in one of the forms vendors issue. */
export const keyText: fc.Arbitrary<string> = fc.oneof(
  length.chain((n) => chars(BASE64, n, n).map((body) => (n % 4 === 2 ? `${body}==` : body))),
  length.chain((n) => chars('0123456789abcdef', n, n)),
  length.chain((n) =>
    fc
      .tuple(
        chars(BASE64URL, 8, 40),
        chars(BASE64URL, Math.max(8, n - 60), Math.max(8, n - 60)),
        chars(BASE64URL, 20, 43),
      )
      .map(([header, payload, signature]) => `eyJ${header}.${payload}.${signature}`),
  ),
  length.chain((n) => chars(OPAQUE, n, n)),
);

/** Any field name, the common key names among them. */
const fieldName = fc.oneof(
  fc.constantFrom('api_key', 'apiKey', 'key', 'token', 'secret', 'value', 'new_key', 'credential', 'data'),
  fc.string({ minLength: 1, maxLength: 24 }),
);

export type SecretFault =
  | { readonly kind: 'none' }
  | {
      readonly kind: 'throw';
      readonly on: 'answer-put' | 'pending-put' | 'current-move';
      readonly phase: 'before' | 'after';
      readonly error: string;
      readonly times: number;
    };

/**
 * Faults the writes survive by design: a transient error the writer retries (fewer times than its
 * four attempts), or a permanent one on the pending put or the AWSCURRENT move, which fails that
 * attempt (the next resumes). The answer's own put is never refused for good here: without it, only
 * detection is possible (rotation.test.ts covers that crash).
 */
const secretFault: fc.Arbitrary<SecretFault> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'none' } as const) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('throw' as const),
      on: fc.constantFrom('answer-put' as const, 'pending-put' as const, 'current-move' as const),
      phase: fc.constantFrom('before' as const, 'after' as const),
      error: fc.constantFrom('ThrottlingException', 'InternalServiceError'),
      times: fc.integer({ min: 1, max: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('throw' as const),
      on: fc.constantFrom('pending-put' as const, 'current-move' as const),
      phase: fc.constant('before' as const),
      error: fc.constant('AccessDeniedException'),
      times: fc.constant(1),
    }),
  },
);

const wrongKey: fc.Arbitrary<WrongKeyAnswer> = fc.oneof(
  fc.constantFrom(401, 403, 404, 400, 422).map((status) => ({ kind: 'status', status }) as const),
  fc
    .constantFrom(
      '{"error":"invalid_key"}',
      '{"success":false,"message":"bad key"}',
      '{"status":"error"}',
      '{"errors":[{"code":"auth"}]}',
    )
    .map((body) => ({ kind: 'error-200', body }) as const),
  fc.option(fc.constantFrom(0, 1), { nil: undefined, freq: 2 }).map(
    (retryAfterSeconds) =>
      ({
        kind: 'status',
        status: 429,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      }) as const,
  ),
  fc.constantFrom(500, 502, 503).map((status) => ({ kind: 'status', status }) as const),
  fc.constant({ kind: 'reset' } as const),
);

interface BodyShape {
  readonly format: 'json' | 'text' | 'html';
  readonly keyPresent: boolean;
  readonly keyField: string;
  /** Objects (field names) and arrays (null) the key sits inside, outermost first. */
  readonly path: readonly (string | null)[];
  /** The key's part of the document sent as a JSON string inside a field. */
  readonly asJsonString: boolean;
  readonly decoys: readonly { readonly field: string; readonly value: string }[];
  readonly decoysFirst: boolean;
  /** Bytes of filler, a string longer than any key can be or a run of words. */
  readonly padding: number;
}

const bodyShape: fc.Arbitrary<BodyShape> = fc.record({
  format: fc.constantFrom('json' as const, 'json' as const, 'text' as const, 'html' as const),
  keyPresent: fc.oneof(
    { weight: 5, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
  keyField: fieldName,
  path: fc.array(fc.option(fieldName, { nil: null }), { maxLength: 6 }),
  asJsonString: fc.boolean(),
  decoys: fc.array(fc.record({ field: fieldName, value: keyText }), { maxLength: 12 }),
  decoysFirst: fc.boolean(),
  padding: fc.oneof(
    { weight: 8, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 200_000 }) },
  ),
});

function render(shape: BodyShape, key: string): string {
  const keyPart: unknown = shape.keyPresent
    ? { [shape.keyField]: key }
    : { note: 'rotated; reveal it in the console' };
  const decoys = shape.decoys.map((d) => ({ [d.field]: d.value }));
  if (shape.format === 'json') {
    let inner: unknown = shape.asJsonString ? JSON.stringify(keyPart) : keyPart;
    for (const step of [...shape.path].reverse()) inner = step === null ? [inner] : { [step]: inner };
    const parts = shape.decoysFirst ? [...decoys, { result: inner }] : [{ result: inner }, ...decoys];
    return JSON.stringify({
      items: parts,
      ...(shape.padding > 0 ? { audit: 'x'.repeat(shape.padding) } : {}),
    });
  }
  const lines = shape.decoys.map((d) => `revoked ${d.value}`);
  const keyLine = shape.keyPresent ? `New key: ${key}` : 'Key rotated.';
  const all = shape.decoysFirst ? [...lines, keyLine] : [keyLine, ...lines];
  const filler = shape.padding > 0 ? 'lorem ipsum '.repeat(Math.ceil(shape.padding / 12)) : '';
  if (shape.format === 'text') return `${all.join('\n')}\n${filler}`;
  return `<html><body>${all.map((line) => `<p>${line}</p>`).join('')}<pre>${filler}</pre></body></html>`;
}

const SUCCESS = [200, 201, 202] as const;
const FAILURE = [400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504] as const;

export interface DrawnVendor {
  readonly behaviour: VendorBehaviour;
  readonly secretFault: SecretFault;
  /** What to print of a failing case (no key: the lengths and choices only). */
  readonly summary: Record<string, unknown>;
}

export function drawnVendor(): fc.Arbitrary<DrawnVendor> {
  return (
    fc
      .record({
        oldKey: chars(BASE64URL, 24, 24),
        newKey: keyText,
        shape: bodyShape,
        status: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...SUCCESS) },
          { weight: 2, arbitrary: fc.constantFrom(...FAILURE) },
        ),
        rotatesOnError: fc.boolean(),
        contentType: fc.constantFrom(
          'application/json',
          'application/problem+json',
          'text/plain',
          'text/html',
          'application/octet-stream',
        ),
        pieces: fc.oneof(
          { weight: 4, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.integer({ min: 2, max: 5 }) },
        ),
        gapMs: fc.integer({ min: 0, max: 40 }),
        wrongKey,
        propagationMs: fc.oneof(
          { weight: 14, arbitrary: fc.constant(0) },
          { weight: 1, arbitrary: fc.integer({ min: 20, max: 600 }) },
        ),
        secretFault,
      })
      // Distinct keys, and no more key-shaped text than a secret can keep beside a cut body (the
      // bound of what can be kept: past it, a key cannot be stored before it is proven).
      .filter(
        (d) =>
          !d.shape.decoys.some((decoy) => decoy.value === d.newKey) &&
          d.shape.decoys.reduce((sum, decoy) => sum + decoy.value.length, d.newKey.length) <= 40_000,
      )
      .map((d) => {
        const success = (SUCCESS as readonly number[]).includes(d.status);
        const key = `ok_${d.oldKey}`;
        return {
          behaviour: {
            key,
            newKey: d.newKey,
            rotate: {
              rotates: success || d.rotatesOnError,
              status: d.status,
              contentType: d.contentType,
              body: render(d.shape, d.newKey),
              pieces: d.pieces,
              gapMs: d.gapMs,
            },
            wrongKey: d.wrongKey,
            propagationMs: d.propagationMs,
          },
          secretFault: d.secretFault,
          summary: {
            keyChars: d.newKey.length,
            format: d.shape.format,
            keyPresent: d.shape.keyPresent,
            depth: d.shape.path.length,
            asJsonString: d.shape.asJsonString,
            decoys: d.shape.decoys.map((decoy) => decoy.value.length),
            padding: d.shape.padding,
            status: d.status,
            rotates: success || d.rotatesOnError,
            wrongKey: d.wrongKey,
            propagationMs: d.propagationMs,
            secretFault: d.secretFault,
          },
        };
      })
  );
}
