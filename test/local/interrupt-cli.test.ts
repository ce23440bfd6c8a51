/**
 * An interrupted `npm start` (Ctrl-C, SIGTERM, `| head`, SIGKILL) keeps every scan that finished:
 * exported under `--out` with its manifest, as a normal run exports it, and a summary naming the
 * domains that did not finish; the same command then resumes the run. Only the embedded S3's
 * scratch folder goes. These need a real process to signal, so they are the few child-process runs
 * of the CLI, started side by side (each in its own folder: the runs mostly wait on the scans'
 * polls); what follows an interrupt (the rerun that resumes, the rescue of what a killed run left)
 * runs in-process.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import {
  type CliRun,
  collectText,
  exitOf,
  filesUnder,
  runCli,
  startCliProcess,
  type VendorEnv,
} from './cli-run.ts';

const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2'];

/**
 * What runs after the test that registers it: the test context's own `onTestFinished`, since
 * these tests run side by side and the global one cannot tell which test is current.
 */
type AfterTest = (handler: OnTestFinishedHandler) => void;

/** A run's folder: `out` for --out and a 30-domain list, removed after the test. */
async function runFolder(afterTest: AfterTest, prefix = 'd') {
  const dir = await mkdtemp(join(tmpdir(), 'interrupt-cli-'));
  afterTest(() => rm(dir, { recursive: true, force: true }));
  const domains = Array.from({ length: 30 }, (_, index) => `${prefix}${index + 1}.example.com`);
  const list = join(dir, 'thirty.txt');
  await writeFile(list, `${domains.join('\n')}\n`, 'utf8');
  return { dir, out: join(dir, 'out'), list, domains };
}

/**
 * In-process runs capture the process's stdout and stderr for their duration, so the tests that
 * run side by side take turns at it.
 */
let inProcessTurn: Promise<unknown> = Promise.resolve();
function runCliInTurn(argv: readonly string[], env: VendorEnv = {}): Promise<CliRun> {
  const run = inProcessTurn.then(() => runCli(argv, env));
  inProcessTurn = run.catch(() => undefined);
  return run;
}

async function until(check: () => boolean, what: string, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves at the chunk of `stream` (collected in `sink`) that completes `text`: no poll's delay. */
function whenWritten(stream: Readable | null, sink: { text: string }, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (sink.text.includes(text)) return resolve();
    const check = () => {
      if (!sink.text.includes(text)) return;
      stream?.off('data', check);
      resolve();
    };
    // Added after collectText's listener, so `sink` already holds this chunk.
    stream?.on('data', check);
  });
}

/**
 * Child runs side by side, at most two at a time: each spends about 2.5 s of CPU and the rest
 * waiting on polls, so two overlap well on 2 cores, while more starve one another on a loaded
 * machine until none finishes a scan.
 */
const CHILD_SLOTS = 2;
let childrenRunning = 0;
const waitingForSlot: (() => void)[] = [];
async function childSlot(): Promise<() => void> {
  if (childrenRunning >= CHILD_SLOTS) await new Promise<void>((resolve) => waitingForSlot.push(resolve));
  childrenRunning += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    childrenRunning -= 1;
    waitingForSlot.shift()?.();
  };
}

/**
 * A child-process run of `scan` with short waits, its output collected as it comes; killed when
 * the test ends first (a failed wait), so no run outlives its test.
 */
async function startScanRun(afterTest: AfterTest, out: string, args: string[], env: VendorEnv = {}) {
  const release = await childSlot();
  const child = startCliProcess(['scan', ...args, '--out', out, ...QUICK_WAITS], env);
  const stdout = collectText(child.stdout);
  const stderr = collectText(child.stderr);
  const exit = exitOf(child);
  void exit.then(release);
  afterTest(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const succeeded = () => stdout.text.match(/=> succeeded/g)?.length ?? 0;
  return { child, stdout, stderr, exit, succeeded };
}

/** The 30-domain list, a few at a time, so an interrupt lands mid-list. */
function startListRun(afterTest: AfterTest, folder: { out: string; list: string }, env: VendorEnv = {}) {
  return startScanRun(afterTest, folder.out, ['--domains-file', folder.list, '--concurrency', '3'], env);
}

async function embeddedS3Folders(out: string): Promise<string[]> {
  return (await readdir(out)).filter((name) => name.startsWith('.s3-'));
}

/** Every scan manifest exported under `out`. */
async function exportedManifests(out: string): Promise<string[]> {
  return (await filesUnder(out)).filter((file) => /^pipeline-results\/scans\/.*\/manifest\.json$/.test(file));
}

/** Every scan manifest exported under `out`, counted by domain. */
async function manifestsByDomain(out: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const file of await exportedManifests(out)) {
    const domain = /^pipeline-results\/scans\/([^/]+)\//.exec(file)?.[1] ?? file;
    counts[domain] = (counts[domain] ?? 0) + 1;
  }
  return counts;
}

