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
import { NO_WAITS, runCli, runCliProcess } from './cli-run.ts';

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

describe('npm start -- scan --quiet, into a pipe', () => {
  it('prints progress lines with the rate so far and about how long the rest will take', async () => {
    const list = join(dir, 'twelve.txt');
    await writeFile(list, `${Array.from({ length: 12 }, (_, i) => `d${i + 1}.example.com`).join('\n')}\n`);

    // Compact output as --quiet asks (a list over COMPACT_THRESHOLD gets it by default:
    // test/local/cli-output.test.ts), three scans at once, and a progress line every 100 ms rather
    // than every 5 s (the reporter's interval and pace: test/local/progress-pace.test.ts), so the
    // run prints some with scans done and some left.
    const run = await runCli(
      ['scan', '--domains-file', list, '--out', join(dir, 'out'), '--concurrency', '3', '--quiet'],
      {},
      { timing: { ...NO_WAITS, progressIntervalMs: 100 } },
    );

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\d+\/12 done: \d+ succeeded, .*\(\d+s, [\d.]+\/(s|min), about (\d+h \d+m|\d+m \d+s|\d+s) left\)$/m,
    );
  }, 300_000);
});
