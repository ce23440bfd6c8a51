/**
 * `npm start` where npm gets in the way of what was typed: paths relative to the user's directory
 * (INIT_CWD), flags npm kept for itself (no `--`), flags before the command, and a domain list
 * the configuration's intake does not take. All in-process; only one of them scans.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './cli-run.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
const QUICK_WAITS = ['--min-wait', '1', '--max-wait', '2', '--deadline', '120'];

let dir: string;
const savedEnv: Record<string, string | undefined> = {};

/** Sets npm's variables for the test; restored afterwards. */
function setEnv(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(name in savedEnv)) savedEnv[name] = process.env[name];
    process.env[name] = value;
  }
}

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'cli-args-')));
});
afterEach(async () => {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete savedEnv[name];
  }
  await rm(dir, { recursive: true, force: true });
});

describe('relative paths resolve from the directory npm start was run in (INIT_CWD)', () => {
  it('reads --domains-file and writes --out relative to INIT_CWD, not the project root', async () => {
    await mkdir(join(dir, 'lists'));
    await writeFile(join(dir, 'lists', 'mine.txt'), 'a.example.com\n', 'utf8');
    setEnv({ INIT_CWD: join(dir, 'lists') });

    const run = await runCli(['scan', '--domains-file', 'mine.txt', '--out', '../results', ...QUICK_WAITS]);

    expect(run.stderr).toBe('');
    expect(run).toExitWith(0);
    expect(run.stdout).toContain(`Summary: ${join(dir, 'results', 'pipeline-results')}/`);
    const summary = JSON.parse(await readFile(join(dir, 'results', 'latest', 'summary.json'), 'utf8'));
    expect(summary.counts).toMatchObject({ lines: 1, succeeded: 1 });
  });

  it('names the absolute path it tried when a --domains-file is missing', async () => {
    setEnv({ INIT_CWD: join(PROJECT_ROOT, 'docs') });

    const run = await runCli(['scan', '--domains-file', '../examples/nope.txt', '--out', dir]);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      `error: --domains-file ${join(PROJECT_ROOT, 'examples', 'nope.txt')}: cannot be read (ENOENT)\n`,
    );
  });

  it('reads --config relative to INIT_CWD', async () => {
    setEnv({ INIT_CWD: join(PROJECT_ROOT, 'docs') });

    const run = await runCli([
      'scan',
      '--domains-file',
      '../examples/domains.txt',
      '--config',
      '../nope.json',
    ]);

    expect(run).toExitWith(2);
    expect(run.stderr).toContain(join(PROJECT_ROOT, 'nope.json'));
  });
});

describe('a --domains-file the intake does not take', () => {
  it('names the intake.suffixes setting that decides it', async () => {
    const list = join(dir, 'x.lst');
    await writeFile(list, 'a.example.com\n', 'utf8');

    const run = await runCli([
      'scan',
      '--domains-file',
      list,
      '--config',
      join(PROJECT_ROOT, 'config/pipeline.example.json'),
    ]);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      `error: --domains-file ${list}: must end with one of .txt, .csv (the intake.suffixes setting of the pipeline configuration)\n`,
    );
  });
});

describe('flags npm kept for itself (npm start without --)', () => {
  it('stops before any work and says what to type', async () => {
    // What `npm start scan example.com --min-wait 1 --max-wait 2` hands the script.
    setEnv({ npm_lifecycle_event: 'start', npm_config_min_wait: 'true', npm_config_max_wait: 'true' });

    const run = await runCli(['scan', 'example.com', '1', '2', '--out', dir]);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      'error: npm kept --min-wait, --max-wait for itself: flags for npm start must come after "--", ' +
        'and their values (1, 2) arrived as arguments. ' +
        'Type: npm start -- scan example.com --out ' +
        `${dir} --min-wait … --max-wait …\n`,
    );
    expect(run.stdout).toBe('');
  });

  it("says so for the program's own flags too: npm start --s3-latency 25ms", async () => {
    // What `npm start --s3-latency 25ms` hands the script: only the 25ms.
    setEnv({ npm_lifecycle_event: 'start', npm_config_s3_latency: 'true' });

    const run = await runCli(['25ms']);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      'error: npm kept --s3-latency for itself: flags for npm start must come after "--", ' +
        'and their values (25ms) arrived as arguments. Type: npm start -- --s3-latency …\n',
    );
  });

  it('leaves a run alone whose flags all arrived', async () => {
    setEnv({ npm_lifecycle_event: 'start', npm_config_min_wait: 'true' });

    const run = await runCli(['scan', '--min-wait', '1', '--domains-file', join(dir, 'missing.txt')]);

    expect(run.stderr).toContain('missing.txt: cannot be read (ENOENT)');
  });
});

describe('a flag before the command', () => {
  it('says which command takes it and what to type', async () => {
    const run = await runCli(['--domains-file', 'lists/my list.txt']);

    expect(run).toExitWith(2);
    expect(run.stderr).toBe(
      "error: --domains-file belongs to a command, and the command comes first: npm start -- scan --domains-file 'lists/my list.txt'\n",
    );
  });

  it('names every command that takes a shared flag', async () => {
    const run = await runCli(['--check-domain', 'x.example.com']);

    expect(run).toExitWith(2);
    expect(run.stderr).toContain('npm start -- rotate --check-domain x.example.com');
  });
});
