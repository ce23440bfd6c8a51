/**
 * An interrupted `npm start` (Ctrl-C, SIGTERM, `| head`, SIGKILL) keeps every scan that finished:
 * exported under `--out` with its manifest, as a normal run exports it, and a summary naming the
 * domains that did not finish. Only the embedded S3's scratch folder goes. These need a real
 * process to signal, so they are the few child-process runs of the CLI; the rescue of what a killed
 * run left runs in-process.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { collectText, exitOf, filesUnder, runCli, startCliProcess } from './cli-run.ts';

let dir: string;
let out: string;
let list: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'interrupt-cli-'));
  out = join(dir, 'out');
  list = join(dir, 'thirty.txt');
  const domains = Array.from({ length: 30 }, (_, index) => `d${index + 1}.example.com`);
  await writeFile(list, `${domains.join('\n')}\n`, 'utf8');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

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

/** A child-process run of `scan` with short waits, its output collected as it comes. */
function startScanRun(args: string[]) {
  const child = startCliProcess(['scan', ...args, '--out', out, '--min-wait', '1', '--max-wait', '2']);
  const stdout = collectText(child.stdout);
  const stderr = collectText(child.stderr);
  const exit = exitOf(child);
  const succeeded = () => stdout.text.match(/=> succeeded/g)?.length ?? 0;
  return { child, stdout, stderr, exit, succeeded };
}

/** The 30-domain list, a few at a time, so an interrupt lands mid-list. */
function startThirtyDomainRun() {
  return startScanRun(['--domains-file', list, '--concurrency', '3']);
}

async function embeddedS3Folders(): Promise<string[]> {
  return (await readdir(out)).filter((name) => name.startsWith('.s3-'));
}

/** Every scan manifest exported under `out`. */
async function exportedManifests(): Promise<string[]> {
  return (await filesUnder(out)).filter((file) => /^pipeline-results\/scans\/.*\/manifest\.json$/.test(file));
}

async function summaryOf(runFolder: string): Promise<ListSummary> {
  return JSON.parse(await readFile(join(runFolder, 'summary.json'), 'utf8')) as ListSummary;
}

