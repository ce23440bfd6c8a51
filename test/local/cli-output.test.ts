/**
 * What `npm start` prints and keeps for a run: compact output for large lists, duplicates naming
 * the line they repeat, CSV headers, positional numbering, summary.txt and `<out>/latest`.
 */
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { pointLatestAt } from '../../local/run-files.ts';
import { startVendorSimulator, type VendorSimulator } from '../../local/simulator/index.ts';
import { runCli } from './cli-run.ts';

const FAST = ['--min-wait', '1', '--max-wait', '1', '--deadline', '60'];

let outDir: string;
let vendor: VendorSimulator;

beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'cli-output-'));
  // Small outputs: these tests are about what the CLI prints and keeps, not about the bytes.
  vendor = await startVendorSimulator({
    pollsToFinish: 0,
    reportBytes: 512,
    debugBytes: 256,
    logsBytes: 256,
    failingDomains: [/^fail/],
  });
});

afterEach(async () => {
  await vendor.close();
  await rm(outDir, { recursive: true, force: true });
});

const env = () => ({ SCAN_API_URL: vendor.url, VENDOR_API_KEY: vendor.apiKey });

/** The value printed after `Label:` at the start of a line. */
function printed(stdout: string, label: string): string {
  return new RegExp(`^${label}: +(\\S+)`, 'm').exec(stdout)?.[1] ?? '';
}

