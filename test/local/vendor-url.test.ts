/**
 * The up-front vendor check proves the base URL, and errors name the variable the user set: a
 * base URL with a wrong path (`SCAN_API_URL=…/api`) once passed the check (a 404 was taken as "the
 * vendor is there") and every domain then failed HTTP 404 with exit 1; `BREACH_API_URL cannot be
 * reached` was said when only SCAN_API_URL was set. And `scan ./x.txt` says --domains-file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, runCli } from './cli-run.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vendor-url-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the up-front vendor check', () => {
  it('exits 2 naming SCAN_API_URL when its path is wrong (404 on the API’s own path), before any scan', async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    try {
      const run = await runCli(['scan', 'a.example.com', '--out', join(dir, 'out')], {
        SCAN_API_URL: `${vendor.url}/api`,
        VENDOR_API_KEY: vendor.apiKey,
      });

      expect(run).toExitWith(2);
      expect(run.stderr).toBe(
        `error: Configuration SCAN_API_URL: ${vendor.url}/api answers HTTP 404 to GET /stats, a path the vendor's API has: is the base URL right (no path added or missing)?\n`,
      );
      expect(vendor.requestCount('POST /scan')).toBe(0);
      expect(await filesUnder(join(dir, 'out'))).toEqual([]);
    } finally {
      await vendor.close();
    }
  });

  it('names the variable the user set when another API defaulted to it', async () => {
    const run = await runCli(['breach', '--name', 'Jane', '--email', 'jane@example.com', '--out', dir], {
      SCAN_API_URL: 'http://127.0.0.1:1',
      VENDOR_API_KEY: 'sk_not_sent_anywhere_0000',
    });

    expect(run).toExitWith(2);
    expect(run.stderr).toContain(
      'SCAN_API_URL (used for BREACH_API_URL, which is unset): cannot be reached: http://127.0.0.1:1 (ECONNREFUSED)',
    );
  });
});

describe('scan with a file where a domain goes', () => {
  it.each([['./x.txt'], ['lists/weekly.csv']])('%s: exits 2 and says --domains-file', async (arg) => {
    const run = await runCli(['scan', arg, '--out', dir]);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      `error: ${arg} looks like a domain-list file, not a domain: did you mean npm start -- scan --domains-file ${arg}?\n`,
    );
  });

  it('a path to an existing file of another name too', async () => {
    const file = join(dir, 'domains');
    await writeFile(file, 'a.example.com\n');

    const run = await runCli(['scan', file, '--out', join(dir, 'out')]);

    expect(run).toExitWith(2);
    expect(run.stderr).toContain(`did you mean npm start -- scan --domains-file ${file}?`);
  });

  it('a URL is still a domain to scan', async () => {
    const run = await runCli([
      'scan',
      'https://www.example.org/x.txt',
      '--out',
      join(dir, 'out'),
      '--min-wait',
      '1',
    ]);
    expect(run.stderr).not.toContain('--domains-file');
  });
});
