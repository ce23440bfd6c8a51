/**
 * An internationalised domain is scanned and stored as punycode (as DNS has it), and shown with its
 * Unicode form beside it, so a person recognises the domain they typed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { domainToASCII } from 'node:url';
import { fc, test } from '@fast-check/vitest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shownDomain } from '../../local/output/summary-table.ts';
import { runCli } from './cli-run.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'idn-display-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('an internationalised domain', () => {
  it('is shown in the table as punycode with the Unicode form beside it', async () => {
    const run = await runCli([
      'scan',
      'bücher.example.com',
      '--out',
      dir,
      '--min-wait',
      '1',
      '--max-wait',
      '1',
    ]);

    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(
      /^arg 1\s+xn--bcher-kva\.example\.com \(bücher\.example\.com\)\s+succeeded\b/m,
    );
  });

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
