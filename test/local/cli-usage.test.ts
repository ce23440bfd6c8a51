/**
 * `npm start` refuses bad usage and configuration before any work, in-process (`main(argv)`,
 * test/local/cli-run.ts): exit 2 (1 for an empty list) and one clear line naming the flag, the
 * variable or the setting. A typo's exit code as the shell sees it is in cli-process.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../local/cli/main.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, runCli, writeCliTestConfig } from './cli-run.ts';

const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

let outDir: string;

beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'cli-usage-'));
});

afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('npm start fails fast, before any work', () => {
  it('suggests scan for a bare domain', async () => {
    const run = await runCli(['example.com', '--out', outDir]);
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('npm start -- scan example.com');
  });

  it('names the flag of a bad --concurrency in one line, without the whole usage', async () => {
    const run = await runCli(['scan', 'example.com', '--concurrency', '0', '--out', outDir]);
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('--concurrency must be a whole number between 1 and 10000 (got "0")');
    expect(run.stderr).not.toContain('Usage:');
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
  });

  it('exits 1 for an empty list, saying it is empty, before starting anything', async () => {
    const list = join(outDir, 'empty.txt');
    await writeFile(list, '# nothing yet\n\n', 'utf8');
    const run = await runCli(['scan', '--domains-file', list, '--out', join(outDir, 'out')]);
    expect(run).toExitWith(1);
    expect(run.stderr).toContain('is empty');
    expect(run.stdout).not.toContain('Vendor:');
  });

  it('exits 2 when --out is an existing file, before any scan', async () => {
    const file = join(outDir, 'not-a-dir');
    await writeFile(file, 'x', 'utf8');
    const run = await runCli(['scan', 'example.com', '--out', file]);
    expect(run).toExitWith(2);
    expect(run.stderr).toContain(`--out ${file}: exists and is not a directory`);
    expect(run.stdout).not.toContain('Vendor:');
  });

  it('exits 2 when --out cannot be created', async () => {
    const run = await runCli(['scan', 'example.com', '--out', '/proc/nope']);
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('--out /proc/nope: cannot be created or written');
  });

  it('exits 2 naming VENDOR_API_KEY when the vendor refuses the key, after one call', async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 0 });
    try {
      const run = await runCli(['scan', 'a.example.com', 'b.example.com', ...QUICK_WAITS, '--out', outDir], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: 'sk_wrong_key_for_this_vendor_000',
      });
      expect(run).toExitWith(2);
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
    expect(run).toExitWith(2);
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
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('pipeline.scan.maxConcurrency must be between 1 and 10000 (got 0)');
  });

  it('runs with the intake suffixes of --config FILE', async () => {
    const file = await writeCliTestConfig(outDir); // intake.suffixes adds .lst
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
    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(/\bexample\.com\s+succeeded\b/);
    // CLI_TEST_CONFIG: the first run of the suite to use it synthesizes it (a cold CDK synth).
  }, 180_000);
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
    [
      'a --fault scan does not take',
      ['scan', 'a.example.com', '--fault', 'key-echo=recon'],
      '--fault key-echo=recon: expected key-echo=status',
    ],
    [
      'a --fault breach does not take',
      ['breach', '--name', 'A B', '--email', 'a@example.com', '--fault', 'key-echo=status'],
      '--fault key-echo=status: expected key-echo=recon or key-echo=report-name',
    ],
  ])('exits 2 for %s', async (_case, argv, message) => {
    // Act
    const run = await runCli([...argv, '--out', outDir]);

    // Assess
    expect(run).toExitWith(2);
    expect(run.stderr).toContain(message);
    expect(await filesUnder(outDir)).toEqual([]);
  });

  it('exits 2 for a --fault against a vendor that is not the built-in simulator, before any work', async () => {
    const vendor = await startVendorSimulator();
    try {
      const run = await runCli(['scan', 'a.example.com', '--fault', 'key-echo=status', '--out', outDir], {
        SCAN_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });
      expect(run).toExitWith(2);
      expect(run.stderr).toContain('--fault needs the built-in simulator: unset the vendor URLs');
      expect(vendor.requestCount('POST /scan')).toBe(0);
    } finally {
      await vendor.close();
    }
  });

  it('exits 2 naming a --domains-file that does not exist', async () => {
    // Prepare
    const missing = join(outDir, 'no-such-list.txt');

    // Act
    const run = await runCli(['scan', '--domains-file', missing, '--out', outDir]);

    // Assess
    expect(run).toExitWith(2);
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
    expect(run).toExitWith(2);
  });

  it('exits 2 naming VENDOR_API_KEY when SCAN_API_URL is set without it', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'http://127.0.0.1:9',
    });

    // Assess
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('VENDOR_API_KEY');
  });

  it('exits 2 for a plain-http vendor URL that is not loopback, showing the URL with its scheme', async () => {
    // Act
    const run = await runCli(['scan', 'a.example.com', '--out', outDir], {
      SCAN_API_URL: 'http://vendor.example.com',
      VENDOR_API_KEY: 'sk_live_would_travel_in_clear_0123',
    });

    // Assess
    expect(run).toExitWith(2);
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
    expect(run).toExitWith(2);
    expect(run.stderr).toContain('SCAN_API_URL');
    expect(run.stderr).not.toContain('sk_sim_not_used_here_0123');
  });

  it('exits 0 for --help and describes the scan command', async () => {
    // Act
    const run = await runCli(['--help']);

    // Assess
    expect(run).toExitWith(0);
    expect(run.stdout).toContain('scan');
    expect(run.stdout).toContain('Usage:');
  });

  it.each([
    ['scan', 'key-echo=status or redirect-internal', ['echoes the key', 'redirects inside'], 'deep'],
    ['breach', 'deep-json', ['echoes the key', 'redirects inside', 'nests its JSON'], undefined],
  ] as const)(
    '%s --help describes only the faults %s --fault takes',
    async (command, cases, does, absent) => {
      const run = await runCli([command, '--help']);

      expect(run).toExitWith(0);
      const help = run.stdout.replace(/\s+/g, ' ');
      expect(help).toContain(cases);
      for (const words of does) expect(help).toContain(words);
      if (absent) expect(help).not.toMatch(new RegExp(`${absent}|JSON 20,000`));
    },
  );
});