async function summaryOf(runFolder: string): Promise<ListSummary> {
  return JSON.parse(await readFile(join(runFolder, 'summary.json'), 'utf8')) as ListSummary;
}

/** What a run interrupted by `signal` exits with, prints and keeps; the summary it left. */
async function expectInterruptKeptFinished(
  run: Awaited<ReturnType<typeof startScanRun>>,
  out: string,
  signal: 'SIGINT' | 'SIGTERM',
  code: number,
  finishedBefore: number,
): Promise<ListSummary> {
  expect({ code: await run.exit, stdout: run.stdout.text, stderr: run.stderr.text }).toExitWith(code);
  const lines = run.stderr.text.split('\n');
  expect(lines[0]).toMatch(new RegExp(`^interrupting \\(${signal}\\): no new scan starts`));
  expect(lines[1]).toMatch(
    new RegExp(
      `^interrupted \\(${signal}\\): (\\d+) not started, (\\d+) in flight stopped; every finished scan is kept under ${out}, each unfinished domain is named in .*summary\\.txt; the same command resumes the run \\(--fresh starts afresh\\)$`,
    ),
  );
  expect(await embeddedS3Folders(out)).toEqual([]);
  // The unfinished domains are that one line, not a line each (they are in summary.txt).
  expect(run.stdout.text).not.toContain('Interrupted: ');

  // The run ended as a run does: summary.json, summary.txt and latest, every line accounted for.
  const summary = await summaryOf(join(out, 'latest'));
  expect(summary.domains).toHaveLength(30);
  const finished = summary.domains.filter((domain) => domain.state === 'succeeded');
  const unfinished = summary.domains.filter((domain) => domain.state !== 'succeeded');
  expect(finished.length).toBeGreaterThanOrEqual(finishedBefore);
  expect(unfinished.length).toBeGreaterThan(0);
  for (const domain of finished) {
    expect(existsSync(join(out, 'pipeline-results', domain.manifestKey ?? '(none)')), domain.domain).toBe(
      true,
    );
  }
  for (const domain of unfinished) {
    expect([domain.state, domain.error?.name], domain.domain).toEqual(['interrupted', 'Interrupted']);
  }
  expect(await exportedManifests(out)).toHaveLength(finished.length);
  const table = await readFile(join(out, 'latest', 'summary.txt'), 'utf8');
  expect(table.match(/Interrupted: /g)).toHaveLength(unfinished.length);
  const [, notStarted, inFlight] = /(\d+) not started, (\d+) in flight stopped/.exec(lines[1] ?? '') ?? [];
  expect(Number(notStarted) + Number(inFlight)).toBe(unfinished.length);
  expect(summary.counts.interrupted).toBe(unfinished.length);
  return summary;
}

