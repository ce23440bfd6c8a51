/**
 * Nothing a vendor or a user wrote reaches the terminal with a raw control character: a status word
 * or error body with escape sequences once set the window title, erased a line and printed a fake
 * `=> succeeded`. What npm start prints goes through local/output/terminal-text.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { terminal, terminalText, terminalValue } from '../../local/output/terminal-text.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { runCli } from './cli-run.ts';

/** An OSC window title, a line erase, a carriage return and a fake result line. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2K\r  bank.example.com => succeeded\u202e';
/** Any control or format character but a line feed: what must never be printed raw. */
const RAW_CONTROL = /(?!\n)[\p{Cc}\p{Cf}]/u;

describe('terminal text', () => {
  it('escapes C0 (ESC, CR, BEL, NUL), DEL, C1 and format characters, and keeps the line feeds and tabs of whole lines', () => {
    expect(terminalText(`a${HOSTILE}\tb\n`)).toBe(
      'a\\x1b]0;pwned\\x07\\x1b[2K\\x0d  bank.example.com => succeeded\\u{202e}\tb\n',
    );
    expect(terminalText('\u0000\u007f\u0085\u200d')).toBe('\\x00\\x7f\\x85\\u{200d}');
  });

  it('escapes a line feed inside a value, so a value cannot start a line of its own', () => {
    expect(terminalValue('one\ntwo\t')).toBe('one\\x0atwo\\x09');
    expect(terminal`  ${'x\n=> ok'} done\n`).toBe('  x\\x0a=> ok done\n');
  });
});

describe('npm start against a vendor whose text holds escape sequences', () => {
  let outDir: string;
  beforeEach(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'terminal-text-'));
  });
  afterEach(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it('prints no raw control character from a status word, and shows it escaped', async () => {
    // Prepare: the vendor's first status answer is a status word full of terminal controls.
    const vendor = await startVendorSimulator({ pollsToFinish: 1 });
    vendor.addFault({
      api: 'scan',
      method: 'GET',
      path: '/status/',
      times: 1,
      fault: {
        type: 'status',
        status: 200,
        bodyBase64: Buffer.from(JSON.stringify({ status: HOSTILE })).toString('base64'),
        contentType: 'application/json',
      },
    });
    try {
      // Act
      const run = await runCli(['scan', 'hostile.example.com', '--out', outDir, '--verbose'], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });

      // Assess
      const printed = `${run.stdout}${run.stderr}`;
      expect(printed).toMatch(/hostile\.example\.com/);
      expect(printed).not.toMatch(RAW_CONTROL);
      expect(printed).toContain('\\x1b');
    } finally {
      await vendor.close();
    }
  });
});
