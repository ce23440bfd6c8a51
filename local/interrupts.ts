/**
 * Ctrl-C, SIGTERM and a closed output pipe (`npm start | head`) end a local run at once, but not
 * silently and not leaving its scratch behind: each run registers what to undo, and the interrupt
 * runs it (synchronously: the process exits right after), then says in one line what it did.
 * A run killed harder than that (SIGKILL, a crash) is cleaned up by the next run
 * (`removeLeftovers`).
 */
import { type Dirent, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

/** For the CLI's own process only: tests run the CLI in-process and must not exit. */
export function installInterruptHandlers(): void {
  let interrupting = false;
  const interrupt = (interruption: Interruption) => {
    if (interrupting) return;
    interrupting = true;
    const line = cleanUpAfter(interruption);
    // stderr may be the closed pipe too (`2>&1 | head`); the exit code still tells.
    try {
      process.stderr.write(line);
    } catch {}
    process.exit(interruption.exitCode);
  };
  process.once('SIGINT', () => interrupt({ cause: 'SIGINT', exitCode: 130 }));
  process.once('SIGTERM', () => interrupt({ cause: 'SIGTERM', exitCode: 143 }));
  // Node ignores SIGPIPE; a write to a closed pipe fails with EPIPE on the stream instead.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') interrupt({ cause: 'closed output pipe', exitCode: 141 });
      else throw error;
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

/**
 * What interrupted runs left in `out`: embedded S3 folders whose process is gone (or, from older
 * versions without the pid in the name, untouched for 10 minutes), and run folders under
 * `<out>/<results>/lists/` with nothing in them (a run folder is only created once something is
 * written to it, so an empty one is an older version's). Returns the paths removed.
 */
export function removeLeftovers(out: string, resultsBucket: string): string[] {
  const removed: string[] = [];
  for (const entry of readdirSync(out, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith('.s3-')) continue;
    const path = join(out, entry.name);
    const owner = /^\.s3-(\d+)-/.exec(entry.name)?.[1];
    const abandoned = owner === undefined ? ageMs(path) > ABANDONED_AFTER_MS : !isAlive(Number(owner));
    if (abandoned) {
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    }
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
  return removed;
}