describe('npm start -- scan with a 5,000-line list', () => {
  it('prints under 200 lines in compact mode and still names every failed domain, invalid line and duplicate', async () => {
    // Prepare: a CSV export with a header, 4,980 good domains, 5 failing, 9 invalid and 5 duplicates
    const lines = ['Domain Name,Owner'];
    const failing: string[] = [];
    for (let i = 1; lines.length < 5000; i++) {
      if (i % 500 === 0) lines.push(`not a domain ${i},ops`);
      else if (i % 1000 === 1) {
        failing.push(`fail${i}.example.com`);
        lines.push(`fail${i}.example.com,ops`);
      } else if (i % 999 === 0) lines.push(`D${i - 2}.example.com,ops`);
      else lines.push(`d${i}.example.com,ops`);
    }
    const list = join(outDir, 'export.csv');
    await writeFile(list, `${lines.join('\n')}\n`, 'utf8');
    const started = Date.now();

    // Act
    const run = await runCli(
      ['scan', '--domains-file', list, '--out', join(outDir, 'out'), ...FAST, '--concurrency', '250'],
      env(),
    );

    // Assess: compact, and every problem named
    const seconds = (Date.now() - started) / 1000;
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n').length, `took ${seconds}s`).toBeLessThan(200);
    expect(failing).toHaveLength(5);
    for (const domain of failing)
      expect(run.stdout).toMatch(new RegExp(`\\b${domain}\\s+failed\\s+ScanFailed`));
    const summary = JSON.parse(await readFile(printed(run.stdout, 'Summary'), 'utf8')) as ListSummary;
    expect(summary.counts).toMatchObject({ lines: 5000, invalid: 9, duplicate: 5, ignored: 1 });
    // Under this machine's load a few more scans can fail (a poll timing out); each must be named too.
    const notSucceeded = summary.domains.filter((d) => ['failed', 'timed_out', 'rejected'].includes(d.state));
    expect(notSucceeded.map((d) => d.domain)).toEqual(expect.arrayContaining(failing));
    for (const entry of notSucceeded) {
      expect(run.stdout).toMatch(
        new RegExp(`\\b${entry.domain.replaceAll('.', '\\.')}\\s+${entry.state}\\b`),
      );
    }
    expect(summary.header).toEqual({ line: 1, text: 'Domain Name,Owner' });
    for (const invalid of summary.invalid)
      expect(run.stdout).toContain(`line ${invalid.line}: ${invalid.text}`);
    expect(run.stdout).toMatch(/^ {2}d997\.example\.com: line 1000 \(duplicate of line 998\)$/m);
    expect(run.stdout).toContain('0 blank or comment, CSV header on line 1');
    expect(run.stdout).not.toMatch(/succeeded\s+\//);
    // Handler logs never reach the terminal; the warnings about the failed scans are in the log file
    expect(run.stderr).toBe('');
    expect(await readFile(printed(run.stdout, 'Log'), 'utf8')).toContain('"message":"Scan failed"');
    // The full table is kept, one row per line but the header
    const table = await readFile(printed(run.stdout, 'Table'), 'utf8');
    expect(
      table.split('\n').filter((line) => /^\d+ /.test(line) && !line.includes(' line(s): ')),
    ).toHaveLength(4999);
  }, 900_000);
});

describe('npm start output for a small list', () => {
  it('says which line each duplicate repeats, recognises a CSV header and numbers positional domains arg N', async () => {
    // Prepare
    const list = join(outDir, 'team.csv');
    await writeFile(list, 'domain,owner\na.example.com,alice\nA.EXAMPLE.com,bob\n', 'utf8');

    // Act
    const run = await runCli(
      [
        'scan',
        'b.example.com',
        'a.example.com',
        'B.example.com',
        '--domains-file',
        list,
        '--out',
        outDir,
        ...FAST,
      ],
      env(),
    );

    // Assess
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^3\s+a\.example\.com\s+duplicate\s+duplicate of line 2$/m);
    expect(run.stdout).toMatch(/^arg 1\s+b\.example\.com\s+succeeded/m);
    expect(run.stdout).toMatch(/^arg 2\s+a\.example\.com\s+duplicate\s+duplicate of line 2$/m);
    expect(run.stdout).toMatch(/^arg 3\s+b\.example\.com\s+duplicate\s+duplicate of arg 1$/m);
    expect(run.stdout).toContain(
      '6 line(s): 2 succeeded, 0 failed, 0 timed out, 0 rejected, 0 invalid, 3 duplicate, 0 blank or comment, CSV header on line 1',
    );
  });

  it('keeps the table in summary.txt, prints absolute paths and points <out>/latest at the newest run', async () => {
    // Act: two runs into the same folder
    const first = await runCli(['scan', 'a.example.com', '--out', outDir, ...FAST], env());
    const second = await runCli(['scan', 'fail.example.com', '--out', outDir, ...FAST], env());

    // Assess: paths are absolute, and the table file holds what was printed
    expect(first.code).toBe(0);
    expect(second.code).toBe(1);
    const summaryPath = printed(second.stdout, 'Summary');
    const tablePath = printed(second.stdout, 'Table');
    expect(summaryPath.startsWith(`${outDir}/pipeline-results/lists/`)).toBe(true);
    expect(tablePath).toBe(summaryPath.replace(/summary\.json$/, 'summary.txt'));
    const table = await readFile(tablePath, 'utf8');
    expect(table).toMatch(/^arg 1\s+fail\.example\.com\s+failed\s+ScanFailed: /m);
    expect(second.stdout).toContain(table);
    // latest is a relative symlink to the second run's folder
    const latest = join(outDir, 'latest');
    expect((await lstat(latest)).isSymbolicLink()).toBe(true);
    expect(await readlink(latest)).not.toMatch(/^\//);
    expect(await realpath(join(latest, 'summary.json'))).toBe(await realpath(summaryPath));
    expect(second.stdout).toContain(`Latest:  ${latest} -> ${summaryPath.replace(/\/summary\.json$/, '')}`);
  });

  it('never replaces a real folder named latest that the user made', async () => {
    // Prepare
    const mine = join(outDir, 'latest');
    await mkdir(mine);
    await writeFile(join(mine, 'notes.txt'), 'mine', 'utf8');

    // Act
    const pointer = await pointLatestAt(outDir, join(outDir, 'pipeline-results', 'lists', 'x'));

    // Assess
    expect(pointer.kind).toBe('kept');
    expect(await readFile(join(mine, 'notes.txt'), 'utf8')).toBe('mine');
  });
});
