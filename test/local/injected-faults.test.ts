/**
 * The faults npm start injects into the simulator itself (the demo's and rotate's lost start
 * answer, reconcile's orphan) say so wherever the run reports them, so a deliberate fault never
 * reads as a problem: the demo's first problem line once said only `ECONNRESET … the client gives up`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './cli-run.ts';

let outDir: string;
beforeEach(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'injected-faults-'));
});
afterEach(async () => {
  await rm(outDir, { recursive: true, force: true });
});

describe('faults npm start injects on purpose', () => {
  it('the demo: its lost start answer says it was injected, on the failure line and the spent-faults line', async () => {
    const run = await runCli(['--out', outDir]);

    expect(run).toExitWith(0);
    expect(run.stdout).toMatch(
      /^ {2}vendor scan\.startScan: ECONNRESET on attempt 1\/\d+; the client gives up \(injected on purpose: npm start loses the answer of its first scan start, to show StartScan adopting the scan it made\)$/m,
    );
    expect(run.stdout).toMatch(
      /^Simulator faults spent by this run: lose-response on POST \/scan \(injected on purpose: /m,
    );
  });

  it('reconcile: its orphan faults say so, each repeated fault once with its count', async () => {
    const run = await runCli(['reconcile', '--out', outDir]);

    expect(run).toExitWith(0);
    const spent = /^Simulator faults spent by this run: (.*)$/m.exec(run.stdout)?.[1] ?? '';
    expect(spent).toMatch(/^lose-response on POST \/scan \(injected on purpose: reconcile makes an orphan/);
    expect(spent).toMatch(
      /, status 503 on GET \/scans \(injected on purpose: reconcile makes an orphan[^)]*\) \(\d+ times\)/,
    );
    expect(spent.match(/status 503 on GET \/scans/g)).toHaveLength(1);
  });
});
