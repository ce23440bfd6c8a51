/**
 * "No key value is stored", checked over every run the suite makes rather than in a few
 * chosen tests: a process-wide watch that knows every key the runs used and searches everything
 * they produced for those exact values.
 *
 * The keys: every key a simulator of this process issues (its first, rotated and replaced keys,
 * `onSimulatorKey`), and the `VENDOR_API_KEY` a CLI run is given. The addresses: every address a
 * recon sent to a simulator of this process (`onSimulatorAddresses`), in any case and with its
 * domain in punycode and Unicode, searched for everywhere but the person's own records (request
 * objects, the report name kept beside them, the report ZIP). The outputs, each searched as it is
 * produced (a key exists before any text can hold it), objects' metadata files (content type,
 * user metadata) included:
 * - every object of every embedded S3 as it closes, its bytes and its key (`onEmbeddedS3Close`):
 *   the CLI's and the workflow fixtures' alike;
 * - every task input and result of every local execution: the state payloads and so the execution
 *   history (`onTaskPayload`);
 * - every terminal line and every file under `--out` of a CLI run, in-process or a child process
 *   (test/local/cli-run.ts calls {@link watchTerminal} and {@link watchOutput}); handler log lines
 *   of the CLI land there;
 * - every line a test's memory logger is given, as the deployed logger would write it to CloudWatch
 *   (test/kit/loggers.ts).
 * test/setup.ts installs the watch in every test file and fails the file, after its last test, on
 * any leak it found, naming where and which key (by its position, never its value).
 */
import { createReadStream, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { domainToASCII, domainToUnicode } from 'node:url';
import { onTaskPayload } from '#local/runner/task-binding';
import { onEmbeddedS3Close } from '#local/services/s3/embedded-s3';
import { onSimulatorKey } from '../../local/simulator/credentials.ts';
import { onSimulatorAddresses } from '../../local/simulator/reports.ts';

/** One key value or address found where it must never be. */
export interface Leak {
  /** What held it: `terminal (stdout) of scan …`, `S3 object pipeline-results/…`, `payload: …`. */
  readonly where: string;
  /** Which watched key (the first watched is 1), or 0 for an address: the value itself is never repeated. */
  readonly key: number;
  /** Which watched address (the first watched is 1), when an address was found. */
  readonly address?: number;
}

/** Any simulator key, for a child process whose simulator's key this process never saw. */
export const SIMULATOR_KEY_SHAPE = /sk_sim_[0-9a-f]{32}/;

const keys: string[] = [];
/**
 * The watched keys by their first 4 characters: a worker's keys number in the hundreds and mostly
 * share a prefix (`sk_sim_…`), so a text is searched once per prefix, not once per key.
 */
const byPrefix = new Map<string, number[]>();
const PREFIX = 4;
const leaks: Leak[] = [];
let checks = 0;

/**
 * Adds key values a run uses (values shorter than 8 characters cannot be told from words), each also
 * lower-cased: a slug of a name holding the key would hold it so.
 */
export function watchKeys(...values: (string | undefined)[]): void {
  for (const value of values) {
    if (value === undefined || value.length < 8) continue;
    for (const form of new Set([value, value.toLowerCase()])) {
      if (keys.includes(form)) continue;
      keys.push(form);
      const prefix = form.slice(0, PREFIX);
      byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), keys.length - 1]);
    }
  }
}

/**
 * The addresses recons were sent, each in the forms a vendor echoes and a careless store keeps:
 * lower-cased, with its domain in punycode and in Unicode.
 */
const addresses: string[] = [];

/** Adds the addresses a run sent (as a recon sends them) to the watch, in each of their forms. */
export function watchAddresses(...values: readonly string[]): void {
  for (const value of values) {
    const at = value.lastIndexOf('@');
    if (at < 1) continue;
    const local = value.slice(0, at).toLowerCase();
    const ascii = domainToASCII(value.slice(at + 1));
    const domains = [value.slice(at + 1), ascii, ascii === '' ? '' : domainToUnicode(ascii)];
    for (const domain of new Set(domains.filter((form) => form !== ''))) {
      const form = `${local}@${domain.toLowerCase()}`;
      if (!addresses.includes(form)) addresses.push(form);
    }
  }
}

/**
 * The person's own records, where their addresses are kept by design: what an operator uploads to
 * an input bucket (`pipeline-input`, a watchlist's `breach-input`), the request objects (and their
 * shards), the exact report name kept beside them, and the vendor's report ZIP about them.
 */
const PERSONAL_RECORD =
  /(?:^|[ :])[a-z0-9.-]*-input\/|\/requests\/|\.report-name\.json|\.zip(?:\._S3rver_|$| )/;

/** The indexes of the watched addresses `text` holds, in any case. */
function addressesIn(text: string): number[] {
  if (addresses.length === 0 || !text.includes('@')) return [];
  const lowered = text.toLowerCase();
  return addresses.flatMap((form, index) => (lowered.includes(form) ? [index] : []));
}

/** Records every watched address `text` holds, unless `where` is the person's own record. */
function checkAddresses(where: string, text: string): void {
  if (PERSONAL_RECORD.test(where)) return;
  for (const index of addressesIn(text)) {
    leaks.push({
      where: where.includes('@') ? '(a name holding an address)' : where,
      key: 0,
      address: index + 1,
    });
  }
}

