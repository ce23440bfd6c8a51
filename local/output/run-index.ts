/**
 * `index.html` in a scan run's folder (so `<out>/latest/index.html`): the run at a glance, for a
 * browser. One self-contained file: its style inline, no script, nothing fetched from a network;
 * its links are relative, to each scan's manifest and outputs beside it under `--out`. Every text
 * that came from the list or the vendor is escaped, as the terminal escapes it.
 */
import { writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { byteSize, type ScanFacts, shownDomain } from './summary-table.ts';
import { terminalValue } from './terminal-text.ts';

export const RUN_INDEX_FILE = 'index.html';

export interface RunIndexOptions {
  /** `<out>/<results bucket>`: where the summary's keys are. */
  readonly resultsRoot: string;
  readonly scanFacts: ReadonlyMap<string, ScanFacts>;
  /** How a line of the uploaded list is shown (`arg N` for a command-line domain). */
  readonly lineLabel: (line: number) => string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML shows it, whatever it holds; control and format characters escaped as the terminal shows them. */
export function escapeHtml(text: string): string {
  return terminalValue(text).replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}th,td{padding:.25em .75em;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.succeeded{color:#176f2c}td.failed,td.timed_out,td.rejected,td.invalid{color:#b3261e}td.interrupted,td.duplicate{color:#7a5b00}
code{font-size:12px}`;

/** A relative link from the run folder to a key of the results bucket (`/`-separated). */
function linkTo(runFolder: string, resultsRoot: string, key: string): string {
  return relative(runFolder, join(resultsRoot, key)).split(sep).map(encodeURIComponent).join('/');
}

/** The page: the totals, then a row per line of the list, in line order. */
export function runIndexHtml(runFolder: string, summary: ListSummary, options: RunIndexOptions): string {
  const rows: { line: number; cells: string }[] = [];
  for (const row of summary.domains) {
    const facts = row.manifestKey ? options.scanFacts.get(row.manifestKey) : undefined;
    const where = row.manifestKey
      ? `<a href="${linkTo(runFolder, options.resultsRoot, row.manifestKey)}">manifest</a> · <a href="${linkTo(runFolder, options.resultsRoot, row.outputPrefix ?? '')}">outputs</a>`
      : row.duplicateOf !== undefined
        ? `duplicate of line ${row.duplicateOf}`
        : row.error
          ? `${escapeHtml(row.error.name)}: ${escapeHtml(row.error.message.slice(0, 200))}`
          : '';
    rows.push({
      line: row.line,
      cells: [
        `<td>${escapeHtml(options.lineLabel(row.line))}</td>`,
        `<td>${escapeHtml(shownDomain(row.domain))}</td>`,
        `<td class="${row.state}">${row.state}</td>`,
        `<td>${facts ? `${facts.elapsedSeconds} s` : ''}</td>`,
        `<td>${facts ? facts.outputs.map((o) => `${escapeHtml(o.name)} ${byteSize(o.size)}`).join(', ') : ''}</td>`,
        `<td>${where}</td>`,
      ].join(''),
    });
  }
  for (const invalid of summary.invalid) {
    rows.push({
      line: invalid.line,
      cells: `<td>${escapeHtml(options.lineLabel(invalid.line))}</td><td>${escapeHtml(invalid.text.slice(0, 40))}</td><td class="invalid">invalid</td><td></td><td></td><td>${escapeHtml(invalid.reason)}</td>`,
    });
  }
  rows.sort((a, b) => a.line - b.line);
  const c = summary.counts;
  const totals = (
    ['succeeded', 'failed', 'timed_out', 'rejected', 'interrupted', 'invalid', 'duplicate'] as const
  )
    .map((state) => `${c[state] ?? 0} ${state.replace('_', ' ')}`)
    .join(', ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Scan run ${escapeHtml(summary.runId)}</title><style>${STYLE}</style></head>
<body><h1>Scan run ${escapeHtml(summary.runId)}</h1>
<p>Started ${escapeHtml(summary.startedAt ?? 'unknown')}, finished ${escapeHtml(summary.finishedAt)}. ${c.lines} line(s): ${totals}.
Every file is beside this page: <a href="summary.json">summary.json</a>, <a href="summary.txt">summary.txt</a>.</p>
<table><thead><tr><th>line</th><th>domain</th><th>result</th><th>took</th><th>sizes</th><th>outputs / error</th></tr></thead>
<tbody>
${rows.map((row) => `<tr>${row.cells}</tr>`).join('\n')}
</tbody></table></body></html>
`;
}

export async function writeRunIndex(
  runFolder: string,
  summary: ListSummary,
  options: RunIndexOptions,
): Promise<string> {
  const path = join(runFolder, RUN_INDEX_FILE);
  await writeFile(path, runIndexHtml(runFolder, summary, options), 'utf8');
  return path;
}
