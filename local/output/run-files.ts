/**
 * What `npm start` keeps of a run besides the S3 mirror, in the run's own folder
 * (`<out>/<results bucket>/lists/<list>/<runId>/`, next to summary.json):
 *
 * - `summary.txt`: the full table, the one a verbose run prints;
 * - `handler-log.jsonl`: the handlers' log lines (at `--log-level`), never the terminal, so they
 *   cannot interleave with the progress and the table; written only when something was logged;
 *
 * and `<out>/latest`, which points at the newest run folder.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { Option } from 'commander';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import { redactText } from '#lambdas/platform/redaction/redact';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import { say } from './terminal-text.ts';

export const SUMMARY_TABLE_FILE = 'summary.txt';
export const HANDLER_LOG_FILE = 'handler-log.jsonl';
export const LATEST_LINK = 'latest';

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof LEVELS;

export interface FileLogger {
  readonly logger: PipelineLogger;
  /** Lines at warn or above so far: the run says how many, and where they are. */
  readonly warnings: () => number;
  /** Lines logged so far (none: no file is written). */
  readonly lines: () => number;
  /** From now on lines go to `path`; lines logged before are written there first. */
  attach(path: string): void;
  /** Lines logged that found no file yet: a run that never attached one must still keep them. */
  readonly unattached: () => number;
  /** The file lines go to, once attached (it exists only once a line was written). */
  readonly path: () => string | undefined;
  /** Flushes and closes the file; lines that never found a file go to `fallback`. */
  close(fallback: { write(text: string): unknown }): Promise<string | undefined>;
}

/**
 * JSON lines at or above `level`, held in memory until the run folder is known (only the prepare
 * step logs before that), then appended to its log file. Every line passes `redactText` (with the
 * known secrets) as a last defence, as the Lambda loggers do.
 */
export function createFileLogger(level: LogLevel, secrets: () => string[]): FileLogger {
  const pending: string[] = [];
  let path: string | undefined;
  let stream: WriteStream | undefined;
  let count = 0;
  let warnings = 0;
  const write = (line: string) => {
    if (path === undefined) {
      pending.push(line);
      return;
    }
    if (stream === undefined) {
      // Synchronously, so the stream never opens before its folder exists; and only now, so a run
      // folder exists only once it holds something (an empty one is an interrupted older run's).
      mkdirSync(dirname(path), { recursive: true });
      stream = createWriteStream(path, { flags: 'a' });
    }
    stream.write(line);
  };
  const emit = (lineLevel: LogLevel) => (message: string, extra?: Record<string, unknown>) => {
    if (LEVELS[lineLevel] < LEVELS[level]) return;
    count += 1;
    if (LEVELS[lineLevel] >= LEVELS.warn) warnings += 1;
    const line = jsonText({ level: lineLevel.toUpperCase(), message, ...extra });
    write(`${redactText(line, secrets())}\n`);
  };
  return {
    logger: { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') },
    warnings: () => warnings,
    lines: () => count,
    unattached: () => (path === undefined ? pending.length : 0),
    path: () => path,
    attach(target) {
      path = target;
      for (const line of pending.splice(0)) write(line);
    },
    async close(fallback) {
      for (const line of pending.splice(0)) fallback.write(line);
      const closing = stream;
      const closed = path;
      // Anything logged after this (a late teardown) goes to the fallback instead.
      stream = undefined;
      path = undefined;
      if (!closing) return undefined;
      await new Promise<void>((done, fail) => {
        closing.once('error', fail);
        closing.end(done);
      });
      return closed;
    },
  };
}

export async function writeSummaryTable(runFolder: string, table: string): Promise<string> {
  const path = join(runFolder, SUMMARY_TABLE_FILE);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, table, 'utf8');
  return path;
}

export type LatestPointer =
  | { readonly kind: 'symlink'; readonly path: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'kept'; readonly path: string; readonly reason: string };

/**
 * Points `<out>/latest` at the run folder: a relative symlink (it survives moving the whole output
 * folder), or where the OS refuses symlinks (Windows without developer mode) a small text file
 * holding the run folder's absolute path. It is swapped in with a rename, so a reader never sees it
 * missing; a real folder or file the user put there is never replaced.
 */
export async function pointLatestAt(outDir: string, runFolder: string): Promise<LatestPointer> {
  const path = resolve(outDir, LATEST_LINK);
  const existing = await lstat(path).catch(() => undefined);
  if (existing && !existing.isSymbolicLink() && !(existing.isFile() && existing.size <= 4096)) {
    return { kind: 'kept', path, reason: 'it exists and is not a link or pointer file this tool wrote' };
  }
  const temporary = `${path}.new-${process.pid}`;
  await rm(temporary, { force: true });
  try {
    await symlink(relative(outDir, runFolder) || '.', temporary, 'dir');
    await rename(temporary, path);
    return { kind: 'symlink', path };
  } catch {
    await rm(temporary, { force: true });
    await writeFile(temporary, `${resolve(runFolder)}\n`, 'utf8');
    await rename(temporary, path);
    return { kind: 'file', path };
  }
}

/** The `Log:` line of a run's report; empty when nothing was logged. */
export function logLine(logPath: string | undefined, logs: Pick<FileLogger, 'lines' | 'warnings'>): string {
  return logPath
    ? `Log:     ${logPath} (${logs.lines()} line(s), ${logs.warnings()} warning(s) or error(s))\n`
    : '';
}

/** The `Latest:` line: where `<out>/latest` now points, or why it was left alone. */
export function latestLine(latest: LatestPointer, runFolder: string): string {
  return latest.kind === 'kept'
    ? `Latest:  not updated: ${latest.path}: ${latest.reason}\n`
    : `Latest:  ${latest.path} -> ${runFolder}${latest.kind === 'file' ? ' (a pointer file: this system refused a symlink)' : ''}\n`;
}

/** Tells about every file of the user's that the export left alone because it differs. */
export function reportKept(exported: { readonly kept: readonly string[] }): void {
  for (const kept of exported.kept) {
    say(`Kept your existing ${kept}: it differs from this run's copy, which was not written.\n`);
  }
}

/** `--log-level`, as every command offers it: the handler log's level, into its file in the run folder. */
export function logLevelOption(): Option {
  return new Option('--log-level <level>', `handler log level, into ${HANDLER_LOG_FILE} in the run folder`)
    .choices(['debug', 'info', 'warn', 'error'])
    .default('warn');
}
