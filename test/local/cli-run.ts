/**
 * `npm start` in-process for the tests: `main(argv)` from local/cli.ts with stdout and stderr
 * captured and the vendor variables set only as given.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { main } from '../../local/cli.ts';

export const VENDOR_ENV = [
  'SCAN_API_URL',
  'KEYS_API_URL',
  'BREACH_API_URL',
  'VENDOR_API_KEY',
  'ORG_UUID',
  // What `rotate` reads besides the vendor: where Secrets Manager is, which secret, and how to sign.
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'ROTATION_SECRET_ID',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
] as const;

/** The line every local command ends with when IAM evaluation ran and denied nothing. */
export const IAM_EVALUATED_CLEAN =
  /^IAM: [1-9]\d* handler call\(s\) checked against the synthesized policies \([1-9]\d* simulated, \d+ ms\), 0 denied$/m;

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
  env: Partial<Record<(typeof VENDOR_ENV)[number], string>> = {},
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
  try {
    const code = await main(argv);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
    for (const name of VENDOR_ENV) {
      const value = savedEnv[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Every file under `dir`, as `/`-separated paths relative to it. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}
