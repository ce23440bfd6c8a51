/**
 * `npm start -- scan` in-process (`main(argv)`, test/local/cli-run.ts): against the built-in
 * simulator and one given by URL, what it says while it waits, and the poll settings it chooses.
 * Waits and retry intervals are 0 ms except where a test shows them; the child-process runs are in
 * cli-process.test.ts.
 */

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import type { ScanManifest } from '#lambdas/scan/write-scan-manifest';
import { byteSize } from '../../local/output/summary-table.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { FaultRule } from '../../local/simulator/types.ts';
import { type CliRun, type CliRunOptions, filesUnder, IAM_EVALUATED_CLEAN, runCli } from './cli-run.ts';

const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

let outDir: string;

beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'cli-scan-'));
});

afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('npm start -- scan against the built-in simulator', () => {
  it('exits 0 and mirrors every object byte-identical under --out, with a summary table', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir, ...QUICK_WAITS]);

    // Assess: exit code and output
    expect(run.stderr).not.toMatch(/^error:/m);
    expect(run).toExitWith(0);
    expect(run.stdout).toContain('Vendor: built-in simulator at http://127.0.0.1:');
    expect(run.stdout).toMatch(/line\s+domain\s+result/);
    expect(run.stdout).toMatch(/\ba\.example\.com\s+succeeded\b/);
    expect(run.stdout).toContain('1 line(s): 1 succeeded, 0 failed');
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);

    // Assess: the mirror holds exactly the run's folder (the list as uploaded in it) and the scan's outputs
    expect(existsSync(join(outDir, 'pipeline-input'))).toBe(false);
    const results = await filesUnder(join(outDir, 'pipeline-results'));
    const summaryPath = results.find((path) => path.endsWith('/summary.json')) ?? '';
    const input = results.filter((path) => path.startsWith(summaryPath.replace(/summary\.json$/, 'input/')));
    expect(input).toEqual([expect.stringMatching(/\/input\/command-line-[^/]+\.txt$/)]);
    expect(await readFile(join(outDir, 'pipeline-results', input[0] ?? ''), 'utf8')).toBe('a.example.com\n');
    const summary = JSON.parse(
      await readFile(join(outDir, 'pipeline-results', summaryPath), 'utf8'),
    ) as ListSummary;
    expect(summary.counts).toMatchObject({ lines: 1, succeeded: 1 });
    const manifestKey = summary.domains[0]?.manifestKey ?? '';
    expect(manifestKey).toMatch(
      /^scans\/a\.example\.com\/\d{4}\/\d{2}\/\d{2}\/[0-9a-f-]{36}\/manifest\.json$/,
    );
    const manifest = JSON.parse(
      await readFile(join(outDir, 'pipeline-results', manifestKey), 'utf8'),
    ) as ScanManifest;
    // The table says what each scan brought and how long it took, not only where it is.
    const sizes = manifest.objects.map((object) => `${object.name} ${byteSize(object.size)}`).join(', ');
    expect(sizes).toMatch(/^report \d+(\.\d)? KiB, logs \d+(\.\d)? KiB, debug \d+(\.\d)? KiB$/);
    expect(run.stdout).toMatch(/^line\s+domain\s+result\s+took\s+sizes\s+outputs \/ error$/m);
    const row = run.stdout.split('\n').find((line) => line.startsWith('arg 1 ')) ?? '';
    expect(row.split(/ {2,}/)).toEqual([
      'arg 1',
      'a.example.com',
      'succeeded',
      `${manifest.timings.elapsedSeconds} s`,
      sizes,
      `${outDir}/pipeline-results/${manifestKey.replace(/manifest\.json$/, '')}`,
    ]);
    const listPrefix = summaryPath.replace(/summary\.json$/, '');
    expect(results).toEqual(
      [
        ...manifest.objects.map((object) => object.key),
        manifestKey,
        `${listPrefix}items.json`,
        `${listPrefix}rejects.json`,
        summaryPath,
        `${listPrefix}summary.txt`,
        `${listPrefix}run.json`,
        `${listPrefix}index.html`,
        ...input,
        // What the manifest step learned of the scan's duration (lambdas/scan/learned-durations.ts).
        'learned/scan-durations/domains/com.example.a.json',
      ].sort(),
    );
    expect(run.stdout).toContain(`Summary: ${outDir}/pipeline-results/${summaryPath}`);

    // Assess: byte-identical to what the pipeline stored (the manifest's digests)
    for (const object of manifest.objects) {
      const bytes = await readFile(join(outDir, 'pipeline-results', object.key));
      expect(bytes.length, object.key).toBe(object.size);
      expect(sha256Hex(bytes), object.key).toBe(object.sha256);
    }
  });

  it('keeps the file line numbers when domains on the command line are added to a file', async () => {
    // Prepare: a file without a trailing newline, plus one domain on the command line
    const list = join(outDir, 'team.txt');
    await writeFile(list, '# the team list\nnot a domain!', 'utf8');

    // Act
    const run = await runCli([
      'scan',
      'zz.example.com',
      '--domains-file',
      list,
      '--out',
      join(outDir, 'mixed'),
      ...QUICK_WAITS,
    ]);

    // Assess: line 2 is still the file's line 2; the command-line domain is numbered on its own
    expect(run).toExitWith(1);
    expect(run.stdout).toMatch(/^2\s+not a domain!\s+invalid\s+contains a space$/m);
    expect(run.stdout).toMatch(/^arg 1\s+zz\.example\.com\s+succeeded/m);
    expect(run.stdout).toContain(
      '3 line(s): 1 succeeded, 0 failed, 0 timed out, 0 rejected, 1 invalid, 0 duplicate, 1 blank or comment',
    );
  });
});

