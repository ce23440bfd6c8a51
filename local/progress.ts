/**
 * Progress output for `npm start`: one line per domain state change when the output is a log or
 * a pipe, a single self-updating status line on a terminal, and a summary table at the end.
 */
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
