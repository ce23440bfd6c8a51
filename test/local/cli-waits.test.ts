/**
 * What `npm start` says while it waits, through the CLI: a start that stays quiet past 2 s (loading
 * the pipeline, the vendor check) says what it waits for before anything else, and a big list's
 * progress line gives the rate so far and how long the rest will take. No function of the CLI's is
 * called directly: these hold the behaviour, whatever module it lives in.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, runCliProcess } from './cli-run.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-waits-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm start, as a process, before its first line', () => {
  it('says what it waits for when the start takes over 2 s (a vendor slow to answer its check)', async () => {
    // A vendor that refuses the key, 3 s after each request.
    const vendor = createServer((_request, response) => {
      setTimeout(() => response.writeHead(401, { 'content-type': 'application/json' }).end('{}'), 3_000);
    });
    vendor.listen(0, '127.0.0.1');
    await once(vendor, 'listening');
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    try {
      const run = await runCliProcess(['scan', 'a.example.com', '--out', join(dir, 'out')], {
        SCAN_API_URL: url,
        VENDOR_API_KEY: 'sk_test_slow_vendor_0123456789',
      });

      expect(run.code).toBe(2);
      expect(run.stdout.split('\n')[0]).toBe(
        'Starting: loading the pipeline, checking the vendor and starting the embedded S3 (seconds; more on a busy machine)',
      );
    } finally {
      vendor.close();
    }
  }, 120_000);
});

describe('npm start -- scan of a big list, into a pipe', () => {
  it('prints progress lines with the rate so far and about how long the rest will take', async () => {
    const list = join(dir, 'sixty.txt');
    await writeFile(list, `${Array.from({ length: 60 }, (_, i) => `d${i + 1}.example.com`).join('\n')}\n`);

    // Waits as the flags say (not replaced), and ten scans at once rather than the local default of
    // 50, so the run lasts past the 5 s between progress lines with some scans done and some left.
    const run = await runCli(
      [
        'scan',
        '--domains-file',
        list,
        '--out',
        join(dir, 'out'),
        '--min-wait',
        '1',
        '--max-wait',
        '2',
        '--concurrency',
        '10',
      ],
      {},
      { timing: 'as-defined' },
    );

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\d+\/60 done: \d+ succeeded, .*\(\d+s, [\d.]+\/(s|min), about (\d+h \d+m|\d+m \d+s|\d+s) left\)$/m,
    );
  }, 300_000);
});
