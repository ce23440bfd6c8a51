/**
 * The listing read from its text, one entry at a time, reads what the whole answer parsed reads:
 * drawn listings (entries of every shape a vendor sends, in any envelope or at a configured path,
 * with whitespace and escapes drawn too) give the same scans, counts and sample either way, and
 * text that is not JSON, or nests too deep, is refused by name.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VendorJsonLimitError, VendorResponseError } from '#lambdas/platform/errors';
import { readScanListingText } from '#lambdas/vendor-api/scan/listing-text';
import { readScanListing } from '#lambdas/vendor-api/scan/scan-listing';

const uuid = fc.uuid();
const entry = fc.oneof(
  fc.record(
    {
      uuid: fc.oneof(uuid, fc.string()),
      domain: fc.oneof(fc.constantFrom('example.com', 'a.example.org', 'bad domain', ''), fc.string()),
      status: fc.oneof(fc.constantFrom('completed', 'running', 'failed', 'queued'), fc.string()),
      created_at: fc.oneof(fc.constant('2026-11-20T10:00:00Z'), fc.integer(), fc.string()),
      note: fc.string(),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
const listing = fc.record({
  entries: fc.array(entry, { maxLength: 30 }),
  envelope: fc.constantFrom('top', 'scans', 'items', 'data.items', 'results', 'path', 'none'),
  indent: fc.constantFrom(undefined, 1, 2, '\t'),
});

function wrap(entries: unknown[], envelope: string): unknown {
  switch (envelope) {
    case 'top':
      return entries;
    case 'data.items':
      return { other: 1, data: { items: entries } };
    case 'path':
      return { vendor: { page: [{ list: entries }] } };
    case 'none':
      return { count: entries.length };
    default:
      return { total: entries.length, [envelope]: entries };
  }
}

describe('readScanListingText', () => {
  it('reads what readScanListing reads of the parsed answer', () => {
    fc.assert(
      fc.property(listing, ({ entries, envelope, indent }) => {
        const raw = wrap(entries, envelope);
        const paths = envelope === 'path' ? { list: 'vendor.page.0.list' } : {};
        const text = JSON.stringify(raw, null, indent);

        expect(readScanListingText(text, paths)).toEqual(readScanListing(JSON.parse(text), paths));
      }),
      { seed: 43, numRuns: 300 },
    );
  });

  it('refuses text that is not JSON, or nests too deep, by name', () => {
    for (const text of ['{"scans":[{},', '{"scans":[{}]} x', '{"scans":[{"uuid":tru}]}', '[1,,2]']) {
      expect(() => readScanListingText(text)).toThrow(VendorResponseError);
    }
    expect(() => readScanListingText(`{"scans":[${'['.repeat(100)}${']'.repeat(100)}]}`)).toThrow(
      VendorJsonLimitError,
    );
  });
});
