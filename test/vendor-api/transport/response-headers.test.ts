/**
 * Response headers reduced to what they name: drawn header values, a key value in use or an
 * address inserted anywhere in them, come out as a strict media type, a quoted hash-form ETag or a
 * registered coding list, or not at all, and never holding the key or the address.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rememberKeyValue } from '#lambdas/platform/redaction/redact';
import { registeredCodings, safeEtag, safeMediaType } from '#lambdas/vendor-api/transport/response-headers';

const KEY = 'PlainWordKeyHeaderTest';
rememberKeyValue(KEY);

const headerText = fc.string({ unit: fc.constantFrom(...'abcxyz/;=" -+.W09@\tAZ,'), maxLength: 30 });
const withSecret = fc
  .tuple(headerText, fc.constantFrom(KEY, 'alice.victim@corp-example.com'), headerText)
  .map(([before, secret, after]) => `${before}${secret}${after}`);

describe('response header sanitising', () => {
  it('keeps a media type as type/subtype (and a charset), or nothing, never a secret', () => {
    fc.assert(
      fc.property(fc.oneof(headerText, withSecret), (value) => {
        const kept = safeMediaType(value);
        if (kept === undefined) return;
        expect(kept).toMatch(
          /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(; charset=[a-z0-9._:+-]+)?$/,
        );
        expect(kept.toLowerCase()).not.toContain(KEY.toLowerCase());
        expect(kept).not.toContain('@');
      }),
      { seed: 43, numRuns: 500 },
    );
    expect(safeMediaType('Text/Plain; Charset="UTF-8"; served-for=x')).toBe('text/plain; charset=utf-8');
    expect(safeMediaType(`text/plain; charset=${KEY}`)).toBe('text/plain');
    expect(safeMediaType(`application/${KEY}`)).toBeUndefined();
  });

  it('keeps an ETag only quoted, of hash characters, holding no secret', () => {
    fc.assert(
      fc.property(fc.oneof(headerText, withSecret), (value) => {
        const kept = safeEtag(value);
        if (kept === undefined) return;
        expect(kept).toMatch(/^(W\/)?"[A-Za-z0-9._:+/=-]{1,128}"$/);
        expect(kept).not.toContain(KEY);
      }),
      { seed: 43, numRuns: 500 },
    );
    expect(safeEtag('"d41d8cd98f00b204e9800998ecf8427e-3"')).toBe('"d41d8cd98f00b204e9800998ecf8427e-3"');
    expect(safeEtag(`"${KEY}"`)).toBeUndefined();
  });

  it('keeps registered content codings only, canonically written', () => {
    expect(registeredCodings(' GZIP , br')).toBe('gzip, br');
    expect(registeredCodings('zstd')).toBe('zstd');
    expect(registeredCodings(undefined)).toBeUndefined();
    expect(registeredCodings(`x-${KEY}`)).toBe('unregistered');
  });
});
