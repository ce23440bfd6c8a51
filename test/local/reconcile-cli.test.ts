/**
 * `npm start -- reconcile` in-process (`main(argv)`): the orphan the simulator makes is archived,
 * exported under --out, and the run says a second run stored nothing (what reconciliation stores
 * and links is test/scan/reconcile.test.ts's, on the same kind of orphan), and the vendor's statistics
 * as the operations workflow's statistics job reads and keeps them after each run; against a vendor
 * given by URL, a second invocation into the same `--out` does not archive again what the first one
 * did, measures the vendor's growth from the first one's read and keeps its day's snapshot.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import { filesUnder, IAM_EVALUATED_CLEAN, runCli, writeCliTestConfig } from './cli-run.ts';

let outDir: string;
beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'reconcile-cli-'));
});
afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('npm start -- reconcile', () => {
  it('makes an orphan in the simulator, archives it, exports the archive under --out, and says the second run stored nothing', async () => {
    const run = await runCli(['reconcile', '--out', outDir]);

    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(IAM_EVALUATED_CLEAN);
    // The orphan's ScanRejected makes the handlers warn: into a file whose path is printed, never stderr.
    expect(run.stderr).toBe('');
    const log = /^Log: +(\S+) \((\d+) line\(s\), (\d+) warning/m.exec(run.stdout);
    expect(log?.[1]).toMatch(/\/handler-logs\/reconcile-[0-9TZ]+-[0-9a-f]{4}\.jsonl$/);
    const logLines = (await readFile(log?.[1] ?? '', 'utf8')).trim().split('\n');
    expect(logLines).toHaveLength(Number(log?.[2]));
    expect(logLines.map((line) => JSON.parse(line).level)).toContain('WARN');
    const uuid =
      /created scan ([0-9a-f-]{36}) of orphan\.example\.com and lost StartScan's answer; the execution ended ScanRejected/.exec(
        run.stdout,
      )?.[1];
    expect(uuid).toBeDefined();
    expect(run.stdout).toMatch(
      /First run: 1 listed, 1 archived, 0 already archived.*1 failure records linked/,
    );
    expect(run.stdout).toMatch(/Second run: 1 listed, 0 archived, 1 already archived.*; 2 objects written/);
    expect(run.stdout).toContain('The second run stored nothing new');
    // The statistics job's core after each run: the vendor's numbers, then growth from the first read
    const day = /day's snapshot: (operations\/vendor-stats\/\d{4}\/\d{2}\/\d{2}\.json)\n/.exec(
      run.stdout,
    )?.[1];
    expect(day).toBeDefined();
    expect(run.stdout).toContain(
      '  vendor statistics: total 1, by_status.queued 0, by_status.running 0, by_status.completed 1',
    );
    expect(run.stdout).toContain('  vendor growth: none measured (no previous read, or no counts found)');
    expect(run.stdout).toContain('  vendor growth since the previous read: 0 finished, 0 failed');
    expect(run.stdout).toContain(`  day's snapshot: ${day} (kept: written earlier that day)`);
    // What the archive holds and how it links the ScanRejected record is reconciliation's own
    // (test/scan/reconcile.test.ts, the same orphan); here, that the command exports it under --out.
    const files = await filesUnder(outDir);
    expect(files.filter((file) => file.endsWith(`/${uuid}/manifest.json`))).toHaveLength(1);
    expect(files.filter((file) => /\/rejected-[0-9a-f]{16}\/failure\.json$/.test(file))).toHaveLength(1);
    expect(
      files.filter(
        (file) => file.endsWith(`/${day}`) || file.endsWith('/operations/vendor-stats/latest.json'),
      ),
    ).toHaveLength(2);
    for (const output of ['report', 'logs', 'debug']) {
      expect(files.some((file) => file.includes(`/${uuid}/${output}.`))).toBe(true);
    }
  });

  it('against a vendor given by URL, stages nothing, and a second invocation into the same --out archives nothing again', async () => {
    // Prepare: a "real" vendor with one finished scan nobody archived, and a configuration whose
    // minimum age (0) lets a minute-old scan count
    const vendor = await startVendorSimulator({ pollsToFinish: 1 });
    const client = new ScanClient({ baseUrl: vendor.url, credentials: async () => vendor.apiKey });
    try {
      const { uuid } = await client.startScan('console.example.com');
      await client.getStatus(uuid);
      const config = await writeCliTestConfig(outDir);
      const env = { SCAN_API_URL: vendor.url, VENDOR_API_KEY: vendor.apiKey };
      const out = join(outDir, 'out');

      // Act
      const first = await runCli(['reconcile', '--out', out, '--config', config], env);
      const second = await runCli(['reconcile', '--out', out, '--config', config], env);

      // Assess
      expect(first).toExitWith(0);
      expect(first.stdout).not.toContain('Made an orphan');
      expect(first.stdout).toMatch(/First run: 1 listed, 1 archived/);
      expect(first.stdout).toMatch(IAM_EVALUATED_CLEAN);
      expect(second).toExitWith(0);
      expect(second.stdout).toContain('Loaded 1 manifests and failure records of earlier runs');
      expect(second.stdout).toMatch(/First run: 1 listed, 0 archived, 1 already archived/);
      expect(vendor.requestCount('GET /report/{uuid}')).toBe(1);
      expect(vendor.requestCount('POST /scan')).toBe(1);
      // The statistics job's folder came back too: growth is measured from the first invocation's
      // last read, and its day's snapshot is kept, not written again.
      expect(second.stdout).toMatch(
        /First run: .*\n(?: {2}.*\n)* {2}vendor growth since the previous read: 0 finished, 0 failed\n {2}day's snapshot: \S+ \(kept: written earlier that day\)/,
      );
    } finally {
      await client.close();
      await vendor.close();
    }
    // CLI_TEST_CONFIG: the first run of the suite to use it synthesizes it, for the IAM evaluator's policies.
  }, 180_000);

  it('against a vendor given by URL, says how young a "too recent" scan is and which setting changes it', async () => {
    const vendor = await startVendorSimulator({ pollsToFinish: 1 });
    try {
      vendor.seedFinishedScans(['fresh.example.com', 'new.example.com']);
      const env = { SCAN_API_URL: vendor.url, VENDOR_API_KEY: vendor.apiKey };

      const run = await runCli(['reconcile', '--out', join(outDir, 'out')], env);

      // The default minimum age: the poll deadline (24 h) and an hour.
      expect(run).toExitWith(0);
      expect(run.stdout).toContain(
        '2 too recent (younger than 25 h: scan.reconciliation.minAgeMinutes, in a --config file, archives them sooner)',
      );
      expect(vendor.requestCount('GET /report/{uuid}')).toBe(0);
    } finally {
      await vendor.close();
    }
  });

  it('reports an unknown flag as a usage error', async () => {
    const run = await runCli(['reconcile', '--bogus']);
    expect(run).toExitWith(2);
  });
});
