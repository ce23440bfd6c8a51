/**
 * `npm start -- breach` in-process (`main(argv)`), against the built-in simulator or one started
 * here as the "real" vendor: exit codes, what lands under --out, and that no address leaks.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, IAM_EVALUATED_CLEAN, runCli, writeCliTestConfig } from './cli-run.ts';

let outDir: string;
beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'breach-cli-'));
});
afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

const RESULTS = 'pipeline-results';

/**
 * The keys docs/breach-reports.md's "What a run stores" table marks as holding addresses, as patterns over
 * `breach/...` (`<...>` is one or more characters of a key segment).
 */
async function addressHoldingKeys(): Promise<RegExp[]> {
  const readme = await readFile(join(import.meta.dirname, '../../docs/breach-reports.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('**What a run stores**'),
    readme.indexOf('**Recon is sent at most once'),
  );
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `') && line.includes('**holds addresses**'))
    .map((line) => /^\| `([^`]+)`/.exec(line)?.[1] ?? '')
    .map((key) => {
      const escaped = key
        .split(/<[^>]+>/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]+');
      return new RegExp(`^breach/${escaped}$`);
    });
}

describe('npm start -- breach --name --email', () => {
  it('archives a verified ZIP with recon.json and its manifests, and exits 0', async () => {
    // The addresses from a file, as the docs show first: on no command line, so no warning.
    const emails = join(outDir, '..', `${basename(outDir)}-emails.txt`);
    await writeFile(emails, 'jane@example.com\njd@example.net\n');
    const run = await runCli([
      'breach',
      '--name',
      'Jane Doe',
      '--emails-file',
      emails,
      '--out',
      outDir,
    ]).finally(() => rm(emails, { force: true }));

    expect(run.stderr).toBe('');
    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(/Recon: {4}success, \d+ breach\(es\), report jane-doe_/);
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);
    const files = await filesUnder(join(outDir, RESULTS));
    const zip = files.find((file) => file.endsWith('/report.zip')) as string;
    // Nothing of the report name (which names the person) in its folder: a keyed hash only.
    expect(zip).toMatch(/^breach\/reports\/report-[0-9a-f]{32}\/report\.zip$/);
    expect(files).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^breach\/people\/jane-doe-[0-9a-f]{16}\/cli-[^/]+\/recon\.json$/),
        expect.stringMatching(/^breach\/people\/jane-doe-[0-9a-f]{16}\/cli-[^/]+\/manifest\.json$/),
        zip.replace('report.zip', 'manifest.json'),
      ]),
    );
    const manifest = JSON.parse(
      await readFile(join(outDir, RESULTS, zip.replace('report.zip', 'manifest.json')), 'utf8'),
    );
    const bytes = await readFile(join(outDir, RESULTS, zip));
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(manifest.archive.sha256);
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    // An address only in the report itself and in the keys docs/breach-reports.md's storage table marks.
    const documented = await addressHoldingKeys();
    const holding: string[] = [];
    for (const file of files.filter((f) => !f.endsWith('.zip'))) {
      if (/jane@example|jd@example/.test(await readFile(join(outDir, RESULTS, file), 'utf8')))
        holding.push(file);
    }
    expect(holding).toEqual([expect.stringMatching(/^breach\/requests\/[0-9a-f]{16}-cli-[^/]+\.json$/)]);
    for (const file of holding) {
      expect(
        documented.some((pattern) => pattern.test(file)),
        `${file} holds an address; docs/breach-reports.md documents ${documented.join(', ')}`,
      ).toBe(true);
    }
    expect(run.stdout).not.toMatch(/jane@example|jd@example/);
    expect((await stat(join(outDir, '.breach-identity-key'))).mode & 0o777).toBe(0o600);
  });

  it('exits 0 with only recon.json for a person with no breaches', async () => {
    const run = await runCli([
      'breach',
      '--name',
      'Clean Person',
      '--email',
      'clean@example.org',
      '--out',
      outDir,
    ]);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain('no_results');
    const people = (await filesUnder(join(outDir, RESULTS))).filter(
      (file) => !file.startsWith('breach/requests/'),
    );
    expect(people).toEqual([
      expect.stringMatching(/^breach\/people\/clean-person-[0-9a-f]{16}\/cli-[^/]+\/recon\.json$/),
    ]);
  });

  it('names the same person the same way across runs into one --out', async () => {
    const args = ['breach', '--name', 'Jane Doe', '--email', 'jane@example.com', '--out', outDir];
    const first = await runCli(args);
    const second = await runCli(args);

    const personOf = (stdout: string) => /Person: +(\S+ \([0-9a-f]{16}\))/.exec(stdout)?.[1];
    expect(personOf(first.stdout)).toBeDefined();
    expect(personOf(second.stdout)).toBe(personOf(first.stdout));
  });

  it('rejects a bad address by position with exit 1, without echoing it', async () => {
    const run = await runCli([
      'breach',
      '--name',
      'Jane',
      '--email',
      'jane@example.com',
      '--email',
      'not-an-address',
      '--out',
      outDir,
    ]);

    expect(run).toExitWith(1);
    expect(run.stderr).toContain("emails[1]: has no '@'");
    expect(run.stderr).not.toContain('not-an-address');
  });

  it.each([
    [['breach', '--name', 'Jane']],
    [['breach', '--email', 'jane@example.com']],
    [['breach', '--watchlist', 'x.csv', '--name', 'Jane', '--email', 'jane@example.com']],
    [['breach', '--watchlist', 'people.txt']],
  ])('is a usage error (exit 2): %j', async (argv) => {
    const run = await runCli([...argv, '--out', outDir]);

    expect(run).toExitWith(2);
    expect(run.stderr).toMatch(/^error: /);
  });

  it('is a configuration error (exit 2) when the vendor refuses the key, before any work', async () => {
    const vendor = await startVendorSimulator();
    try {
      const run = await runCli(['breach', '--name', 'Jane', '--email', 'jane@example.com', '--out', outDir], {
        BREACH_API_URL: vendor.url,
        VENDOR_API_KEY: 'sk_wrong_key_for_this_test',
      });

      expect(run).toExitWith(2);
      expect(run.stderr).toContain('VENDOR_API_KEY: is refused by the vendor');
      expect(vendor.requestCount('POST /recon')).toBe(0);
    } finally {
      await vendor.close();
    }
  });

  it('refuses a loopback vendor without VENDOR_ALLOWED_ORIGINS before its recon is spent (exit 2)', async () => {
    const vendor = await startVendorSimulator();
    try {
      const run = await runCli(['breach', '--name', 'Jane', '--email', 'jane@example.com', '--out', outDir], {
        BREACH_API_URL: vendor.url,
        VENDOR_API_KEY: vendor.apiKey,
      });

      expect(run).toExitWith(2);
      expect(run.stderr).toContain(
        `VENDOR_ALLOWED_ORIGINS: is unset, and the breach API (${vendor.url}) is on loopback, a simulator you started`,
      );
      expect(run.stderr).toContain("(the simulator's Storage URL) and run again (no recon was sent)");
      expect(vendor.requestCount('POST /recon')).toBe(0);
    } finally {
      await vendor.close();
    }
  });

  it('uses the real vendor given only BREACH_API_URL and VENDOR_API_KEY', async () => {
    const vendor = await startVendorSimulator();
    try {
      const run = await runCli(['breach', '--name', 'Jane', '--email', 'jane@example.com', '--out', outDir], {
        BREACH_API_URL: vendor.url,
        // Its pre-signed downloads are on another loopback origin: allowed only when listed.
        VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
        VENDOR_API_KEY: vendor.apiKey,
      });

      expect(run).toExitWith(0);
      expect(run.stdout).toContain(`Vendor: ${vendor.url}`);
      expect(vendor.requestCount('POST /recon')).toBe(1);
    } finally {
      await vendor.close();
    }
  });
});

