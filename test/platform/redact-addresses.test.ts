/**
 * The person's own addresses, redacted by value: drawn addresses (ASCII and Unicode domains),
 * echoed in drawn forms (any case, the domain in punycode or Unicode, the `@` escaped as a vendor
 * might, glued to drawn neighbours), are gone from the redacted text, and such a text is not
 * mistaken for one holding a key.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  containsEmail,
  holdsSecret,
  REDACTED,
  redactText,
  rememberAddresses,
} from '#lambdas/platform/redaction/redact';

const SEED = 43;

const label = (chars: string, min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...chars), minLength: min, maxLength: max });

/** An address whose local part and domain labels are long enough not to occur by chance. */
const address = fc
  .record({
    local: fc.tuple(label('abcdefghkmnprstvw', 4, 10), fc.option(label('abcdefghkmnprstvw', 2, 6))),
    domain: fc.tuple(label('abcdefghkmnprstvwüéøß', 5, 12), fc.constantFrom('org', 'de', 'com', 'co.uk')),
  })
  .map(({ local, domain }) => ({
    local: local[1] === null ? local[0] : `${local[0]}.${local[1]}`,
    domain: `${domain[0]}.${domain[1]}`,
  }))
  .filter(({ domain }) => domainToASCII(domain) !== '');

const AT_FORMS = ['@', '%40', '&#64;', '&#x40;', '&#X40;', '&commat;', '\\u0040', '\\\\u0040', '\\x40'];
const NEIGHBOURS = fc.string({ unit: fc.constantFrom(...'0123456789-_xyzQ. :"'), maxLength: 6 });

describe('redactText with the request addresses remembered', () => {
  it('removes every drawn form of an address, glued to any neighbour', () => {
    fc.assert(
      fc.property(
        address,
        fc.constantFrom(...AT_FORMS),
        fc.constantFrom('as typed', 'punycode', 'unicode'),
        fc.constantFrom('as typed', 'lower', 'upper'),
        NEIGHBOURS,
        NEIGHBOURS,
        ({ local, domain }, at, domainForm, casing, before, after) => {
          rememberAddresses([`${local}@${domain}`]);
          const ascii = domainToASCII(domain);
          const shownDomain =
            domainForm === 'punycode' ? ascii : domainForm === 'unicode' ? domainToUnicode(ascii) : domain;
          const echoed = `${local}${at}${shownDomain}`;
          const cased =
            casing === 'lower' ? echoed.toLowerCase() : casing === 'upper' ? echoed.toUpperCase() : echoed;
          const text = `report ${before}${cased}${after} ready`;

          const redacted = redactText(text);

          expect(redacted).toContain(REDACTED);
          const lowered = redacted.toLowerCase();
          for (const form of [domain, ascii, domainToUnicode(ascii)]) {
            expect(lowered).not.toContain(form.toLowerCase());
          }
          expect(containsEmail(text)).toBe(true);
          expect(holdsSecret(text)).toBe(false);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('names the cases the pattern alone missed', () => {
    rememberAddresses(['bob.smith@example.org', 'jurgen@xn--mller-kva.de']);

    expect(redactText('bob.smith@example.org-20261128')).toBe(`${REDACTED}-20261128`);
    expect(redactText('bob.smith@example.org2026')).toBe(`${REDACTED}2026`);
    expect(redactText('jurgen@müller.de_2026')).toBe(`${REDACTED}_2026`);
    expect(redactText('for bob.smith&#64;example.org')).toBe(`for ${REDACTED}`);
    expect(redactText('for bob.smith\\u0040example.org')).toBe(`for ${REDACTED}`);
    // A key beside the address is still a key.
    expect(holdsSecret('bob.smith@example.org-sk_live_abcdefgh1234')).toBe(true);
  });
});
