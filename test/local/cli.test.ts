/**
 * `npm start` in-process: `main(argv)` from local/cli.ts with stdout and stderr captured. The runs
 * that scan use real (short) waits, because the CLI does not override Wait states; keep them few.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import type { ScanManifest } from '#lambdas/scan/manifest';
import { nodeVersionProblem } from '../../local/cli.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, IAM_EVALUATED_CLEAN, runCli } from './cli-run.ts';

const DEMO_LIST = resolve(import.meta.dirname, '../../examples/domains.txt');
const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

let outDir: string;

beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'cli-test-'));
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
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Vendor: built-in simulator at http://127.0.0.1:');
    expect(run.stdout).toMatch(/line\s+domain\s+result/);
    expect(run.stdout).toMatch(/\ba\.example\.com\s+succeeded\b/);
    expect(run.stdout).toContain('1 line(s): 1 succeeded, 0 failed');
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);

    // Assess: the mirror holds exactly the list, its run files and the scan's outputs
    const input = await filesUnder(join(outDir, 'pipeline-input'));
    expect(input).toEqual([expect.stringMatching(/^incoming\/command-line-[^/]+\.txt$/)]);
    expect(await readFile(join(outDir, 'pipeline-input', input[0] ?? ''), 'utf8')).toBe('a.example.com\n');
    const results = await filesUnder(join(outDir, 'pipeline-results'));
    const summaryPath = results.find((path) => path.endsWith('/summary.json')) ?? '';
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
    const listPrefix = summaryPath.replace(/summary\.json$/, '');
    expect(results).toEqual(
      [
        ...manifest.objects.map((object) => object.key),
        manifestKey,
        `${listPrefix}items.json`,
        `${listPrefix}rejects.json`,
        summaryPath,
        `${listPrefix}summary.txt`,
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

  it('exits 1 when the domains file has an invalid line, and the summary names the line', async () => {
    // Prepare
    const list = join(outDir, 'team list+ü.txt');
    await writeFile(list, '# the team list\nnot a domain!\n', 'utf8');

    // Act
    const run = await runCli(['scan', '--domains-file', list, '--out', join(outDir, 'out'), ...QUICK_WAITS]);

    // Assess
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^2\s+not a domain!\s+invalid\s+contains a space$/m);
    expect(run.stdout).toContain('2 line(s): 0 succeeded, 0 failed, 0 timed out, 0 rejected, 1 invalid');
    const results = await filesUnder(join(outDir, 'out', 'pipeline-results'));
    const summaryPath = results.find((path) => path.endsWith('/summary.json')) ?? '';
    expect(summaryPath).toMatch(/^lists\/incoming\/team list\+ü\/[0-9a-f]{20}\/summary\.json$/);
    expect(await filesUnder(join(outDir, 'out', 'pipeline-input'))).toEqual(['incoming/team list+ü.txt']);
    const summary = JSON.parse(
      await readFile(join(outDir, 'out', 'pipeline-results', summaryPath), 'utf8'),
    ) as ListSummary;
    expect(summary.invalid).toEqual([{ line: 2, reason: 'contains a space', text: 'not a domain!' }]);
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
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^2\s+not a domain!\s+invalid\s+contains a space$/m);
    expect(run.stdout).toMatch(/^arg 1\s+zz\.example\.com\s+succeeded/m);
    expect(run.stdout).toContain(
      '3 line(s): 1 succeeded, 0 failed, 0 timed out, 0 rejected, 1 invalid, 0 duplicate, 1 blank or comment',
    );
  });
});

describe('npm start with no command', () => {
  it('runs the demo over examples/domains.txt against the simulator and exits 0', async () => {
    // Act
    const run = await runCli(['--out', outDir]);

    // Assess
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Demo: scanning ${DEMO_LIST}`);
    expect(run.stdout).toContain('Vendor: built-in simulator at http://127.0.0.1:');
    expect(await readFile(join(outDir, 'pipeline-input', 'incoming', 'domains.txt'))).toEqual(
      await readFile(DEMO_LIST),
    );
    const results = await filesUnder(join(outDir, 'pipeline-results'));
    const summaryPath = results.find((path) =>
      /^lists\/incoming\/domains\/[0-9a-f]{20}\/summary\.json$/.test(path),
    );
    const summary = JSON.parse(
      await readFile(join(outDir, 'pipeline-results', summaryPath ?? ''), 'utf8'),
    ) as ListSummary;
    expect(summary.counts).toMatchObject({ failed: 0, timed_out: 0, rejected: 0, invalid: 0 });
    expect(summary.counts.succeeded).toBeGreaterThan(0);
    // The demo loses its first start's answer after the scan was created: settled by adoption.
    expect(run.stdout).toContain('StartScan (start answer lost: adopted the scan it created');
    expect(summary.settledStarts).toEqual({ adopted: 1, retried: 0, unresolved: 0 });
    expect(run.stdout).toContain(
      "Starts whose answer was lost, settled from the vendor's listing: 1 adopted",
    );
    for (const entry of summary.domains.filter((d) => d.state === 'succeeded')) {
      expect(results, entry.domain).toContain(entry.manifestKey);
    }
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
      expect(run.code).toBe(0);
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
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/\bgood\.example\.com\s+succeeded\b/);
      expect(run.stdout).toMatch(/\bbad\.example\.com\s+failed\s+ScanFailed: /);
      expect(run.stdout).toContain('2 line(s): 1 succeeded, 1 failed');
    } finally {
      await vendor.close();
    }
  });
});

describe('npm start says what it is waiting for', () => {
  it('shows the waits, and each vendor retry with its status and delay, as they happen', async () => {
    // Prepare: two 500s on the report, retried inside the fetch
    const vendor = await startVendorSimulator({ pollsToFinish: 1 });
    vendor.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 2,
      fault: { type: 'status', status: 500 },
    });
    try {
      // Act
      const run = await runCli(['scan', 'slow.example.com', '--out', outDir, ...QUICK_WAITS], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });

      // Assess
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/StartScan \(.*waiting 1 s\)/);
      expect(run.stdout).toMatch(/vendor scan\.getReport: HTTP 500, retry 1\/4 in \d+(\.\d)? s/);
      expect(run.stdout).toMatch(/vendor scan\.getReport: HTTP 500, retry 2\/4 in \d+(\.\d)? s/);
    } finally {
      await vendor.close();
    }
  });

  it('says when a Retry-After is longer than the client waits, and shows the state machine retrying the start', async () => {
    // Prepare
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    vendor.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: 1,
      fault: { type: 'status', status: 429, retryAfter: 3600 },
    });
    try {
      // Act
      const run = await runCli(['scan', 'busy.example.com', '--out', outDir, ...QUICK_WAITS], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });

      // Assess
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('vendor scan.startScan: HTTP 429 asking to wait 3600 s (Retry-After)');
      expect(run.stdout).toMatch(
        /StartScan failed \(VendorThrottledError\); the state machine retries it \(retry 1\/4\)/,
      );
    } finally {
      await vendor.close();
    }
  });

  it('names the failure category first, then the error behind it', async () => {
    // Prepare: a permanent 404 on the report
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    vendor.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 1,
      fault: { type: 'status', status: 404 },
    });
    try {
      // Act
      const run = await runCli(['scan', 'gone.example.com', '--out', outDir, ...QUICK_WAITS], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });

      // Assess
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/gone\.example\.com\s+=> failed \(OutputFetchFailed: VendorHttpError\)/);
    } finally {
      await vendor.close();
    }
  });
});

describe('npm start poll settings', () => {
  it('chooses the largest deadline that fits the history budget when only the waits are given, and says so', async () => {
    // Act
    const run = await runCli(['scan', 'example.com', '--min-wait', '1', '--max-wait', '2', '--out', outDir]);

    // Assess
    expect(run.code).toBe(0);
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
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      '--min-wait 1, --max-wait 2, pipeline.poll.growthFactor 1.5 and --deadline 604800',
    );
    expect(run.stderr).toMatch(/lower --deadline \(604800\) to at most \d+/);
    expect(await filesUnder(outDir)).toEqual([]);
  });
});

describe('npm start fails fast, before any work', () => {
  it('suggests the command that was meant for a typo', async () => {
    const run = await runCli(['scna', 'example.com', '--out', outDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command 'scna'. Did you mean 'scan'?");
  });

  it('suggests scan for a bare domain', async () => {
    const run = await runCli(['example.com', '--out', outDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('npm start -- scan example.com');
  });

  it('names the flag of a bad --concurrency in one line, without the whole usage', async () => {
    const run = await runCli(['scan', 'example.com', '--concurrency', '0', '--out', outDir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--concurrency must be a whole number between 1 and 1000 (got "0")');
    expect(run.stderr).not.toContain('Usage:');
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
  });

  it('exits 1 for an empty list, saying it is empty, before starting anything', async () => {
    const list = join(outDir, 'empty.txt');
    await writeFile(list, '# nothing yet\n\n', 'utf8');
    const run = await runCli(['scan', '--domains-file', list, '--out', join(outDir, 'out')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is empty');
    expect(run.stdout).not.toContain('Vendor:');
  });

  it('exits 2 when --out is an existing file, before any scan', async () => {
    const file = join(outDir, 'not-a-dir');
    await writeFile(file, 'x', 'utf8');
    const run = await runCli(['scan', 'example.com', '--out', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--out ${file}: exists and is not a directory`);
    expect(run.stdout).not.toContain('Vendor:');
  });

  it('exits 2 when --out cannot be created', async () => {
    const run = await runCli(['scan', 'example.com', '--out', '/proc/nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--out /proc/nope: cannot be created or written');
  });

  it('exits 2 naming VENDOR_API_KEY when the vendor refuses the key, after one call', async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    try {
      const run = await runCli(['scan', 'a.example.com', 'b.example.com', ...QUICK_WAITS, '--out', outDir], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: 'sk_wrong_key_for_this_vendor_000',
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('VENDOR_API_KEY: is refused by the vendor');
      expect(run.stderr).not.toContain('sk_wrong_key_for_this_vendor_000');
      expect(vendor.requestCount('POST /scan')).toBe(0);
      expect(vendor.requestCount('GET /stats')).toBeGreaterThan(0);
    } finally {
      await vendor.close();
    }
  });

  it('exits 2 naming SCAN_API_URL when nothing listens there', async () => {
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'http://127.0.0.1:1',
      VENDOR_API_KEY: 'sk_not_sent_anywhere_0000',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SCAN_API_URL: cannot be reached: http://127.0.0.1:1 (ECONNREFUSED)');
  });

  it('says which Node.js to use when run on Node 20', () => {
    expect(nodeVersionProblem('20.20.2')).toContain('needs Node.js 22 or later, and this is Node.js 20.20.2');
    expect(nodeVersionProblem('22.23.3')).toBeUndefined();
  });

  it('loads --config FILE with the schema cdk synth uses, naming a bad setting', async () => {
    const file = join(outDir, 'pipeline.json');
    await writeFile(file, JSON.stringify({ scan: { maxConcurrency: 0 } }), 'utf8');
    const run = await runCli(['scan', 'example.com', '--config', file, '--out', join(outDir, 'out')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('pipeline.scan.maxConcurrency must be between 1 and 1000 (got 0)');
  });

  it('runs with the intake suffixes of --config FILE', async () => {
    const file = join(outDir, 'pipeline.json');
    await writeFile(file, JSON.stringify({ intake: { suffixes: ['.lst'] } }), 'utf8');
    const list = join(outDir, 'team.lst');
    await writeFile(list, 'example.com\n', 'utf8');
    const run = await runCli([
      'scan',
      '--domains-file',
      list,
      '--config',
      file,
      ...QUICK_WAITS,
      '--out',
      join(outDir, 'out'),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\bexample\.com\s+succeeded\b/);
  });
});

describe('npm start usage and configuration errors', () => {
  it.each([
    ['no domains', ['scan'], 'give at least one domain or --domains-file'],
    ['an unknown flag', ['scan', 'a.example.com', '--frobnicate'], "unknown option '--frobnicate'"],
    [
      '--max-wait below --min-wait',
      ['scan', 'a.example.com', '--min-wait', '30', '--max-wait', '10'],
      '--max-wait',
    ],
    [
      'a --min-wait that is not a whole number',
      ['scan', 'a.example.com', '--min-wait', 'soon'],
      '--min-wait',
    ],
  ])('exits 2 for %s', async (_case, argv, message) => {
    // Act
    const run = await runCli([...argv, '--out', outDir]);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(await filesUnder(outDir)).toEqual([]);
  });

  it('exits 2 naming a --domains-file that does not exist', async () => {
    // Prepare
    const missing = join(outDir, 'no-such-list.txt');

    // Act
    const run = await runCli(['scan', '--domains-file', missing, '--out', outDir]);

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(missing);
    expect(run.stderr).toContain('ENOENT');
  });

  it('exits 2 naming a --domains-file whose extension is not a domain-list extension', async () => {
    // Prepare
    const list = join(outDir, 'team.list');
    await writeFile(list, 'a.example.com\n', 'utf8');

    // Act
    const run = await runCli(['scan', '--domains-file', list, '--out', join(outDir, 'out')]);

    // Assess
    expect(run.stderr).toContain(list);
    expect(run.stderr).toContain('.txt, .csv');
    expect(run.code).toBe(2);
  });

  it('exits 2 naming VENDOR_API_KEY when SCAN_API_URL is set without it', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'http://127.0.0.1:9',
    });

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('VENDOR_API_KEY');
  });

  it('exits 2 for a plain-http vendor URL that is not loopback, showing the URL with its scheme', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'http://vendor.example.com',
      VENDOR_API_KEY: 'sk_live_would_travel_in_clear_0123',
    });

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SCAN_API_URL: must use https');
    expect(run.stderr).toContain('"http://vendor.example.com"');
    expect(run.stderr).not.toContain('sk_live_would_travel_in_clear_0123');
    expect(await filesUnder(outDir)).toEqual([]);
  });

  it('exits 2 naming SCAN_API_URL when it is not a URL', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'vendor.example.com/api',
      VENDOR_API_KEY: 'sk_sim_not_used_here_0123',
    });

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SCAN_API_URL');
    expect(run.stderr).not.toContain('sk_sim_not_used_here_0123');
  });

  it('exits 0 for --help and describes the scan command', async () => {
    // Act
    const run = await runCli(['--help']);

    // Assess
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('scan');
    expect(run.stdout).toContain('Usage:');
  });
});
