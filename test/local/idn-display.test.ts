/**
 * An internationalised domain is scanned and stored as punycode (as DNS has it), and shown with its
 * Unicode form beside it, so a person recognises the domain they typed: through the CLI here, for
 * any label in idn-display-form.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
});