describe('an interrupted npm start', () => {
  it.each([
    ['SIGINT', 130, 3],
    ['SIGTERM', 143, 8],
  ] as const)(
    '%s after some scans finished: exits %i, every finished scan exported with its manifest, the summary names the rest',
    async (signal, code, finishedBefore) => {
      const run = startThirtyDomainRun();
      await until(() => run.succeeded() >= finishedBefore, `${finishedBefore} scans to finish`);
      run.child.kill(signal);

      expect({ code: await run.exit, stdout: run.stdout.text, stderr: run.stderr.text }).toExitWith(code);
      const lines = run.stderr.text.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^interrupting \\(${signal}\\): no new scan starts`));
      expect(lines[1]).toMatch(
        new RegExp(
          `^interrupted \\(${signal}\\): (\\d+) not started, (\\d+) in flight stopped; every finished scan is kept under ${out}, each unfinished domain is named in .*summary\\.txt; the same command resumes the run \\(--fresh starts afresh\\)$`,
        ),
      );
      expect(await embeddedS3Folders()).toEqual([]);
      // The unfinished domains are that one line, not a line each (they are in summary.txt).
      expect(run.stdout).not.toContain('Interrupted: ');

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
      expect(await exportedManifests()).toHaveLength(finished.length);
      const table = await readFile(join(out, 'latest', 'summary.txt'), 'utf8');
      expect(table.match(/Interrupted: /g)).toHaveLength(unfinished.length);
      const [, notStarted, inFlight] =
        /(\d+) not started, (\d+) in flight stopped/.exec(lines[1] ?? '') ?? [];
      expect(Number(notStarted) + Number(inFlight)).toBe(unfinished.length);
      expect(summary.counts.interrupted).toBe(unfinished.length);
    },
    180_000,
  );

  it('a second Ctrl-C exits at once, keeping every file already written, and no embedded S3 folder', async () => {
    // The second Ctrl-C must land while the first one's stop is still running, which can take as
    // little as 80 ms: it is sent from the stderr chunk that says the stop began (not a poll), and
    // a run whose stop won the race anyway (a loaded machine) proves nothing, so it is run again.
    for (let attempt = 1; ; attempt += 1) {
      const run = startThirtyDomainRun();
      await until(() => run.succeeded() >= 3, '3 scans to finish');
      const finishedBefore = run.succeeded();
      const stopBegan = whenWritten(run.child.stderr, run.stderr, 'interrupting (SIGINT)');
      run.child.kill('SIGINT');
      await stopBegan;
      run.child.kill('SIGINT');

      const code = await run.exit;
      const stoppedFirst = run.stderr.text.includes('every finished scan is kept');
      if (stoppedFirst && attempt < 5) {
        await rm(out, { recursive: true, force: true });
        continue;
      }
      expect({ code, stdout: run.stdout.text, stderr: run.stderr.text }).toExitWith(130);
      expect(run.stderr.text).toMatch(
        new RegExp(
          `\\ninterrupted \\(SIGINT\\): stopped before the run's summary; kept \\d+ file\\(s\\) it had written under ${out}; removed its embedded S3 files`,
        ),
      );
      expect(await embeddedS3Folders()).toEqual([]);
      expect((await exportedManifests()).length).toBeGreaterThanOrEqual(finishedBefore);
      return;
    }
  }, 600_000);

  it("after SIGKILL, a rerun of the list exports what the killed run finished into that run's own folder, then resumes it", async () => {
    const run = startThirtyDomainRun();
    await until(() => run.succeeded() >= 3, '3 scans to finish');
    const finishedBefore = run.succeeded();
    run.child.kill('SIGKILL');
    await run.exit;
    const [left] = await embeddedS3Folders();
    expect(left, 'the killed run left its embedded S3 folder').toBeDefined();
    expect(await exportedManifests()).toEqual([]);

    const next = await runCli([
      'scan',
      '--domains-file',
      list,
      '--out',
      out,
      '--min-wait',
      '1',
      '--max-wait',
      '2',
    ]);

    expect(next).toExitWith(0);
    expect(next.stdout).toMatch(
      new RegExp(
        `^Exported what an interrupted earlier run left in ${join(out, left ?? '')}: \\d+ file\\(s\\) written, 0 already there under ${out}; removed the folder$`,
        'm',
      ),
    );
    expect(await embeddedS3Folders()).toEqual([]);
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
    expect(await exportedManifests()).toHaveLength(30);
  }, 180_000);

  it('a closed output pipe (npm start | head -1): exits 141, still exporting what finished and the summary', async () => {
    const { child, stderr, exit } = startScanRun([
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
    expect(await embeddedS3Folders()).toEqual([]);
    const summary = await summaryOf(join(out, 'latest'));
    expect(summary.domains).toHaveLength(3);
  }, 180_000);
});

describe('a later run', () => {
  it('exports what an older version left in its embedded S3 folder, then removes it, and an empty run folder', async () => {
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

    const run = await runCli(['scan', 'a.example.com', '--out', out, '--min-wait', '1', '--max-wait', '2']);

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
    expect(await embeddedS3Folders()).toEqual([]);
    expect(await readdir(join(out, 'pipeline-results', 'lists', 'incoming', 'weekly'))).toEqual([]);
  });

  it("keeps a killed run's folder when one of its files differs from the user's own, which stays as it was", async () => {
    const oldS3 = join(out, '.s3-Ef34Gh');
    const key = join('pipeline-results', 'scans', 'old.example.com', 'manifest.json');
    await mkdir(join(oldS3, 'pipeline-results', 'scans', 'old.example.com'), { recursive: true });
    await writeFile(join(oldS3, `${key}._S3rver_object`), '{"old":true}\n');
    await mkdir(join(out, 'pipeline-results', 'scans', 'old.example.com'), { recursive: true });
    await writeFile(join(out, key), 'mine\n');
    const hour = new Date(Date.now() - 3_600_000);
    await utimes(oldS3, hour, hour);

    const run = await runCli(['scan', 'a.example.com', '--out', out, '--min-wait', '1', '--max-wait', '2']);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain(
      `Exported what an interrupted earlier run left in ${oldS3}: 0 file(s) written, 0 already there under ${out}; kept the folder: 1 of its files differ from yours, which were left as they were: ${join(out, key)}\n`,
    );
    expect(await readFile(join(out, key), 'utf8')).toBe('mine\n');
    expect(await embeddedS3Folders()).toEqual(['.s3-Ef34Gh']);
  });
});