describe('npm start -- breach --watchlist', () => {
  it('accounts for every row of a watchlist with junk rows, and exits 1 for the invalid ones', async () => {
    const file = join(outDir, 'vip.csv');
    await writeFile(
      file,
      [
        'name,email',
        '# VIPs',
        'Jane Doe,jane@example.com',
        '',
        'Bad Row,nope',
        'Clean,clean@example.org',
        'jane doe,JANE@example.com',
      ].join('\n'),
    );

    const run = await runCli(['breach', '--watchlist', file, '--out', join(outDir, 'out')]);

    expect(run).toExitWith(1);
    expect(run.stdout).toContain(
      '4 row(s): 1 archived, 1 no results, 0 failed, 1 invalid, 1 duplicate; 2 blank or comment line(s)',
    );
    // The terminal names the rows that were not reported on, and why, as a scan names its lines.
    expect(run.stdout).toMatch(/^ {2}row 5: invalid: emails\[0\]: has no '@'$/m);
    expect(run.stdout).toMatch(/^ {2}row 7: duplicate: .*row 3/m);
    expect(run.stdout).not.toContain('nope');
    const summaryPath = /Summary: (\S+)/.exec(run.stdout)?.[1] as string;
    const summary = JSON.parse(await readFile(summaryPath, 'utf8'));
    expect(summary.rows.map((row: { row: number; status: string }) => [row.row, row.status])).toEqual([
      [3, 'archived'],
      [5, 'invalid'],
      [6, 'no_results'],
      [7, 'duplicate'],
    ]);
    // summary.txt: a row per watchlist row, the person by slug, and the breaches each report counts.
    const tablePath = /^Table: +(\S+)$/m.exec(run.stdout)?.[1] as string;
    expect(tablePath).toBe(summaryPath.replace(/summary\.json$/, 'summary.txt'));
    const table = (await readFile(tablePath, 'utf8')).split('\n');
    expect(table[0]).toMatch(/^row\s+person\s+result\s+breaches\s+report \/ reason$/);
    const manifest = JSON.parse(
      await readFile(join(outDir, 'out', 'pipeline-results', summary.rows[0].manifestKey), 'utf8'),
    ) as { recon: { totalBreaches: number } };
    expect(manifest.recon.totalBreaches).toBeGreaterThan(0);
    expect(table.slice(1, 5).map((line) => line.split(/ {2,}/).slice(0, 4))).toEqual([
      ['3', summary.rows[0].person.slug, 'archived', String(manifest.recon.totalBreaches)],
      ['5', 'invalid', "emails[0]: has no '@'"],
      ['6', summary.rows[2].person.slug, 'no_results', '0'],
      ['7', 'duplicate', expect.stringContaining('row 3')],
    ]);
    expect(table.join('\n')).not.toMatch(/@example\.(com|org)/);
  });

  it('holds a watchlist to the configured row limit (--config)', async () => {
    const file = join(outDir, 'three.csv');
    await writeFile(file, 'A,a@example.com\nB,b@example.com\nC,c@example.org\n');
    const config = await writeCliTestConfig(outDir); // breach.maxWatchlistRows: 2

    const run = await runCli([
      'breach',
      '--watchlist',
      file,
      '--config',
      config,
      '--out',
      join(outDir, 'out'),
    ]);

    expect(run).toExitWith(1);
    expect(run.stdout).toContain('3 row(s): 2 archived, 0 no results, 0 failed, 1 invalid');
    // CLI_TEST_CONFIG: the first run of the suite to use it synthesizes it (a cold CDK synth).
  }, 180_000);

  it('exits 0 when every row was reported on', async () => {
    const file = join(outDir, 'ok.json');
    await writeFile(
      file,
      JSON.stringify([
        { name: 'Jane', emails: ['jane@example.com'] },
        { name: 'Clean', emails: ['c@example.org'] },
      ]),
    );

    const run = await runCli(['breach', '--watchlist', file, '--out', join(outDir, 'out')]);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain('2 row(s): 1 archived, 1 no results, 0 failed, 0 invalid, 0 duplicate');
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);
  });
});

describe('npm start -- breach --watchlist, refused as a whole', () => {
  it('writes a summary that says why, and exits 1', async () => {
    const file = join(outDir, 'broken.json');
    await writeFile(file, '{"people": [{"name": "Jane", "emails": ["jane@example.com"]}');

    const run = await runCli(['breach', '--watchlist', file, '--out', join(outDir, 'out')]);

    expect(run).toExitWith(1);
    expect(run.stdout).toContain('Refused: Invalid watchlist: is not valid JSON');
    const summaryPath = /Summary: (\S+)/.exec(run.stdout)?.[1] as string;
    expect(JSON.parse(await readFile(summaryPath, 'utf8'))).toMatchObject({
      refused: 'Invalid watchlist: is not valid JSON',
      counts: { rows: 0 },
      rows: [],
    });
  });
});
