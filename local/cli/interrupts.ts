/**
 * Ctrl-C, SIGTERM and a closed output pipe (`npm start | head`) end a local run without losing what
 * it finished. Two ways, by what the run can do:
 *
 * - A run that can stop itself (a scan list: `onStopRequest`) is asked to stop: it starts nothing
 *   new, stops what is in flight at its next step, writes its summary naming what did not finish,
 *   and exports everything as a normal run does; the process then exits 128 + the signal.
 * - Otherwise, or on a second Ctrl-C, each run's registered cleanup (`onInterrupt`) runs at once,
 *   synchronously (the process exits right after): it keeps every object written so far under
 *   `--out` and removes only the embedded S3's scratch, then says in one line what it did.
 *
 * A run killed harder than that (SIGKILL, a crash) leaves its embedded S3 folder: the next run
 * into the same `--out` exports what it holds (`rescueLeftovers`), and only then removes it.
 */
import { type Dirent, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ExportReport, rescueStoredObjects } from '../output/stored-objects.ts';
import { complain } from '../output/terminal-text.ts';

export interface Interruption {
  /** `SIGINT`, `SIGTERM` or `closed output pipe`. */
  readonly cause: string;
  /** The shell's convention: 128 + the signal's number (SIGPIPE for a closed pipe). */
  readonly exitCode: number;
}

/** Undoes a run's scratch and says what it did (a short clause), or nothing. */
export type InterruptCleanup = (interruption: Interruption) => string | undefined;

const cleanups = new Set<InterruptCleanup>();

/** Registers `cleanup` until the returned function is called (when the run ends normally). */
export function onInterrupt(cleanup: InterruptCleanup): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Runs every registered cleanup and returns the one line to print. */
export function cleanUpAfter(interruption: Interruption): string {
  const done: string[] = [];
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      const said = cleanup(interruption);
      if (said) done.push(said);
    } catch (error) {
      done.push(`a cleanup failed (${(error as Error).message})`);
    }
  }
  return `interrupted (${interruption.cause}): stopped before the run's summary${done.length > 0 ? `; ${done.join('; ')}` : ''}\n`;
}

/** Told once when the user asks the run to stop; says what the run does now (a short clause). */
export type StopListener = (interruption: Interruption) => string;

const stopListeners = new Set<StopListener>();
let stopRequest: Interruption | undefined;

/** Registers a run that can stop itself, until the returned function is called. */
export function onStopRequest(listener: StopListener): () => void {
  stopListeners.add(listener);
  return () => stopListeners.delete(listener);
}

/**
 * Runs `body` with a signal that a stop request (the first Ctrl-C) aborts, its reason the
 * Interruption; `doing` says what the run does then.
 */
export async function withStopRequest<T>(doing: string, body: (stop: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const forget = onStopRequest((interruption) => {
    stop.abort(interruption);
    return doing;
  });
  try {
    return await body(stop.signal);
  } finally {
    forget();
  }
}

/**
 * Asks every run that can stop itself to stop. Returns the line to print, or undefined when no
 * such run is going on (the caller then interrupts at once).
 */
export function requestStop(interruption: Interruption): string | undefined {
  if (stopListeners.size === 0) return undefined;
  stopRequest ??= interruption;
  const said = [...stopListeners].map((listener) => listener(interruption));
  return `interrupting (${interruption.cause}): ${said.join('; ')} (Ctrl-C again to stop at once, keeping what is written)\n`;
}

/** The stop the user asked for during this command, if any; cleared, so the next command starts afresh. */
export function takeStopRequest(): Interruption | undefined {
  const taken = stopRequest;
  stopRequest = undefined;
  return taken;
}

/** For the CLI's own process only: tests run the CLI in-process and must not exit. */
export function installInterruptHandlers(): void {
  let stopping = false;
  const say = (line: string) => {
    // stderr may be the closed pipe too (`2>&1 | head`); the exit code still tells.
    try {
      complain(line);
    } catch {}
  };
  const interrupt = (interruption: Interruption) => {
    if (!stopping) {
      stopping = true;
      const line = requestStop(interruption);
      if (line !== undefined) {
        say(line);
        return;
      }
    }
    say(cleanUpAfter(interruption));
    process.exit(interruption.exitCode);
  };
  process.on('SIGINT', () => interrupt({ cause: 'SIGINT', exitCode: 130 }));
  process.on('SIGTERM', () => interrupt({ cause: 'SIGTERM', exitCode: 143 }));
  // Node ignores SIGPIPE; a write to a closed pipe fails with EPIPE on the stream instead.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      // Nobody reads this stream any more: what the run still says there goes nowhere, and the
      // run, asked to stop, still exports and writes its summary files.
      stream.write = (() => true) as typeof stream.write;
      if (!stopping) interrupt({ cause: 'closed output pipe', exitCode: 141 });
    });
  }
}

/** `.s3-<pid>-XXXXXX`: the embedded S3's folder of the process `pid`. */
export function s3FolderPrefix(pid: number = process.pid): string {
  return `.s3-${pid}-`;
}

/** Older than this, a leftover without an owner to ask is taken as abandoned. */
const ABANDONED_AFTER_MS = 10 * 60_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ageMs(path: string): number {
  return Date.now() - statSync(path).mtimeMs;
}

export interface Leftovers {
  /** Embedded S3 folders of runs that are gone: what each held, exported, before it was removed. */
  readonly rescued: readonly { readonly path: string; readonly report: ExportReport }[];
  /** Empty run folders of older versions, removed. */
  readonly removed: readonly string[];
}

/**
 * What interrupted runs left in `out`. Embedded S3 folders whose process is gone (SIGKILL, a
 * crash; or, from older versions without the pid in the name, untouched for 10 minutes) hold
 * results the user paid for: every object in them is exported to `out` as the run would have
 * (nothing of the user's replaced), and only then is the folder removed. Run folders under
 * `<out>/<results>/lists/` with nothing in them (a run folder is only created once something is
 * written to it, so an empty one is an older version's) are removed.
 */
export function rescueLeftovers(out: string, resultsBucket: string): Leftovers {
  const rescued: { path: string; report: ExportReport }[] = [];
  const removed: string[] = [];
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith('.s3-')) continue;
    const path = join(out, entry.name);
    const owner = /^\.s3-(\d+)-/.exec(entry.name)?.[1];
    const abandoned = owner === undefined ? ageMs(path) > ABANDONED_AFTER_MS : !isAlive(Number(owner));
    if (abandoned) rescued.push({ path, report: rescueStoredObjects(path, out) });
  }
  const lists = join(out, resultsBucket, 'lists');
  const emptyFolders = (dir: string): string[] => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    if (entries.length === 0) return [dir];
    return entries.filter((e) => e.isDirectory()).flatMap((e) => emptyFolders(join(dir, e.name)));
  };
  for (const folder of emptyFolders(lists)) {
    if (folder === lists || ageMs(folder) <= ABANDONED_AFTER_MS) continue;
    rmSync(folder, { recursive: true, force: true });
    removed.push(folder);
  }
  return { rescued, removed };
}
