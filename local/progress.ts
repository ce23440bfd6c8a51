/**
 * Progress output for `npm start`. Two modes:
 *
 * - `verbose`: what each domain waits for (`waiting 22 s`), every vendor and state-machine retry
 *   as it happens, one line per domain when it finishes, and the full table at the end;
 * - `compact` (large lists, or `--quiet`): one status line with counts (retries included),
 *   redrawn on a terminal and printed at most every `intervalMs` into a pipe or log, then only the
 *   problems at the end.
 *
 * A terminal always gets the redrawn status line; problems are printed above it as they happen.
 */

import type { DomainFinalState, ListSummary } from '#lambdas/domain-list/contracts';
import type { VendorAttemptEvent } from '#lambdas/platform/vendor-api/types';
import { terminal } from './terminal-text.ts';

export type ProgressEvent =
  | {
      readonly type: 'list-prepared';
      readonly total: number;
      readonly invalid: number;
      readonly duplicate: number;
      /** The run's folder in the results bucket (`lists/<list>/<runId>/`). */
      readonly resultsPrefix: string;
    }
  | {
      readonly type: 'domain-state';
      readonly domain: string;
      readonly state: string;
      readonly detail?: string;
    }
  /** The state machine retries a failed Task state (its Retry rule, as in AWS). */
  | {
      readonly type: 'state-retry';
      readonly domain: string;
      readonly state: string;
      readonly error: string;
      readonly attempt: number;
      readonly maxAttempts: number;
    }
  /** The vendor client retries a call inside one invocation, or gives up on it. */
  | {
      readonly type: 'vendor-retry';
      readonly attempt: VendorAttemptEvent & { readonly retryInMs: number };
      /** What the client sleeps instead of retryInMs, when the run's timing replaces it (LocalTiming). */
      readonly overriddenMs?: number;
    }
  | {
      readonly type: 'vendor-gave-up';
      readonly attempt: VendorAttemptEvent;
      /** Why the fault behind it was injected on purpose (the demo's), when it was. */
      readonly injectedBecause?: string;
    }
  | {
      readonly type: 'domain-done';
      readonly domain: string;
      readonly result: 'succeeded' | 'failed' | 'timed_out' | 'rejected';
      readonly detail?: string;
    };

export type ProgressListener = (event: ProgressEvent) => void;

