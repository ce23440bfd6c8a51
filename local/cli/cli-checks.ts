/**
 * The checks `npm start` makes before any work starts, so that a usage or configuration problem
 * is one clear exit 2 instead of a failure per domain: the output directory, the command word,
 * `--config`, the Node.js version, an empty list, a list's encoding (the vendor's own check is
 * local/cli/preflight.ts, which loads the vendor clients: this module is loaded before the arguments
 * are read, and stays light).
 */
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { InvalidInputError } from '#lambdas/platform/errors';
import { notUtf8Reason } from '#lambdas/platform/input/text-encoding';
import { normalizeDomain } from '#lambdas/platform/input/validation';

/** A mistake in how the command was called: exit 2, before any work. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** True when the list has at least one line that is not blank, a `#` comment or only a BOM. */
export function hasDomainLines(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  return text.split(/\r?\n/).some((line) => {
    const trimmed = line.trim();
    return trimmed !== '' && !trimmed.startsWith('#');
  });
}

/**
 * `--out` must be a directory this process can write, checked before anything runs: a run that
 * scans a thousand domains and then cannot save them has wasted the vendor's and the user's time.
 */
export async function usableOutputDirectory(dir: string): Promise<string> {
  const path = resolve(dir);
  const existing = await stat(path).catch(() => undefined);
  if (existing && !existing.isDirectory())
    throw new UsageError(`--out ${dir}: exists and is not a directory`);
  try {
    if (!existing) await makeDirectories(path);
    await access(path, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unusable';
    throw new UsageError(`--out ${dir}: cannot be created or written (${code})`);
  }
  return path;
}

/** What a run puts in its output folder; a folder holding only these is a run's output folder. */
const OUTPUT_ENTRIES =
  /^(pipeline-input|pipeline-results|handler-logs|latest(\.new-\d+)?|\.s3-.*|\.gitignore)$/;

/** The marker that keeps an output folder out of git and of Biome (`vcs.useIgnoreFile` reads it too). */
export const OUTPUT_IGNORE_FILE = '.gitignore';

/**
 * Writes `.gitignore` (`*`) into an output folder that holds nothing but run outputs, so that a
 * run's results, wherever `--out` puts them inside a repository, are never committed and never
 * linted (the README's `--out ./my-results` followed by `npm test` once failed on its JSON). A
 * folder with anything else in it is the user's own: nothing is written there, an ignore file of
 * theirs is never replaced. Called once the run starts work: a usage error writes nothing.
 */
export async function markAsOutput(path: string): Promise<void> {
  const entries = await readdir(path);
  if (entries.includes(OUTPUT_IGNORE_FILE) || !entries.every((name) => OUTPUT_ENTRIES.test(name))) return;
  await writeFile(
    join(path, OUTPUT_IGNORE_FILE),
    '# Written by npm start: run outputs, never source. Git and Biome skip everything here.\n*\n',
    { flag: 'wx' },
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
}

/**
 * `mkdir -p`, one level at a time. Node's `mkdir({ recursive: true })` spins forever on some
 * pseudo file systems (`/proc/nope` never returns), so the missing levels are created one by one
 * below the nearest ancestor that exists.
 */
async function makeDirectories(path: string): Promise<void> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    const found = await stat(current).catch(() => undefined);
    if (found) {
      if (!found.isDirectory())
        throw Object.assign(new Error(`${current} is not a directory`), { code: 'ENOTDIR' });
      break;
    }
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const level of missing) await mkdir(level);
}

/** A Levenshtein distance small enough for command names. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

/**
 * A first word that is not a command would otherwise reach the default (demo) command as "too
 * many arguments". Suggest the command that was meant, or `scan` for something that looks like a
 * domain.
 */
export function unknownCommandProblem(
  argv: readonly string[],
  commands: readonly string[],
): string | undefined {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || commands.includes(first)) return undefined;
  const closest = commands
    .map((command) => ({ command, distance: editDistance(first.toLowerCase(), command) }))
    .sort((a, b) => a.distance - b.distance)[0];
  if (closest && closest.distance <= 2)
    return `unknown command '${first}'. Did you mean '${closest.command}'?`;
  if (first.includes('.')) return `unknown command '${first}'. To scan it: npm start -- scan ${first}`;
  return `unknown command '${first}'. Commands: ${commands.join(', ')}`;
}

/** `--config FILE` (or `--config=FILE`) from argv, read before the commands are built. */
export function configFlag(argv: readonly string[]): string | undefined {
  for (const [index, arg] of argv.entries()) {
    if (arg === '--config') {
      const value = argv[index + 1];
      if (value === undefined || value.startsWith('-')) throw new UsageError('--config needs a FILE');
      return value;
    }
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

/** The runner needs Node 22 (aws-local-stepfunctions uses Promise.withResolvers). */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= 22) return undefined;
  return (
    `npm start needs Node.js 22 or later, and this is Node.js ${version}. ` +
    'Run it through npm (npm start, npm test, npx tsx ...): npm ci installs Node 22 (the node@22 package) ' +
    'and npm puts it first on the PATH of its scripts.'
  );
}

/** Everything standard input holds, once it ends (`--domains-file -`, `--emails-file -`). */
export async function readStandardInput(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** The bytes of `--domains-file` (`-`: standard input), or a usage error naming the flag, the path and why. */
export async function readDomainsFile(path: string): Promise<Uint8Array> {
  try {
    return path === '-' ? await readStandardInput() : await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`--domains-file ${path}: cannot be read (${code})`);
  }
}

/**
 * A domain given as a flag's value (`--check-domain`, `--orphan-domain`), checked by the very
 * function and settings that check each line of a `scan` list (`normalizeDomain`, with
 * `scan.allowSpecialUseDomains`), so one input gets one verdict and one reason everywhere.
 * Returns the normalised domain; a UsageError names the flag, the reason, and what was not done.
 */
export function domainFlag(
  value: string,
  flag: string,
  allowSpecialUse: readonly string[],
  notDone: string,
): string {
  try {
    return normalizeDomain(value, flag, { allowSpecialUse });
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(`${error.message}; ${notDone}`);
    throw error;
  }
}

/**
 * A list file (`--domains-file`, `--watchlist`) that is not UTF-8 is refused once, before any work,
 * naming its encoding and the command that converts it: the same check (and words) the intake
 * applies in AWS, where it refuses the whole list too.
 */
export function refuseUnlessUtf8(bytes: Uint8Array, flag: string, path: string): void {
  const problem = notUtf8Reason(bytes, { file: path });
  if (problem) throw new InvalidInputError(`${flag} ${path}`, problem);
}
