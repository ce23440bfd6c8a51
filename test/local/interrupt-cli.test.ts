/**
 * An interrupted `npm start` (Ctrl-C, SIGTERM, `| head`): one line saying so, no embedded S3 folder
 * left, and no run folder that looks finished. These need a real process to signal, so they are the
 * few child-process runs of the CLI; the clean-up of older leftovers runs in-process.
 */
import { mkdir, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectText, exitOf, filesUnder, runCli, startCliProcess } from './cli-run.ts';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'interrupt-cli-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Asserts what an interrupted run may leave: no hidden folder, no summary, a marked run folder or none. */
async function expectCleanInterruption(): Promise<void> {
  expect((await readdir(out)).filter((name) => name.startsWith('.s3-'))).toEqual([]);
  const files = await filesUnder(out).catch(() => []);
  expect(files.filter((file) => file.endsWith('/summary.json'))).toEqual([]);
  expect(files).not.toContain('latest');
  for (const log of files.filter((file) => file.endsWith('/handler-log.jsonl'))) {
    expect(files).toContain(log.replace(/handler-log\.jsonl$/, 'interrupted.json'));
  }
}

describe('an interrupted npm start', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: exits %i with one line, leaving no embedded S3 folder', async (signal, code) => {
    const child = startCliProcess([
      'scan',
      'a.example.com',
      '--out',
      out,
      '--min-wait',
      '60',
      '--max-wait',
      '60',
    ]);
    const stdout = collectText(child.stdout);
    const stderr = collectText(child.stderr);
    const exit = exitOf(child);
    // Mid-run: the embedded S3 holds the list and the scan waits its 60 s.
    await until(() => stdout.text.includes('waiting 60 s'), 'the scan to wait');
    child.kill(signal);

    expect({ code: await exit, stdout: stdout.text, stderr: stderr.text }).toExitWith(code);
    expect(stderr.text).toMatch(
      new RegExp(
        `^interrupted \\(${signal}\\): stopped before the run's summary; removed its embedded S3 files.*\\n$`,
      ),
    );
    expect(stderr.text.split('\n')).toHaveLength(2);
    await expectCleanInterruption();
  });

  it('a closed output pipe (npm start | head -1): exits 141 with one line on stderr, leaving nothing', async () => {
    const child = startCliProcess([
      'scan',
      'a.example.com',
      'b.example.com',
      'c.example.com',
      '--out',
      out,
      '--min-wait',
      '1',
      '--max-wait',
      '2',
      '--concurrency',
      '1',
    ]);
    const stderr = collectText(child.stderr);
    const exit = exitOf(child);
    // `head -1`: read the first line, then close the pipe.
    await new Promise<void>((done) => child.stdout?.once('data', () => done()));
    child.stdout?.destroy();

    expect({ code: await exit, stdout: '', stderr: stderr.text }).toExitWith(141);
    expect(stderr.text).toMatch(
      /^interrupted \(closed output pipe\): stopped before the run's summary; removed its embedded S3 files/,
    );
    await expectCleanInterruption();
  });
});

describe('a later run', () => {
  it('removes what interrupted runs of an older version left: the embedded S3 folder and an empty run folder', async () => {
    const hour = new Date(Date.now() - 3_600_000);
    const oldS3 = join(out, '.s3-Ab12Cd');
    const emptyRun = join(out, 'pipeline-results', 'lists', 'incoming', 'weekly', 'run-1');
    await mkdir(join(oldS3, 'pipeline-input'), { recursive: true });
    await mkdir(emptyRun, { recursive: true });
    await utimes(oldS3, hour, hour);
    await utimes(emptyRun, hour, hour);

    const run = await runCli(['scan', 'a.example.com', '--out', out, '--min-wait', '1', '--max-wait', '2']);

    expect(run).toExitWith(0);
    expect(run.stdout).toContain(`Removed what interrupted earlier runs left: ${oldS3}, ${emptyRun}\n`);
    expect((await readdir(out)).filter((name) => name.startsWith('.s3-'))).toEqual([]);
    expect(await readdir(join(out, 'pipeline-results', 'lists', 'incoming', 'weekly'))).toEqual([]);
  });
});
