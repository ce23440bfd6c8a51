/**
 * How a domain is shown (`shownDomain`): a punycode one with its Unicode form beside it, for any
 * label; a plain one as it is. idn-display.test.ts shows it through the CLI.
 */
import { domainToASCII } from 'node:url';
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { shownDomain } from '../../local/output/summary-table.ts';

describe('an internationalised domain', () => {
  test.prop(
    [
      fc.string({
        unit: fc.constantFrom('a', 'k', 'z', 'ü', 'é', 'ñ', 'ø', 'я'),
        minLength: 1,
        maxLength: 12,
      }),
    ],
    {
      seed: 47,
    },
  )('any label: its punycode form is shown with the Unicode one; a plain one as it is', (label) => {
    const unicode = `${label}.example.com`;
    const ascii = domainToASCII(unicode);
    expect(shownDomain(ascii)).toBe(ascii.includes('xn--') ? `${ascii} (${unicode})` : ascii);
  });
});