describe.concurrent('an interrupted npm start', () => {
  it('SIGINT after some scans finished: exits 130, every finished scan exported with its manifest, the summary names the rest; the same command resumes it, scanning no domain twice', async ({
    onTestFinished,
  }) => {
    // Prepare: a vendor given by URL (as `npm run simulator` is), so its count of scans spans both runs.
    const folder = await runFolder(onTestFinished, 'r');
    const vendor = await startVendorSimulator({ pollsToFinish: 3 });
    onTestFinished(() => vendor.close());
    const env = {
      SCAN_API_URL: vendor.url,
      VENDOR_API_KEY: vendor.apiKey,
      VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
    };
    const run = await startListRun(onTestFinished, folder, env);
    await until(() => run.succeeded() >= 3, '3 scans to finish');

    // Act
    run.child.kill('SIGINT');

    // Assess
    const first = await expectInterruptKeptFinished(run, folder.out, 'SIGINT', 130, 3);
    const startedBefore = folder.domains.filter((domain) => vendor.scansOf(domain).length > 0).length;
    expect(startedBefore).toBeLessThan(30);

    // Act: the same command again
    const second = await runCliInTurn(
      ['scan', '--domains-file', folder.list, '--out', folder.out, ...QUICK_WAITS],
      env,
    );

    // Assess: finished scans kept, the ones in flight adopted, the rest started; one scan per domain
    expect(second).toExitWith(0);
    const oncePerDomain = Object.fromEntries(folder.domains.map((domain) => [domain, 1]));
    expect(
      Object.fromEntries(folder.domains.map((domain) => [domain, vendor.scansOf(domain).length])),
    ).toEqual(oncePerDomain);
    expect(await manifestsByDomain(folder.out)).toEqual(oncePerDomain);
    const resumed = new RegExp(
      `^Resuming run ${first.runId} of this list \\(started .*\\): (\\d+) finished scan\\(s\\) kept, (\\d+) left in flight adopted from the vendor, (\\d+) to start; --fresh starts afresh$`,
      'm',
    ).exec(second.stdout);
    expect(resumed, second.stdout).not.toBeNull();
    const [kept, adopted, toStart] = (resumed ?? []).slice(1).map(Number) as [number, number, number];
    expect(kept).toBe(first.counts.succeeded);
    expect(kept + adopted + toStart).toBe(30);
    expect(adopted).toBe(startedBefore - first.counts.succeeded);
    const summary = await summaryOf(join(folder.out, 'latest'));
    expect(summary.runId).not.toBe(first.runId);
    expect(summary.counts).toMatchObject({ succeeded: 30, failed: 0, interrupted: 0 });
    for (const row of summary.domains) {
      expect(row.manifestKey, row.domain).toMatch(new RegExp(`^scans/${row.domain.replace(/\./g, '\\.')}/`));
    }
  }, 300_000);

  it('SIGTERM after some scans finished: exits 143, every finished scan exported with its manifest, the summary names the rest', async ({
    onTestFinished,
  }) => {
    const folder = await runFolder(onTestFinished);
    const run = await startListRun(onTestFinished, folder);
    await until(() => run.succeeded() >= 3, '3 scans to finish');

    run.child.kill('SIGTERM');

    await expectInterruptKeptFinished(run, folder.out, 'SIGTERM', 143, 3);
  }, 180_000);

  it('a second Ctrl-C exits at once, keeping every file already written, and no embedded S3 folder', async ({
    onTestFinished,
  }) => {
    // The second Ctrl-C must land while the first one's stop is still running. The stop waits for
    // the steps in flight to finish their writes, so once 3 scans finished the vendor (given by URL)
    // stops answering status polls, and the first Ctrl-C goes once a poll hangs: the stop then
    // cannot end before the second Ctrl-C, sent from the stderr chunk that says the stop began.
    const folder = await runFolder(onTestFinished);
    const vendor = await startVendorSimulator({ pollsToFinish: 3 });
    onTestFinished(() => vendor.close());
    const run = await startListRun(onTestFinished, folder, {
      SCAN_API_URL: vendor.url,
      VENDOR_API_KEY: vendor.apiKey,
      VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
    });
    await until(() => run.succeeded() >= 3, '3 scans to finish');
    const polls = vendor.requestCount('GET /status/{uuid}');
    vendor.addFault({
      api: 'scan',
      method: 'GET',
      path: /^\/status\//,
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'hang' },
    });
    await until(() => vendor.requestCount('GET /status/{uuid}') > polls, 'a status poll to hang');
    const finishedBefore = run.succeeded();
    const stopBegan = whenWritten(run.child.stderr, run.stderr, 'interrupting (SIGINT)');
    run.child.kill('SIGINT');
    await stopBegan;
    run.child.kill('SIGINT');

    expect({ code: await run.exit, stdout: run.stdout.text, stderr: run.stderr.text }).toExitWith(130);
    expect(run.stderr.text).toMatch(
      new RegExp(
        `\\ninterrupted \\(SIGINT\\): stopped before the run's summary; kept \\d+ file\\(s\\) it had written under ${folder.out}; removed its embedded S3 files`,
      ),
    );
    expect(await embeddedS3Folders(folder.out)).toEqual([]);
    expect((await exportedManifests(folder.out)).length).toBeGreaterThanOrEqual(finishedBefore);
  }, 180_000);

  it("after SIGKILL, a rerun of the list exports what the killed run finished into that run's own folder, then resumes it", async ({
    onTestFinished,
  }) => {
    const { out, list } = await runFolder(onTestFinished);
    const run = await startListRun(onTestFinished, { out, list });
    await until(() => run.succeeded() >= 3, '3 scans to finish');
    const finishedBefore = run.succeeded();
    run.child.kill('SIGKILL');
    await run.exit;
    const [left] = await embeddedS3Folders(out);
    expect(left, 'the killed run left its embedded S3 folder').toBeDefined();
    expect(await exportedManifests(out)).toEqual([]);

    const next = await runCliInTurn(['scan', '--domains-file', list, '--out', out, ...QUICK_WAITS]);

    expect(next).toExitWith(0);
    expect(next.stdout).toMatch(
      new RegExp(
        `^Exported what an interrupted earlier run left in ${join(out, left ?? '')}: \\d+ file\\(s\\) written, 0 already there under ${out}; removed the folder$`,
        'm',
      ),
    );
    expect(await embeddedS3Folders(out)).toEqual([]);
    // Each run's folder holds the list as that run uploaded it, the killed run's too; nothing is
    // left in the bucket-named folder of the older layout.
    expect(existsSync(join(out, 'pipeline-input'))).toBe(false);
    const copies = (await filesUnder(out)).filter((file) => file.endsWith('/input/thirty.txt'));
    expect(copies).toHaveLength(2);
    for (const copy of copies)
      expect(await readFile(join(out, copy), 'utf8')).toBe(await readFile(list, 'utf8'));
    // The rerun carried on the killed run: what it finished is kept, not scanned again.
    const kept = Number(
      /^Resuming run \S+ of this list .*: (\d+) finished scan\(s\) kept/m.exec(next.stdout)?.[1],
    );
    expect(kept).toBeGreaterThanOrEqual(finishedBefore);
    expect(await exportedManifests(out)).toHaveLength(30);
  }, 180_000);

  it('a closed output pipe (npm start | head -1): exits 141, still exporting what finished and the summary', async ({
    onTestFinished,
  }) => {
    const { out } = await runFolder(onTestFinished);
    const { child, stderr, exit } = await startScanRun(onTestFinished, out, [
      'a.example.com',
      'b.example.com',
      'c.example.com',
      '--concurrency',
      '1',
    ]);
    // `head -1`: read the first line, then close the pipe.
    await new Promise<void>((done) => child.stdout?.once('data', () => done()));
    child.stdout?.destroy();

    expect({ code: await exit, stdout: '', stderr: stderr.text }).toExitWith(141);
    expect(stderr.text).toMatch(/^interrupting \(closed output pipe\): no new scan starts/);
    expect(stderr.text).toMatch(
      /\ninterrupted \(closed output pipe\): \d+ not started, \d+ in flight stopped; every finished scan is kept under /,
    );
    expect(await embeddedS3Folders(out)).toEqual([]);
    const summary = await summaryOf(join(out, 'latest'));
    expect(summary.domains).toHaveLength(3);
  }, 180_000);
});