export interface Writable {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export type OutputMode = 'compact' | 'verbose';

/** Above this many domains `npm start` switches to compact output unless `--verbose` is given. */
export const COMPACT_THRESHOLD = 50;

/** The flag's mode, else compact above COMPACT_THRESHOLD domains. */
export function outputModeFor(total: number, requested?: OutputMode): OutputMode {
  return requested ?? (total > COMPACT_THRESHOLD ? 'compact' : 'verbose');
}

/** How often a pipe or log gets a progress line in compact mode. */
export const PROGRESS_INTERVAL_MS = 5_000;

export interface ReporterOptions {
  readonly mode: OutputMode;
  /** @default PROGRESS_INTERVAL_MS */
  readonly intervalMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface ConsoleReporter {
  readonly listener: ProgressListener;
  /** Ends the status line: a terminal's redrawn line is closed, a pipe gets the final counts. */
  finish(): void;
}

/** Reports to a stream in the given mode. */
export function createConsoleReporter(out: Writable, options: ReporterOptions): ConsoleReporter {
  const tty = out.isTTY === true;
  const intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const started = now();
  let lastPrinted = Number.NEGATIVE_INFINITY;
  let total = 0;
  let prepared = false;
  const counts = { succeeded: 0, failed: 0, timed_out: 0, rejected: 0 };
  const running = new Set<string>();
  let retries = 0;
  const statusText = () => {
    const done = counts.succeeded + counts.failed + counts.timed_out + counts.rejected;
    const seconds = Math.round((now() - started) / 1000);
    return (
      `${done}/${total} done: ${counts.succeeded} succeeded, ${counts.failed} failed, ` +
      `${counts.timed_out} timed out, ${counts.rejected} rejected; ${running.size} running` +
      `${retries > 0 ? `, ${retries} retries` : ''} (${seconds}s)`
    );
  };
  /** A line of its own in verbose mode; on a terminal it goes above the redrawn status line. */
  const verboseLine = (line: string) => {
    if (options.mode === 'verbose') out.write(tty ? `\r\u001b[K${line}\n` : `${line}\n`);
  };
  const redraw = () => out.write(`\r${statusText()}\u001b[K`);
  const listener: ProgressListener = (event) => {
    switch (event.type) {
      case 'list-prepared':
        total = event.total;
        prepared = true;
        out.write(
          `${event.total} domain(s) to scan; ${event.invalid} invalid and ${event.duplicate} duplicate line(s) skipped\n`,
        );
        break;
      case 'domain-state':
        running.add(event.domain);
        // Only states that say what comes next (a wait): the rest would be noise.
        if (event.detail)
          verboseLine(terminal`  ${event.domain.padEnd(32)} ${event.state} (${event.detail})`);
        break;
      case 'state-retry':
        retries += 1;
        verboseLine(
          terminal`  ${event.domain.padEnd(32)} ${event.state} failed (${event.error}); the state machine retries it (retry ${event.attempt}/${event.maxAttempts})`,
        );
        break;
      case 'vendor-retry':
        retries += 1;
        verboseLine(terminal`  vendor ${describeVendorAttempt(event)}`);
        break;
      case 'vendor-gave-up':
        verboseLine(terminal`  vendor ${describeVendorAttempt(event)}`);
        break;
      case 'domain-done': {
        running.delete(event.domain);
        counts[event.result] += 1;
        // The domain is the user's text and the detail the vendor's: escaped, so neither can move
        // the cursor or fake a line (local/terminal-text.ts).
        const detail = event.detail ? terminal` (${event.detail})` : '';
        const line = `${terminal`  ${event.domain.padEnd(32)} => ${event.result}`}${detail}\n`;
        if (options.mode === 'verbose' || (tty && event.result !== 'succeeded')) {
          out.write(tty ? `\r\u001b[K${line}` : line);
        }
        break;
      }
    }
    if (tty) redraw();
    else if (options.mode === 'compact' && prepared && now() - lastPrinted >= intervalMs) {
      lastPrinted = now();
      out.write(`${statusText()}\n`);
    }
  };
  return {
    listener,
    finish() {
      if (tty) out.write('\n');
      else if (options.mode === 'compact' && prepared) out.write(`${statusText()}\n`);
    },
  };
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;

/**
 * `scan.getReport: HTTP 500, retry 2/5 in 1.2 s`, `scan.getStatus: request timed out after 30 s,
 * retry 1/5 in 0.4 s`, or why the client gave up, including a Retry-After it would not wait for.
 */
export function describeVendorAttempt(
  event: Extract<ProgressEvent, { type: 'vendor-retry' | 'vendor-gave-up' }>,
): string {
  const a = event.attempt;
  const what =
    a.failure === 'timeout'
      ? `request timed out after ${seconds(a.timeoutMs)}`
      : a.status !== undefined
        ? `HTTP ${a.status}`
        : `${a.errorCode ?? a.failure}`;
  if (event.type === 'vendor-retry') {
    const asked = a.retryAfterMs === undefined ? '' : ` (Retry-After ${seconds(a.retryAfterMs)})`;
    const backoff = `${seconds(event.attempt.retryInMs)}${asked}`;
    const wait =
      event.overriddenMs === undefined
        ? `in ${backoff}`
        : `in ${event.overriddenMs} ms (overridden; the backoff says ${backoff})`;
    return `${a.operation}: ${what}, retry ${a.attempt}/${a.maxAttempts - 1} ${wait}`;
  }
  if (a.retryAfterMs !== undefined && a.failure === 'throttled' && a.attempt < a.maxAttempts) {
    const then =
      a.operation === 'scan.startScan'
        ? 'StartScan hands the wait to the state machine, which waits Retry-After plus jitter in WaitForStartSlot, then starts again'
        : `the call fails and the state machine's Retry rule decides when to try again (its own interval, not Retry-After)`;
    return (
      `${a.operation}: ${what} asking to wait ${seconds(a.retryAfterMs)} (Retry-After), longer than the client ` +
      `waits inside one invocation; ${then}: docs/local-runs.md "Retry-After"`
    );
  }
  const injected = event.injectedBecause ? ` (injected on purpose: ${event.injectedBecause})` : '';
  return `${a.operation}: ${what} on attempt ${a.attempt}/${a.maxAttempts}; the client gives up${injected}`;
}

const FAILURE_STATES: readonly DomainFinalState[] = ['failed', 'timed_out', 'rejected', 'invalid'];

/** True when any domain or input line did not make it: exit code 1. */
export function summaryHasFailures(summary: ListSummary): boolean {
  return summary.rejected !== undefined || FAILURE_STATES.some((state) => summary.counts[state] > 0);
}

export interface TableOptions {
  /** Prefixed to each output prefix (the local folder of the results bucket). */
  readonly resultsDir?: string;
  /** How a line of the uploaded list is shown: a file line, or `arg N` for a command-line domain. */
  readonly lineLabel?: (line: number) => string;
}

/** Line `n` of a list that is `fileLines` lines of a file followed by command-line domains. */
export function lineLabeller(fileLines: number): (line: number) => string {
  return (line) => (line <= fileLines ? String(line) : `arg ${line - fileLines}`);
}

type SummaryRow = ListSummary['domains'][number];

function outputsOrError(entry: SummaryRow, options: TableOptions, label: (line: number) => string): string {
  if (entry.state === 'duplicate' && entry.duplicateOf !== undefined) {
    return `duplicate of ${describeLine(label(entry.duplicateOf))}`;
  }
  if (entry.error) return `${entry.error.name}: ${entry.error.message}`.slice(0, 200);
  if (entry.manifestKey)
    return `${options.resultsDir ? `${options.resultsDir}/` : ''}${entry.outputPrefix ?? ''}`;
  return '';
}

/** `3` reads "line 3"; `arg 2` reads itself. */
function describeLine(label: string): string {
  return label.startsWith('arg ') ? label : `line ${label}`;
}

function alignRows(rows: readonly (readonly string[])[]): string[] {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Every row of the summary, domains and invalid lines, in line order. */
function tableRows(summary: ListSummary, options: TableOptions): { line: number; cells: string[] }[] {
  const label = options.lineLabel ?? String;
  const rows: { line: number; cells: string[] }[] = [];
  for (const entry of summary.domains) {
    rows.push({
      line: entry.line,
      cells: [label(entry.line), entry.domain, entry.state, outputsOrError(entry, options, label)],
    });
  }
  for (const invalid of summary.invalid) {
    rows.push({
      line: invalid.line,
      cells: [label(invalid.line), invalid.text.slice(0, 40), 'invalid', invalid.reason],
    });
  }
  return rows.sort((a, b) => a.line - b.line);
}

const HEADER_ROW = ['line', 'domain', 'result', 'outputs / error'];

/** The totals line and the notes that go with it (refused list, sampled rows). */
export function formatTotals(summary: ListSummary): string {
  const lines: string[] = [];
  const c = summary.counts;
  if (summary.rejected) lines.push(`The list was refused: ${summary.rejected.reason}`);
  if (summary.sampled) {
    lines.push(
      `Only the first ${summary.invalid.length} invalid and duplicate lines are listed (see rejects.json); the counts cover every line.`,
    );
  }
  const header = summary.header ? 1 : 0;
  lines.push(
    `${c.lines} line(s): ${c.succeeded} succeeded, ${c.failed} failed, ${c.timed_out} timed out, ` +
      `${c.rejected} rejected, ${c.invalid} invalid, ${c.duplicate} duplicate, ${c.ignored - header} blank or comment` +
      (summary.header ? `, CSV header on line ${summary.header.line}` : ''),
  );
  const settled = summary.settledStarts;
  if (settled) {
    lines.push(
      `Starts whose answer was lost, settled from the vendor's listing: ${settled.adopted} adopted, ` +
        `${settled.retried} started again, ${settled.unresolved} unresolved (rejected; reconciliation links what the vendor ran)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A plain-text table of every line's fate, for the end of a verbose run and for summary.txt. */
export function formatSummaryTable(summary: ListSummary, options: TableOptions = {}): string {
  const lines = alignRows([HEADER_ROW, ...tableRows(summary, options).map((row) => row.cells)]);
  return `${lines.join('\n')}\n\n${formatTotals(summary)}`;
}

export interface ProblemOptions extends TableOptions {
  /** Invalid lines and duplicate groups listed before "and N more". @default 20 */
  readonly maxListed?: number;
}

/**
 * Only what went wrong, for compact mode: every failed, timed-out and rejected domain (each one
 * needs action), then the first invalid lines and the duplicates grouped by the line they repeat.
 */
export function formatProblems(summary: ListSummary, options: ProblemOptions = {}): string {
  const label = options.lineLabel ?? String;
  const maxListed = options.maxListed ?? 20;
  const out: string[] = [];
  const failed = summary.domains.filter(
    (d) => d.state === 'failed' || d.state === 'timed_out' || d.state === 'rejected',
  );
  if (failed.length > 0) {
    out.push(`Domains that did not succeed (${failed.length}):`);
    out.push(
      ...alignRows([
        HEADER_ROW,
        ...failed.map((d) => [label(d.line), d.domain, d.state, outputsOrError(d, options, label)]),
      ]).map((line) => `  ${line}`),
    );
  }
  if (summary.counts.invalid > 0) {
    out.push(`Invalid lines (${summary.counts.invalid}):`);
    for (const invalid of summary.invalid.slice(0, maxListed)) {
      out.push(`  ${describeLine(label(invalid.line))}: ${invalid.text.slice(0, 40)}: ${invalid.reason}`);
    }
    const more = summary.counts.invalid - Math.min(maxListed, summary.invalid.length);
    if (more > 0) out.push(`  ... and ${more} more`);
  }
  if (summary.counts.duplicate > 0) {
    const groups = new Map<number, { domain: string; lines: string[] }>();
    for (const d of summary.domains) {
      if (d.state !== 'duplicate' || d.duplicateOf === undefined) continue;
      const group = groups.get(d.duplicateOf) ?? { domain: d.domain, lines: [] };
      group.lines.push(label(d.line));
      groups.set(d.duplicateOf, group);
    }
    out.push(`Duplicate lines (${summary.counts.duplicate}), skipped:`);
    for (const [first, group] of [...groups].slice(0, maxListed)) {
      out.push(
        `  ${group.domain}: ${group.lines.map(describeLine).join(', ')} (duplicate of ${describeLine(label(first))})`,
      );
    }
    if (groups.size > maxListed) out.push(`  ... and ${groups.size - maxListed} more domain(s) repeated`);
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

/** What a scan run prints once its scans are done, and the full table it keeps as summary.txt. */
export interface ScanRunEnding {
  /** Every line's fate: printed in verbose mode, always kept. */
  readonly table: string;
  /** What the terminal gets: the table (verbose), or only the problems and the totals (compact). */
  readonly printed: string;
}

export function scanRunEnding(summary: ListSummary, mode: OutputMode, options: TableOptions): ScanRunEnding {
  const table = formatSummaryTable(summary, options);
  if (mode === 'verbose') return { table, printed: `\n${table}` };
  const problems = formatProblems(summary, options);
  return { table, printed: `\n${problems}${problems ? '\n' : ''}${formatTotals(summary)}` };
}
