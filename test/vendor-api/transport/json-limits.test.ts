/**
 * JSON from the vendor is parsed with a depth bound and a size bound (JSON_LIMITS): past them the
 * text is never handed to a walk that would overflow the stack.
 */
import { describe, expect, it } from 'vitest';
import { VendorJsonLimitError } from '#lambdas/platform/errors';
import { classifyScanStatus } from '#lambdas/vendor-api/scan/status';
import {
  JSON_LIMITS,
  jsonDepthExceeds,
  parseJsonBody,
  rawOf,
  requireObject,
} from '#lambdas/vendor-api/transport/json';

const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe('JSON limits', () => {
  it('takes 64 levels and refuses 65', () => {
    expect(parseJsonBody(nested(JSON_LIMITS.maxDepth)).ok).toBe(true);
    expect(parseJsonBody(nested(JSON_LIMITS.maxDepth + 1))).toMatchObject({
      ok: false,
      limit: 'the answer nests deeper than 64 levels',
    });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '[[[[{{{{'.repeat(100), b: 'say \\"[[[[" twice' });
    expect(jsonDepthExceeds(text, 2)).toBe(false);
    expect(parseJsonBody(text).ok).toBe(true);
  });

  it('refuses 20,000 levels with VendorJsonLimitError from requireObject and rawOf, without a RangeError', () => {
    const deep = `{"status":"success","output":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_001)}`;
    expect(() => requireObject('breach.recon', deep)).toThrow(VendorJsonLimitError);
    expect(() => rawOf(deep, 'scan.listScans')).toThrow(/scan.listScans returned an unusable response/);
    // A status answer that deep is read as text, as one that is not JSON.
    expect(() => classifyScanStatus(deep, 'application/json')).not.toThrow(RangeError);
  });

  it('refuses an answer longer than the size bound unparsed', () => {
    const long = `"${'x'.repeat(JSON_LIMITS.maxChars)}"`;
    expect(parseJsonBody(long)).toMatchObject({ ok: false, limit: expect.stringMatching(/longer than/) });
  });

  it('still reads malformed JSON as text, as before', () => {
    expect(rawOf('{not json', 'scan.getStats')).toBe('{not json');
  });
});
