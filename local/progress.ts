/**
 * Progress output for `npm start`: one line per domain state change when the output is a log or
 * a pipe, a single self-updating status line on a terminal, and a summary table at the end.
 */
import type { VendorAttemptEvent } from '#core/vendor/types';
import type { DomainFinalState, ListSummary } from '#core/workflows/scan/contracts';

export type ProgressEvent =
  | {
      readonly type: 'list-prepared';
      readonly total: number;
      readonly invalid: number;
      readonly duplicate: number;
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
  | { readonly type: 'vendor-retry'; readonly attempt: VendorAttemptEvent & { readonly retryInMs: number } }
  | { readonly type: 'vendor-gave-up'; readonly attempt: VendorAttemptEvent }
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

/** Reports to a stream; on a TTY it redraws one status line instead of printing every transition. */
export function createConsoleReporter(out: Writable): ProgressListener {
  let total = 0;
  let done = 0;
  let failed = 0;
  const running = new Set<string>();
  const tty = out.isTTY === true;
  const statusLine = () => {
    const width = 24;
    const filled = total === 0 ? 0 : Math.round((done / total) * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    out.write(`\r[${bar}] ${done}/${total} done, ${running.size} running, ${failed} failed\u001b[K`);
  };
  /** A line that must be seen even on a terminal: it goes above the status line. */
  const writeLine = (line: string) => out.write(tty ? `\r\u001b[K${line}\n` : `${line}\n`);
  return (event) => {
    switch (event.type) {
      case 'list-prepared':
        total = event.total;
        out.write(
          `${event.total} domain(s) to scan; ${event.invalid} invalid and ${event.duplicate} duplicate line(s) skipped\n`,
        );
        break;
      case 'domain-state':
        running.add(event.domain);
        if (!tty)
          out.write(
            `  ${event.domain.padEnd(32)} ${event.state}${event.detail ? ` (${event.detail})` : ''}\n`,
          );
        break;
      case 'state-retry':
        writeLine(
          `  ${event.domain.padEnd(32)} ${event.state} failed (${event.error}); the state machine retries it (retry ${event.attempt}/${event.maxAttempts})`,
        );
        break;
      case 'vendor-retry':
      case 'vendor-gave-up':
        writeLine(`  vendor ${describeVendorAttempt(event)}`);
        break;
      case 'domain-done':
        running.delete(event.domain);
        done += 1;
        if (event.result !== 'succeeded') failed += 1;
        if (tty) {
          if (event.result !== 'succeeded') {
            out.write(
              `\r\u001b[K  ${event.domain}: ${event.result}${event.detail ? ` (${event.detail})` : ''}\n`,
            );
          }
        } else {
          out.write(
            `  ${event.domain.padEnd(32)} => ${event.result}${event.detail ? ` (${event.detail})` : ''}\n`,
          );
        }
        break;
    }
    if (tty) statusLine();
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
    return `${a.operation}: ${what}, retry ${a.attempt}/${a.maxAttempts - 1} in ${seconds(event.attempt.retryInMs)}${asked}`;
  }
  if (a.retryAfterMs !== undefined && a.failure === 'throttled' && a.attempt < a.maxAttempts) {
    return (
      `${a.operation}: ${what} asking to wait ${seconds(a.retryAfterMs)} (Retry-After), longer than the client ` +
      `waits inside one invocation; the call fails and the state machine's Retry rule decides when to try again ` +
      `(its own interval, not Retry-After: README "Retry-After")`
    );
  }
  return `${a.operation}: ${what} on attempt ${a.attempt}/${a.maxAttempts}; the client gives up`;
}

const FAILURE_STATES: readonly DomainFinalState[] = ['failed', 'timed_out', 'rejected', 'invalid'];

/** True when any domain or input line did not make it: exit code 1. */
export function summaryHasFailures(summary: ListSummary): boolean {
  return summary.rejected !== undefined || FAILURE_STATES.some((state) => summary.counts[state] > 0);
}

/** A plain-text table of every line's fate, for the end of a run. */
export function formatSummaryTable(summary: ListSummary, resultsDir: string | undefined): string {
  const rows: string[][] = [['line', 'domain', 'result', 'outputs / error']];
  for (const entry of summary.domains) {
    const where = entry.error
      ? `${entry.error.name}: ${entry.error.message}`
      : entry.manifestKey
        ? `${resultsDir ? `${resultsDir}/` : ''}${entry.outputPrefix ?? ''}`
        : '';
    rows.push([String(entry.line), entry.domain, entry.state, where.slice(0, 200)]);
  }
  for (const invalid of summary.invalid) {
    rows.push([String(invalid.line), invalid.text.slice(0, 40), 'invalid', invalid.reason]);
  }
  rows.sort((a, b) => (a === rows[0] ? -1 : b === rows[0] ? 1 : Number(a[0]) - Number(b[0])));
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  const c = summary.counts;
  if (summary.rejected) lines.push('', `The list was refused: ${summary.rejected.reason}`);
  if (summary.sampled) {
    lines.push(
      '',
      `Only the first ${summary.invalid.length} invalid lines are listed (see rejects.json); the counts cover every line.`,
    );
  }
  lines.push(
    '',
    `${c.lines} line(s): ${c.succeeded} succeeded, ${c.failed} failed, ${c.timed_out} timed out, ` +
      `${c.rejected} rejected, ${c.invalid} invalid, ${c.duplicate} duplicate, ${c.ignored} blank or comment`,
  );
  return `${lines.join('\n')}\n`;
}
