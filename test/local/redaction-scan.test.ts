/**
 * The CLI's runs against a hostile vendor and hostile input, then every file under --out and all
 * terminal output searched (scan, single-person and watchlist breach runs, rotate, reconcile): no email address (but in the request objects that carry a person's
 * addresses to Recon, and the user's own uploaded input), no URL password, no API key.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '../../local/simulator/index.ts';
import { type CliRun, filesUnder, runCli } from './cli-run.ts';

const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];
/** An address in any form the pipeline could write it: plain or percent-encoded. */
const EMAIL = /[A-Za-z0-9._+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
const PASSWORDS = /hunter2|user:pass@|:pass@/;
/** Any simulator's key (rotate and reconcile run their own), not only this test's. */
const KEY_SHAPE = /sk_sim_[0-9a-f]{32}/;

let dir: string;
let out: string;
let vendor: VendorSimulator;
const runs: CliRun[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'redaction-scan-'));
  out = join(dir, 'out');
  vendor = await startVendorSimulator();
  const breachEnv = {
    BREACH_API_URL: vendor.url,
    VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
    VENDOR_API_KEY: vendor.apiKey,
  };

  // A domain list with credentials and an address in it, scanned by the built-in simulator.
  const list = join(dir, 'team.txt');
  await writeFile(
    list,
    [
      'good.example.com',
      'https://user:pass@host/',
      'https://ops:hunter2@vendor.example/',
      'bob@example.org',
    ].join('\n'),
  );
  runs.push(
    await runCli(['scan', '--domains-file', list, '--out', out, '--log-level', 'debug', ...QUICK_WAITS]),
  );

  // A vendor that names the report after the address it was sent.
  vendor.scriptReportName('report-for-bob.smith@example.com');
  runs.push(
    await runCli(
      [
        'breach',
        '--name',
        'Bob Smith',
        '--email',
        'bob.smith@example.com',
        '--out',
        out,
        '--log-level',
        'debug',
      ],
      breachEnv,
    ),
  );

  // A vendor whose refusal echoes the request: the addresses and the key header.
  vendor.addFault({
    api: 'breach',
    method: 'POST',
    path: '/recon',
    fault: { type: 'status', status: 422, echoRequest: true },
  });
  runs.push(
    await runCli(
      [
        'breach',
        '--name',
        'Ann Other',
        '--email',
        'ann.other@example.com',
        '--out',
        out,
        '--log-level',
        'debug',
      ],
      breachEnv,
    ),
  );

  // A watchlist whose report names hold addresses, with a row whose name is an address.
  vendor.scriptReportName('report-for-carol@example.net');
  const watchlist = join(dir, 'vips.csv');
  await writeFile(
    watchlist,
    ['name,email', 'Carol Jones,carol@example.com', 'dave@example.com,dave@example.com'].join('\n'),
  );
  runs.push(
    await runCli(['breach', '--watchlist', watchlist, '--out', out, '--log-level', 'debug'], breachEnv),
  );

  // The two commands without a run folder, each against its own built-in simulator.
  runs.push(await runCli(['rotate', '--out', out, '--log-level', 'debug']));
  runs.push(await runCli(['reconcile', '--out', out, '--log-level', 'debug']));
}, 600_000);

afterAll(async () => {
  await vendor.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The user's own input (a list run's copy is in its run folder) and the objects that carry a
 * person's addresses to Recon, by design.
 */
function holdsAddressesByDesign(path: string): boolean {
  return (
    path.startsWith('pipeline-input/') ||
    /^pipeline-results\/lists\/.+\/input\/[^/]+$/.test(path) ||
    /(^|\/)requests\/[^/]+\.jsonl?$/.test(path)
  );
}

describe('the runs', () => {
  it('ran as expected: a scan with refused lines, an archived report, a refused recon, a watchlist with a refused row, a rotation, a reconciliation', () => {
    expect(runs.map((run) => run.code)).toEqual([1, 0, 1, 1, 0, 0]);
    expect(runs[3]?.stdout).toMatch(/row 3: invalid/);
    expect(runs[1]?.stdout).toContain('Archive:');
    expect(runs[2]?.stdout).toMatch(/VendorHttpError: breach\.recon failed with HTTP 422/);
  });
});

describe('no address, URL password or key anywhere', () => {
  it('in the terminal output', () => {
    for (const run of runs) {
      for (const text of [run.stdout, run.stderr]) {
        expect(text).not.toMatch(EMAIL);
        expect(text).not.toMatch(PASSWORDS);
        expect(text).not.toContain(vendor.apiKey);
        expect(text).not.toMatch(KEY_SHAPE);
      }
    }
  });

  it('in every file under --out: stored objects, summary.txt, handler-log.jsonl', async () => {
    const files = await filesUnder(out);
    expect(files.some((file) => file.endsWith('/summary.txt'))).toBe(true);
    expect(files.filter((file) => file.endsWith('/handler-log.jsonl')).length).toBeGreaterThanOrEqual(2);
    expect(files.some((file) => file.endsWith('/rejects.json'))).toBe(true);
    expect(files.some((file) => file.includes('breach/reports/') && file.endsWith('/manifest.json'))).toBe(
      true,
    );
    expect(files.some((file) => file.endsWith('/failure.json'))).toBe(true);
    expect(files.some((file) => file.includes('handler-logs/rotate-'))).toBe(true);
    expect(files.some((file) => file.includes('scans/reconciliation/'))).toBe(true);
    expect(files.some((file) => file.includes('breach/watchlists/'))).toBe(true);
    const checked: string[] = [];
    for (const file of files) {
      // Keys are checked for every file; contents of all but the ZIP (the vendor's report itself).
      expect(file).not.toMatch(EMAIL);
      expect(file).not.toMatch(/example-com|example-org/);
      if (holdsAddressesByDesign(file) || file.endsWith('.zip')) continue;
      const text = await readFile(join(out, file), 'utf8');
      expect(text, file).not.toMatch(EMAIL);
      expect(text, file).not.toMatch(PASSWORDS);
      expect(text, file).not.toContain(vendor.apiKey);
      expect(text, file).not.toMatch(KEY_SHAPE);
      checked.push(file);
    }
    expect(checked.length).toBeGreaterThan(10);
  });

  it('while the request objects do carry the addresses (the scan would see them)', async () => {
    const requests = (await filesUnder(out)).filter((file) => /\/requests\/[^/]+\.jsonl?$/.test(file));
    const texts = await Promise.all(requests.map((file) => readFile(join(out, file), 'utf8')));
    expect(texts.join('\n')).toMatch(EMAIL);
  });
});
