/**
 * What `npm start` says before its first line: a start that stays quiet past 2 s (loading the
 * pipeline, the vendor check) says what it waits for before anything else. No function of the CLI's
 * is called directly: this holds the behaviour, whatever module it lives in. The progress lines of
 * a big list (the rate so far and how long the rest will take) are checked on the list over the
 * compact threshold in test/local/cli-output.test.ts.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './cli-run.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-waits-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm start before its first line', () => {
  it('says what it waits for when the start takes over 2 s (a vendor slow to answer its check)', async () => {
    // A vendor that refuses the key, 3 s after each request: the start is slow whatever the
    // machine, so this runs in-process (the line is the same in a process of its own; exit codes as
    // the shell sees them are test/local/cli-process.test.ts's).
    const vendor = createServer((_request, response) => {
      setTimeout(() => response.writeHead(401, { 'content-type': 'application/json' }).end('{}'), 3_000);
    });
    vendor.listen(0, '127.0.0.1');
    await once(vendor, 'listening');
    const url = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    try {
      const run = await runCli(['scan', 'a.example.com', '--out', join(dir, 'out')], {
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
