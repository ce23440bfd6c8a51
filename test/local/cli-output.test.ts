/**
 * What `npm start` prints and keeps for a run: compact output for large lists, duplicates naming
 * the line they repeat, CSV headers, positional numbering, summary.txt and `<out>/latest`. The
 * 5,000-line list goes through the real list handlers and the CLI's printer in-process; the same
 * shape of list over the compact threshold runs end to end.
 */
import { randomUUID } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DomainListItem, DomainScanResult, ListSummary } from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { domainResultFromFailure } from '#lambdas/domain-list/write-list-summary';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { createPrepareDomainListHandler } from '../../lambdas/domain-list/prepare-domain-list.ts';
import { createWriteListSummaryHandler } from '../../lambdas/domain-list/write-list-summary.ts';
import { COMPACT_THRESHOLD, createConsoleReporter, outputModeFor } from '../../local/output/progress.ts';
import { pointLatestAt } from '../../local/output/run-files.ts';
import { scanRunEnding } from '../../local/output/summary-table.ts';
import { startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator, type VendorSimulator } from '../../local/simulator/index.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { readJson } from '../kit/s3.ts';
import { NO_WAITS, runCli } from './cli-run.ts';

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

/**
 * A CSV export with a header row, then `total - 1` rows: every `every`-th is invalid, every
 * `2 * every`-th (from the first) fails at the vendor, and every `(2 * every - 1)`-th repeats in
 * capitals the domain two rows up.
 */
function exportList(total: number, every: number): { text: string; failing: string[] } {
  const lines = ['Domain Name,Owner'];
  const failing: string[] = [];
  for (let i = 1; lines.length < total; i++) {
    if (i % every === 0) lines.push(`not a domain ${i},ops`);
    else if (i % (2 * every) === 1) {
      failing.push(`fail${i}.example.com`);
      lines.push(`fail${i}.example.com,ops`);
    } else if (i % (2 * every - 1) === 0) lines.push(`D${i - 2}.example.com,ops`);
    else lines.push(`d${i}.example.com,ops`);
  }
  return { text: `${lines.join('\n')}\n`, failing };
}