describe('a later run', () => {
  it('exports what an older version left in its embedded S3 folder, then removes it, and an empty run folder', async ({
    onTestFinished,
  }) => {
    const { out } = await runFolder(onTestFinished);
    const hour = new Date(Date.now() - 3_600_000);
    const oldS3 = join(out, '.s3-Ab12Cd');
    const emptyRun = join(out, 'pipeline-results', 'lists', 'incoming', 'weekly', 'run-1');
    // As s3rver stores an object: `<bucket>/<key>._S3rver_object`.
    await mkdir(join(oldS3, 'pipeline-results', 'scans', 'old.example.com'), { recursive: true });
    await writeFile(
      join(oldS3, 'pipeline-results', 'scans', 'old.example.com', 'manifest.json._S3rver_object'),
      '{"old":true}\n',
    );
    await mkdir(emptyRun, { recursive: true });
    await utimes(oldS3, hour, hour);
    await utimes(emptyRun, hour, hour);

    const run = await runCliInTurn(['scan', 'a.example.com', '--out', out, ...QUICK_WAITS]);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain(
      `Exported what an interrupted earlier run left in ${oldS3}: 1 file(s) written, 0 already there under ${out}; removed the folder\n`,
    );
    expect(run.stdout).toContain(
      `Removed the empty run folders interrupted earlier runs left: ${emptyRun}\n`,
    );
    expect(
      await readFile(join(out, 'pipeline-results', 'scans', 'old.example.com', 'manifest.json'), 'utf8'),
    ).toBe('{"old":true}\n');
    expect(await embeddedS3Folders(out)).toEqual([]);
    expect(await readdir(join(out, 'pipeline-results', 'lists', 'incoming', 'weekly'))).toEqual([]);
  });

  it("keeps a killed run's folder when one of its files differs from the user's own, which stays as it was", async ({
    onTestFinished,
  }) => {
    const { out } = await runFolder(onTestFinished);
    const oldS3 = join(out, '.s3-Ef34Gh');
    const key = join('pipeline-results', 'scans', 'old.example.com', 'manifest.json');
    await mkdir(join(oldS3, 'pipeline-results', 'scans', 'old.example.com'), { recursive: true });
    await writeFile(join(oldS3, `${key}._S3rver_object`), '{"old":true}\n');
    await mkdir(join(out, 'pipeline-results', 'scans', 'old.example.com'), { recursive: true });
    await writeFile(join(out, key), 'mine\n');
    const hour = new Date(Date.now() - 3_600_000);
    await utimes(oldS3, hour, hour);

    const run = await runCliInTurn(['scan', 'a.example.com', '--out', out, ...QUICK_WAITS]);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain(
      `Exported what an interrupted earlier run left in ${oldS3}: 0 file(s) written, 0 already there under ${out}; kept the folder: 1 of its files differ from yours, which were left as they were: ${join(out, key)}\n`,
    );
    expect(await readFile(join(out, key), 'utf8')).toBe('mine\n');
    expect(await embeddedS3Folders(out)).toEqual(['.s3-Ef34Gh']);
  });
});
