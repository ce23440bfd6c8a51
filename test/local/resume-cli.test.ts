/**
 * A rerun into the same `--out` resumes the run an interrupt stopped: finished scans are kept, the
 * ones in flight adopted from the vendor, and no domain is scanned twice. The vendor is a
 * simulator this test starts (as `npm run simulator` would be, given by its URL), so its count of
 * scans spans both runs; the runs are real child processes interrupted with a real SIGINT.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import {
  collectText,
  exitOf,
  filesUnder,
  runCliProcess,
  startCliProcess,
  type VendorEnv,
} from './cli-run.ts';

const DOMAINS = Array.from({ length: 30 }, (_, index) => `r${index + 1}.example.com`);

let dir: string;
let out: string;
let list: string;
let simulator: VendorSimulator;
let env: VendorEnv;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'resume-cli-'));
  out = join(dir, 'out');
  list = join(dir, 'thirty.txt');
  await writeFile(list, `${DOMAINS.join('\n')}\n`, 'utf8');
  simulator = await startVendorSimulator({ pollsToFinish: 3 });
  env = {
    SCAN_API_URL: simulator.url,
    VENDOR_API_KEY: simulator.apiKey,
    VENDOR_ALLOWED_ORIGINS: simulator.storageUrl,
  };
});
afterEach(async () => {
  await simulator.close();
  await rm(dir, { recursive: true, force: true });
});

const ARGS = () => ['scan', '--domains-file', list, '--out', out, '--min-wait', '1', '--max-wait', '2'];

async function until(check: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs the list until `finished` scans succeeded, then sends SIGINT; the run's streams and exit. */
async function interruptedRun(finished: number) {
  const child = startCliProcess([...ARGS(), '--concurrency', '3'], env);
  const stdout = collectText(child.stdout);
  const stderr = collectText(child.stderr);
  const exit = exitOf(child);
  await until(() => (stdout.text.match(/=> succeeded/g)?.length ?? 0) >= finished, `${finished} scans`);
  child.kill('SIGINT');
  return { code: await exit, stdout: stdout.text, stderr: stderr.text };
}

/** Every scan manifest exported under `out`, by domain. */
async function manifestsByDomain(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const file of await filesUnder(out)) {
    const match = /^pipeline-results\/scans\/([^/]+)\/.*\/manifest\.json$/.exec(file);
    if (match?.[1]) counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
  }
  return counts;
}

async function latestSummary(): Promise<ListSummary> {
  return JSON.parse(await readFile(join(out, 'latest', 'summary.json'), 'utf8')) as ListSummary;
}

describe('resuming an interrupted run', () => {
  it('an interrupted 30-domain run, rerun, ends with one scan per domain at the vendor and one manifest per domain', async () => {
    const first = await interruptedRun(8);
    expect(first).toExitWith(130);
    const firstSummary = await latestSummary();
    expect(firstSummary.counts.succeeded).toBeGreaterThanOrEqual(8);
    const startedBefore = DOMAINS.filter((domain) => simulator.scansOf(domain).length > 0).length;
    expect(startedBefore).toBeLessThan(30);

    const second = await runCliProcess(ARGS(), env);

    expect(second).toExitWith(0);
    // The vendor's own count: every domain scanned exactly once across both runs.
    expect(Object.fromEntries(DOMAINS.map((domain) => [domain, simulator.scansOf(domain).length]))).toEqual(
      Object.fromEntries(DOMAINS.map((domain) => [domain, 1])),
    );
    expect(Object.fromEntries(await manifestsByDomain())).toEqual(
      Object.fromEntries(DOMAINS.map((domain) => [domain, 1])),
    );
    expect(second.stdout).toMatch(
      new RegExp(
        `^Resuming run ${firstSummary.runId} of this list \\(started .*\\): (\\d+) finished scan\\(s\\) kept, (\\d+) left in flight adopted from the vendor, (\\d+) to start; --fresh starts afresh$`,
        'm',
      ),
    );
    const [, kept, adopted, toStart] =
      /(\d+) finished scan\(s\) kept, (\d+) left in flight adopted from the vendor, (\d+) to start/.exec(
        second.stdout,
      ) ?? [];
    expect(Number(kept)).toBe(firstSummary.counts.succeeded);
    expect(Number(kept) + Number(adopted) + Number(toStart)).toBe(30);
    expect(Number(adopted)).toBe(startedBefore - firstSummary.counts.succeeded);
    const summary = await latestSummary();
    expect(summary.runId).not.toBe(firstSummary.runId);
    expect(summary.counts).toMatchObject({ succeeded: 30, failed: 0, interrupted: 0 });
    for (const row of summary.domains) {
      expect(row.manifestKey, row.domain).toMatch(new RegExp(`^scans/${row.domain.replace(/\./g, '\\.')}/`));
    }
  }, 300_000);
});