/** Each domain that did not succeed is named with its state, and so is each invalid line. */
function expectEveryProblemNamed(output: string, summary: ListSummary, failing: readonly string[]): void {
  for (const domain of failing) expect(output).toMatch(new RegExp(`\\b${domain}\\s+failed\\s+ScanFailed`));
  const notSucceeded = summary.domains.filter((d) => ['failed', 'timed_out', 'rejected'].includes(d.state));
  expect(notSucceeded.map((d) => d.domain)).toEqual(expect.arrayContaining([...failing]));
  for (const entry of notSucceeded) {
    expect(output).toMatch(new RegExp(`\\b${entry.domain.replaceAll('.', '\\.')}\\s+${entry.state}\\b`));
  }
  expect(summary.header).toEqual({ line: 1, text: 'Domain Name,Owner' });
  for (const invalid of summary.invalid) expect(output).toContain(`line ${invalid.line}: ${invalid.text}`);
  expect(output).toContain('0 blank or comment, CSV header on line 1');
  // Compact: no row for a domain that succeeded.
  expect(output).not.toMatch(/succeeded\s+\//);
}

/** Table rows of the domains and invalid lines (the header row and totals line excluded). */
function tableRows(table: string): string[] {
  return table.split('\n').filter((line) => /^\d+ /.test(line) && !line.includes(' line(s): '));
}

describe('npm start -- scan with a 5,000-line list', () => {
  it('prints under 200 lines in compact mode and still names every failed domain, invalid line and duplicate', async () => {
    // Prepare: 4,980 good domains, 5 failing, 9 invalid and 5 duplicates, prepared by the real
    // handler; each scan's result as the runner records it, without running 5,000 executions.
    const { text, failing } = exportList(5000, 500);
    expect(failing).toHaveLength(5);
    const s3 = await startS3rver({ buckets: ['pipeline-input', 'pipeline-results'] });
    try {
      const deps: ListDeps = {
        s3: s3.client,
        logger: createMemoryLogger(),
        settings: { inputBucket: 'pipeline-input', resultsBucket: 'pipeline-results' },
      };
      await s3.client.send(
        new PutObjectCommand({ Bucket: 'pipeline-input', Key: 'incoming/export.csv', Body: text }),
      );
      const prepared = await createPrepareDomainListHandler(deps)({
        source: { type: 's3', bucket: 'pipeline-input', key: 'incoming/export.csv', versionId: 'v1' },
      });
      const items = await readJson<DomainListItem[]>(s3.client, 'pipeline-results', prepared.itemsKey);
      const results = items.map((item) => scanResultOf(item, failing.includes(item.domain)));
      const { summaryKey } = await createWriteListSummaryHandler(deps)({ ...prepared, results });
      const summary = await readJson<ListSummary>(s3.client, 'pipeline-results', summaryKey);

      // Act: what the scan command prints, from its first progress event to its last line
      let terminal = '';
      const mode = outputModeFor(prepared.counts.valid);
      const reporter = createConsoleReporter({ write: (chunk: string) => (terminal += chunk) }, { mode });
      reporter.listener({
        type: 'list-prepared',
        total: prepared.counts.valid,
        invalid: prepared.counts.invalid,
        duplicate: prepared.counts.duplicate,
        resultsPrefix: prepared.resultsPrefix,
        runId: prepared.runId,
      });
      for (const result of results) {
        reporter.listener({ type: 'domain-state', domain: result.domain, state: 'StartScan' });
        const state = result.outcome?.state ?? 'failed';
        reporter.listener({ type: 'domain-done', domain: result.domain, result: state });
      }
      reporter.finish();
      const ending = scanRunEnding(summary, mode, { resultsDir: '/out/pipeline-results' });
      terminal += ending.printed;

      // Assess: compact, and every problem named
      expect(mode).toBe('compact');
      expect(terminal.split('\n').length).toBeLessThan(200);
      expect(summary.counts).toMatchObject({ lines: 5000, invalid: 9, duplicate: 5, ignored: 1 });
      expectEveryProblemNamed(terminal, summary, failing);
      expect(terminal).toMatch(
        /^ {2}d997\.example\.com: line 1000 typed as D997\.example\.com \(duplicate of line 998\)$/m,
      );
      // The full table is kept, one row per line but the header
      expect(tableRows(ending.table)).toHaveLength(4999);
    } finally {
      await s3.close();
    }
  });
});

/** What the runner records for one item: the outcome, or the failure the Fail state's cause carries. */
function scanResultOf(item: DomainListItem, fails: boolean): DomainScanResult {
  const prefix = `scans/${item.domain}/2026/11/24/${randomUUID()}/`;
  if (!fails) {
    const outcome: ScanOutcome = {
      domain: item.domain,
      state: 'succeeded',
      scanUuid: randomUUID(),
      outputPrefix: prefix,
      manifestKey: `${prefix}manifest.json`,
      error: undefined,
    };
    return { domain: item.domain, executionName: item.executionName, outcome, error: undefined };
  }
  const cause: ScanOutcome = {
    domain: item.domain,
    state: 'failed',
    scanUuid: randomUUID(),
    outputPrefix: prefix,
    manifestKey: undefined,
    error: { name: 'ScanFailed', message: 'the vendor reports the scan failed' },
  };
  return domainResultFromFailure(item.domain, item.executionName, 'ScanFailed', JSON.stringify(cause));
}

describe('npm start -- scan with a list over the compact threshold', () => {
  it('prints compact output end to end with progress lines, names every problem, and keeps the handler logs and the full table in files', async () => {
    // Prepare: 52 domains to scan (just over COMPACT_THRESHOLD), 4 failing, 7 invalid, 4 duplicates
    const { text, failing } = exportList(64, 8);
    expect(52).toBeGreaterThan(COMPACT_THRESHOLD);
    const list = join(outDir, 'export.csv');
    await writeFile(list, text, 'utf8');

    // Act: ten scans at a time, and a progress line every 100 ms rather than every 5 s (the
    // reporter's interval and pace: test/local/progress-pace.test.ts), so the run prints some with
    // scans done and some left
    const run = await runCli(
      ['scan', '--domains-file', list, '--out', join(outDir, 'out'), ...FAST, '--concurrency', '250'],
      env(),
      { timing: { ...NO_WAITS, progressIntervalMs: 100 } },
    );

    // Assess: compact, and every problem named
    expect(run).toExitWith(1);
    expect(run.stdout).toContain('52 domain(s) to scan; 7 invalid and 4 duplicate line(s) skipped');
    expect(run.stdout.split('\n').length).toBeLessThan(200);
    // Progress lines with the rate so far and about how long the rest will take
    expect(run.stdout).toMatch(
      /^\d+\/52 done: \d+ succeeded, .*\(\d+s, [\d.]+\/(s|min), about (\d+h \d+m|\d+m \d+s|\d+s) left\)$/m,
    );
    const summary = JSON.parse(await readFile(printed(run.stdout, 'Summary'), 'utf8')) as ListSummary;
    expect(summary.counts).toMatchObject({ lines: 64, invalid: 7, duplicate: 4, ignored: 1 });
    expectEveryProblemNamed(run.stdout, summary, failing);
    expect(run.stdout).toMatch(
      /^ {2}d13\.example\.com: line 16 typed as D13\.example\.com \(duplicate of line 14\)$/m,
    );
    // Handler logs never reach the terminal; the warnings about the failed scans are in the log file
    expect(run.stderr).toBe('');
    expect(await readFile(printed(run.stdout, 'Log'), 'utf8')).toContain('"message":"Scan failed"');
    // The full table is kept, one row per line but the header
    expect(tableRows(await readFile(printed(run.stdout, 'Table'), 'utf8'))).toHaveLength(63);
  });
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
    expect(run).toExitWith(0);
    // A duplicate typed otherwise than its domain is shown as typed, so the line is found by it.
    expect(run.stdout).toMatch(
      /^3\s+a\.example\.com\s+duplicate\s+duplicate of line 2, typed as A\.EXAMPLE\.com$/m,
    );
    expect(run.stdout).toMatch(/^arg 1\s+b\.example\.com\s+succeeded/m);
    expect(run.stdout).toMatch(/^arg 2\s+a\.example\.com\s+duplicate\s+duplicate of line 2$/m);
    expect(run.stdout).toMatch(
      /^arg 3\s+b\.example\.com\s+duplicate\s+duplicate of arg 1, typed as B\.example\.com$/m,
    );
    expect(run.stdout).toContain(
      '6 line(s): 2 succeeded, 0 failed, 0 timed out, 0 rejected, 0 invalid, 3 duplicate, 0 blank or comment, CSV header on line 1',
    );
  });

  it('keeps the table in summary.txt, prints absolute paths and points <out>/latest at the newest run; --quiet is compact however short the list', async () => {
    // Act: two runs into the same folder, the first with --quiet
    const first = await runCli(['scan', 'a.example.com', '--out', outDir, ...FAST, '--quiet'], env());
    const second = await runCli(['scan', 'fail.example.com', '--out', outDir, ...FAST], env());

    // Assess: --quiet printed progress lines and no row for the domain that succeeded
    expect(first).toExitWith(0);
    expect(first.stdout).toMatch(
      /^1\/1 done: 1 succeeded, 0 failed, 0 timed out, 0 rejected; 0 running \(\d+s\)$/m,
    );
    expect(first.stdout).not.toMatch(/^arg 1\s/m);

    // Assess: paths are absolute, and the table file holds what was printed
    expect(second).toExitWith(1);
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