/** The indexes of the watched keys `text` holds. */
function keysIn(text: string): Set<number> {
  const found = new Set<number>();
  for (const [prefix, group] of byPrefix) {
    for (let at = text.indexOf(prefix); at !== -1; at = text.indexOf(prefix, at + 1)) {
      for (const index of group) if (text.startsWith(keys[index] ?? '', at)) found.add(index);
    }
  }
  return found;
}

/** A leak at `where`, itself shown without the keys it may hold (a path can be one). */
function recordLeak(where: string, index: number): void {
  let shown = where;
  for (const held of keysIn(where)) shown = shown.split(keys[held] ?? '').join(`[key ${held + 1}]`);
  leaks.push({ where: shown, key: index + 1 });
}

/** Searches `text` for every watched key; a leak is recorded as coming from `where`. */
export function checkText(where: string, text: string): void {
  checks += 1;
  for (const index of keysIn(text)) recordLeak(where, index);
  checkAddresses(where, text);
}

/**
 * Searches a file's bytes, streamed (a report can be hundreds of MiB), with each chunk's tail
 * carried over so a key split across two chunks is still found. Keys are printable ASCII (the
 * simulator takes no other), so a byte is a latin1 character.
 */
async function checkFile(where: string, path: string): Promise<void> {
  checks += 1;
  const watchingAddresses = addresses.length > 0 && !PERSONAL_RECORD.test(where);
  if (keys.length === 0 && !watchingAddresses) return;
  const overlap =
    Math.max(0, ...keys.map((key) => key.length), ...addresses.map((form) => form.length * 4)) - 1;
  const found = new Set<number>();
  const foundAddresses = new Set<number>();
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path)) {
    const window = Buffer.concat([carry, chunk as Buffer]);
    for (const index of keysIn(window.toString('latin1'))) found.add(index);
    // Addresses may hold non-ASCII (a Unicode domain): searched in the UTF-8 reading.
    if (watchingAddresses)
      for (const index of addressesIn(window.toString('utf8'))) foundAddresses.add(index);
    carry = window.subarray(Math.max(0, window.length - overlap));
  }
  for (const index of found) recordLeak(where, index);
  for (const index of foundAddresses) leaks.push({ where, key: 0, address: index + 1 });
}

/** Every file under `dir`, its path relative to it (`/`-separated) and absolute. */
async function filesIn(dir: string): Promise<{ relative: string; path: string }[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { relative: relative(dir, path).split(sep).join('/'), path };
    });
}

/** Every file under `dir`: its name (an S3 key, for an exported object) and its bytes. */
export async function checkDirectory(what: string, dir: string): Promise<void> {
  for (const file of await filesIn(dir)) {
    const where = `${what} ${file.relative}`;
    checkText(`${where} (its name)`, file.relative);
    await checkFile(where, file.path);
  }
}

/**
 * A CLI run's terminal lines. A child process's simulator issued its keys in another process, so
 * for one (`childProcess`) the simulator's key shape stands for them.
 */
export function watchTerminal(
  argv: readonly string[],
  run: { readonly stdout: string; readonly stderr: string },
  childProcess = false,
): void {
  const what = `npm start -- ${argv.slice(0, 2).join(' ')}`;
  for (const [stream, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ] as const) {
    checkText(`terminal (${stream}) of ${what}`, text);
    if (childProcess && SIMULATOR_KEY_SHAPE.test(text)) {
      leaks.push({ where: `terminal (${stream}) of ${what}`, key: 0 });
    }
  }
}

/** What a CLI run left under its `--out`: every file, its name and its bytes. */
export async function watchOutput(argv: readonly string[], out: string): Promise<void> {
  await checkDirectory(`file of npm start -- ${argv.slice(0, 2).join(' ')}:`, out);
}

/** The `--out` of a CLI argv (the last one given), if any. */
export function outFlagOf(argv: readonly string[]): string | undefined {
  const at = argv.lastIndexOf('--out');
  if (at >= 0) return argv[at + 1];
  return argv.findLast((arg) => arg.startsWith('--out='))?.slice('--out='.length);
}

const INSTALLED = Symbol.for('security-pipeline.leak-watch');

/**
 * Subscribes the watch to the simulators, the embedded S3s and the local executions of this
 * process, once (test files share a worker's module graph, and setup runs per file).
 */
export function installLeakWatch(): void {
  const scope = globalThis as { [INSTALLED]?: true };
  if (scope[INSTALLED]) return;
  scope[INSTALLED] = true;
  onSimulatorKey((key) => watchKeys(key));
  onSimulatorAddresses((sent) => watchAddresses(...sent));
  onTaskPayload((what, json) => checkText(`state payload: ${what}`, json));
  onEmbeddedS3Close((directory) => checkDirectory('S3 object', directory));
}

/**
 * The leaks found since the last call, and how many texts and files were searched for how many
 * keys. The keys are kept: a simulator may outlive the file that started it (a shared fixture), and
 * a key of an earlier file found in a later one's output is a leak all the same.
 */
export function takeLeaks(): { leaks: Leak[]; checks: number; keys: number } {
  const taken = { leaks: leaks.splice(0), checks, keys: keys.length };
  checks = 0;
  return taken;
}
