/**
 * A watchlist run's `summary.txt`: a row per row of the watchlist, the person by the slug of their
 * name (never an address), what became of them, and how many breaches their report counts, read
 * from its manifest (`recon.totalBreaches`); `no_results` counts none.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { terminalValue } from './terminal-text.ts';

/** The table, with the totals line the terminal prints under it. */
export async function watchlistTable(summary: WatchlistSummary, resultsRoot: string): Promise<string> {
  const rows: string[][] = [['row', 'person', 'result', 'breaches', 'report / reason']];
  for (const row of summary.rows) {
    const where = row.manifestKey ?? row.reconKey;
    const breaches =
      row.status === 'no_results'
        ? '0'
        : row.status === 'archived' && row.manifestKey
          ? await breachCount(join(resultsRoot, row.manifestKey))
          : '';
    const detail = row.error
      ? `${row.error.name}: ${row.error.message}`.slice(0, 200)
      : (row.reason ?? (where ? join(resultsRoot, where) : ''));
    rows.push([String(row.row), row.person?.slug ?? '', row.status, breaches, terminalValue(detail)]);
  }
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((cells) => (cells[column] ?? '').length))) ?? [];
  const lines = rows.map((cells) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  const c = summary.counts;
  return (
    `${lines.join('\n')}\n\n${c.rows} row(s): ${c.archived} archived, ${c.no_results} no results, ${c.failed} failed, ` +
    `${c.invalid} invalid, ${c.duplicate} duplicate; ${c.ignoredLines} blank or comment line(s)\n`
  );
}

/** The report's breach count as its manifest records it; `?` when the vendor gave none. */
async function breachCount(manifestPath: string): Promise<string> {
  try {
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
      recon?: { totalBreaches?: number | null };
    };
    const total = manifest.recon?.totalBreaches;
    return typeof total === 'number' ? String(total) : '?';
  } catch {
    return '?';
  }
}