describe('npm start -- scan against a vendor given by SCAN_API_URL and VENDOR_API_KEY', () => {
  it('exits 0 and never prints the key, even at debug log level', async () => {
    // Prepare
    const vendor = await startVendorSimulator({ pollsToFinish: 0, apiKey: 'sk_sim_cli_test_key_0123456789' });
    try {
      // Act
      const run = await runCli(
        ['scan', 'b.example.com', '--out', outDir, '--log-level', 'debug', ...QUICK_WAITS],
        {
          SCAN_API_URL: vendor.url,
          VENDOR_API_KEY: vendor.apiKey,
        },
      );

      // Assess
      expect(run).toExitWith(0);
      expect(run.stdout).toContain(`Vendor: ${vendor.url}`);
      expect(vendor.requestCount('POST /scan')).toBe(1);
      const log = /^Log: +(\S+handler-log\.jsonl) /m.exec(run.stdout)?.[1] ?? '';
      expect(await readFile(log, 'utf8')).toContain('"level":"DEBUG"');
      expect(run.stderr).not.toContain('"level":"DEBUG"');
      expect(run.stdout).not.toContain(vendor.apiKey);
      expect(run.stderr).not.toContain(vendor.apiKey);
      for (const path of await filesUnder(outDir)) {
        expect(await readFile(join(outDir, path), 'utf8'), path).not.toContain(vendor.apiKey);
      }
    } finally {
      await vendor.close();
    }
  });

  it('exits 1 when the vendor fails a scan, and the summary names the domain and the error', async () => {
    // Prepare
    const vendor = await startVendorSimulator({ pollsToFinish: 0, failingDomains: ['bad.example.com'] });
    try {
      // Act
      const run = await runCli(
        ['scan', 'good.example.com', 'bad.example.com', '--out', outDir, ...QUICK_WAITS],
        {
          SCAN_API_URL: vendor.url,
          VENDOR_API_KEY: vendor.apiKey,
        },
      );

      // Assess
      expect(run).toExitWith(1);
      expect(run.stdout).toMatch(/\bgood\.example\.com\s+succeeded\b/);
      expect(run.stdout).toMatch(/\bbad\.example\.com\s+failed\s+ScanFailed: /);
      expect(run.stdout).toContain('2 line(s): 1 succeeded, 1 failed');
    } finally {
      await vendor.close();
    }
  });
});

/**
 * `npm start -- scan DOMAIN` against a simulator given by URL (SCAN_API_URL) whose scan API answers
 * with `rule`'s fault first; the simulator is closed afterwards, its request counts kept.
 */
async function scanAgainstFault(
  domain: string,
  rule: Omit<FaultRule, 'api'>,
  options: { readonly pollsToFinish?: number; readonly timing?: CliRunOptions['timing'] } = {},
): Promise<{ run: CliRun; requestCount: (route: string) => number }> {
  const vendor = await startVendorSimulator({ pollsToFinish: options.pollsToFinish ?? 0 });
  vendor.addFault({ api: 'scan', ...rule });
  try {
    const run = await runCli(
      ['scan', domain, '--out', outDir, ...QUICK_WAITS],
      { SCAN_API_URL: vendor.url, VENDOR_API_KEY: vendor.apiKey },
      options.timing === undefined ? {} : { timing: options.timing },
    );
    return { run, requestCount: (route) => vendor.requestCount(route) };
  } finally {
    await vendor.close();
  }
}

