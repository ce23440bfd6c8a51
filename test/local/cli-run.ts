/**
 * `npm start` for the tests, two ways:
 *
 * - `runCli`: in-process, `main(argv)` from local/cli/main.ts with stdout and stderr captured and the
 *   vendor variables set only as given. Waits, retry intervals and backoff sleeps are 0 ms unless a
 *   test is about them (`timing: 'as-defined'`): the argv, the handlers and the definitions are the
 *   real ones, only the engine's Wait and Retry durations and the sleeps inside an invocation (the
 *   vendor clients' backoff, StartScan's settle waits) are replaced; the output says so
 *   (`waiting 0 ms (overridden)`, `retry 1/4 in 0 ms (overridden; …)`).
 * - `startCliProcess`/`runCliProcess`: a real child process as `npm start` runs it, for what
 *   only a process shows: exit codes as the shell sees them, signals, which stream gets what.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { userPath } from '../../local/cli/cli-args.ts';
import { main } from '../../local/cli/main.ts';
import type { LocalTiming } from '../../local/runner/pipeline.ts';
import { outFlagOf, watchKeys, watchOutput, watchTerminal } from '../kit/leak-watch.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

export const VENDOR_ENV = [
  'SCAN_API_URL',
  'KEYS_API_URL',
  'BREACH_API_URL',
  'VENDOR_ALLOWED_ORIGINS',
  'VENDOR_API_KEY',
  'ORG_UUID',
  // What `rotate` reads besides the vendor: where Secrets Manager is, which secret, and how to sign.
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'ROTATION_SECRET_ID',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
] as const;

export type VendorEnv = Partial<Record<(typeof VENDOR_ENV)[number], string>>;

/** The line every local command ends with when IAM evaluation ran and denied nothing. */
export const IAM_EVALUATED_CLEAN =
  /^IAM: [1-9]\d* handler call\(s\) checked against the synthesized policies \([1-9]\d* simulated, \d+ ms\), 0 denied$/m;

/** Every Wait state, Retry interval and backoff sleep at 0 ms: what a test not about timing runs with. */
export const NO_WAITS: LocalTiming = { waitOverrideMs: 0, retryIntervalMs: 0, vendorBackoffMs: 0 };

/**
 * The `--config` of every in-process CLI test that needs settings of its own: reconcile's minimum
 * age, breach's watchlist row limit, and a suffix the intake does not take by default. One
 * configuration, so a run of the suite synthesizes it once (local/synth/synth-cache.ts) rather than once
 * per test; each test checks its own setting, and none of the others changes what it runs.
 */
export const CLI_TEST_CONFIG = {
  scan: { reconciliation: { minAgeMinutes: 0 } },
  breach: { maxWatchlistRows: 2 },
  intake: { suffixes: ['.txt', '.csv', '.lst'] },
} as const;

/** Writes CLI_TEST_CONFIG to `<dir>/pipeline.json` and returns its path, for `--config`. */
export async function writeCliTestConfig(dir: string): Promise<string> {
  const file = join(dir, 'pipeline.json');
  await writeFile(file, JSON.stringify(CLI_TEST_CONFIG), 'utf8');
  return file;
}

export interface CliRunOptions {
  /** @default NO_WAITS; `as-defined` waits what the definition and the flags say. */
  readonly timing?: LocalTiming | 'as-defined';
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI with only the given vendor variables set (everything in VENDOR_ENV else removed) and
 * its output captured; the process environment and streams are restored afterwards.
 */
export async function runCli(
  argv: readonly string[],
  env: VendorEnv = {},
  options: CliRunOptions = {},
): Promise<CliRun> {
  const savedEnv = Object.fromEntries(VENDOR_ENV.map((name) => [name, process.env[name]]));
  for (const name of VENDOR_ENV) {
    const value = env[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  const out: string[] = [];
  const err: string[] = [];
  const capture =
    (sink: string[]) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      sink.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  process.stdout.write = capture(out) as typeof process.stdout.write;
  process.stderr.write = capture(err) as typeof process.stderr.write;
  const timing = options.timing ?? NO_WAITS;
  watchKeys(env.VENDOR_API_KEY);
  let run: CliRun;
  try {
    const code = await main(argv, timing === 'as-defined' ? {} : { timing });
    run = { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    for (const name of VENDOR_ENV) {
      const value = savedEnv[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  // Every run the suite makes is searched for the keys it used (test/kit/leak-watch.ts).
  watchTerminal(argv, run);
  // Where the CLI put it: relative to the directory `npm start` ran in (INIT_CWD), as it resolves it.
  const dir = outFlagOf(argv);
  if (dir !== undefined) await watchOutput(argv, userPath(dir));
  return run;
}

/**
 * The node arguments of package.json's `start` script (`node --import tsx local/cli/main.ts`): the child
 * processes run exactly what `npm start` runs, minus npm's banner. tsx's loader runs in the CLI's own
 * process, so a signal reaches the CLI itself; tsx's CLI would relay it from a parent and exit
 * 128+signal on its own when the child took over 30 ms to acknowledge (a loaded machine).
 */
export function npmStartNodeArgs(): string[] {
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [command, ...args] = manifest.scripts.start?.split(/\s+/) ?? [];
  if (command !== 'node')
    throw new Error(`package.json's start script no longer runs node: ${manifest.scripts.start}`);
  return args;
}

/** The CLI as `npm start` runs it, with only the given vendor variables set; `stdin` is piped to it. */
export function startCliProcess(args: readonly string[], env: VendorEnv = {}, stdin?: string): ChildProcess {
  const childEnv = { ...process.env };
  for (const name of VENDOR_ENV) delete childEnv[name];
  const child = spawn(process.execPath, [...npmStartNodeArgs(), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...childEnv, ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  // Every run the suite makes is searched for the keys it used (test/kit/leak-watch.ts).
  watchKeys(env.VENDOR_API_KEY);
  const stdout = collectText(child.stdout);
  const stderr = collectText(child.stderr);
  child.once('close', () => watchTerminal(args, { stdout: stdout.text, stderr: stderr.text }, true));
  return child;
}

/** Everything a stream says, as it says it. */
export function collectText(stream: NodeJS.ReadableStream | null): { text: string } {
  const sink = { text: '' };
  stream?.on('data', (chunk: Buffer) => {
    sink.text += chunk.toString('utf8');
  });
  return sink;
}

/** The exit code, or null when a signal ended the process. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => child.once('exit', (code) => done(code)));
}

/** Runs the CLI in a child process to its end: its exit code and what each stream received. */
export async function runCliProcess(
  args: readonly string[],
  env: VendorEnv = {},
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = startCliProcess(args, env, stdin);
  const stdout = collectText(child.stdout);
  const stderr = collectText(child.stderr);
  // 'close', not 'exit': both pipes are drained by then.
  const code = await new Promise<number | null>((done) => child.once('close', (exit) => done(exit)));
  const dir = outFlagOf(args);
  if (dir !== undefined) await watchOutput(args, resolve(PROJECT_ROOT, dir));
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Every file under `dir`, as `/`-separated paths relative to it. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}