describe('npm start says what it is waiting for', () => {
  it('shows the waits, and each vendor retry with its status and delay, as they happen', async () => {
    // Act: two 500s on the report, retried inside the fetch, with the waits as defined (what it shows)
    const { run } = await scanAgainstFault(
      'slow.example.com',
      { method: 'GET', path: '/report/', times: 2, fault: { type: 'status', status: 500 } },
      { pollsToFinish: 1, timing: 'as-defined' },
    );

    // Assess
    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(/StartScan \(.*waiting 1 s\)/);
    expect(run.stdout).toMatch(/vendor scan\.getReport: HTTP 500, retry 1\/4 in \d+(\.\d)? s/);
    expect(run.stdout).toMatch(/vendor scan\.getReport: HTTP 500, retry 2\/4 in \d+(\.\d)? s/);
  });

  it('sleeps none of the vendor backoff in a run not about timing, and says what it replaced', async () => {
    // Act: a throttled report whose Retry-After (20 s) is one the client honours in full
    const started = Date.now();
    const { run, requestCount } = await scanAgainstFault('throttled.example.com', {
      method: 'GET',
      path: '/report/',
      times: 1,
      fault: { type: 'status', status: 429, retryAfter: 20 },
    });
    const tookMs = Date.now() - started;

    // Assess: the retry still happens and shows, without its 20 s sleep
    expect(run).toExitWith(0);
    expect(run.stdout).toContain(
      'vendor scan.getReport: HTTP 429, retry 1/4 in 0 ms (overridden; the backoff says 20 s (Retry-After 20 s))',
    );
    expect(requestCount('GET /report/{uuid}')).toBe(2);
    expect(tookMs).toBeLessThan(20_000);
  });

  it('says when a Retry-After is longer than the client waits, and shows the state machine waiting it out before starting again', async () => {
    // Act
    const { run } = await scanAgainstFault('busy.example.com', {
      method: 'POST',
      path: '/scan',
      times: 1,
      fault: { type: 'status', status: 429, retryAfter: 3600 },
    });

    // Assess
    expect(run).toExitWith(0);
    expect(run.stdout).toContain('vendor scan.startScan: HTTP 429 asking to wait 3600 s (Retry-After)');
    expect(run.stdout).toContain('StartScan hands the wait to the state machine');
    expect(run.stdout).toMatch(/busy\.example\.com\s+StartScan \(start throttled by the vendor, waiting/);
    expect(run.stdout).toMatch(/busy\.example\.com\s+=> succeeded/);
  });

  it('names the failure category first, then the error behind it', async () => {
    // Act: a permanent 404 on the report
    const { run } = await scanAgainstFault('gone.example.com', {
      method: 'GET',
      path: '/report/',
      times: 1,
      fault: { type: 'status', status: 404 },
    });

    // Assess
    expect(run).toExitWith(1);
    expect(run.stdout).toMatch(/gone\.example\.com\s+=> failed \(OutputFetchFailed: VendorHttpError\)/);
  });
});

describe('npm start poll settings', () => {
  it('chooses the largest deadline that fits the history budget when only the waits are given, and says so', async () => {
    // Act
    const run = await runCli(['scan', 'example.com', '--min-wait', '1', '--max-wait', '2', '--out', outDir]);

    // Assess
    expect(run).toExitWith(0);
    const chosen =
      /deadline (\d+)s \(chosen: the largest that fits the history budget for these waits; the default is 86400s\)/.exec(
        run.stdout,
      );
    expect(chosen).not.toBeNull();
    expect(Number(chosen?.[1])).toBeGreaterThan(0);
    expect(Number(chosen?.[1])).toBeLessThan(86_400);
    expect(run.stdout).toMatch(/\bexample\.com\s+succeeded\b/);
  });

  it('names every value and the largest deadline that works for an impossible combination', async () => {
    // Act
    const run = await runCli([
      'scan',
      'a.example.com',
      '--min-wait',
      '1',
      '--max-wait',
      '2',
      '--deadline',
      '604800',
      '--out',
      outDir,
    ]);

    // Assess
    expect(run).toExitWith(2);
    expect(run.stderr).toContain(
      '--min-wait 1, --max-wait 2, pipeline.poll.growthFactor 1.25 and --deadline 604800',
    );
    expect(run.stderr).toMatch(/lower --deadline \(604800\) to at most \d+/);
    expect(await filesUnder(outDir)).toEqual([]);
  });
});
