/**
 * What a scan run ends with: the table of every line's fate (printed in verbose mode, always kept as
 * summary.txt), only the problems in compact mode, the totals, and the one line an interrupt gets.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { domainToUnicode } from 'node:url';
import type { DomainFinalState, ListSummary } from '#lambdas/domain-list/contracts';
import type { OutputMode } from './progress.ts';
import { terminalValue } from './terminal-text.ts';

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
  /** Each finished scan's facts by its manifest key: the table then has `took` and `sizes`. */
  readonly scanFacts?: ReadonlyMap<string, ScanFacts>;
}

/**
 * The facts of every scan of the summary that has a manifest, read from the exported manifests
 * under `resultsRoot` (a manifest that cannot be read leaves its row without them).
 */
export async function readScanFacts(
  resultsRoot: string,
  summary: ListSummary,
): Promise<Map<string, ScanFacts>> {
  const facts = new Map<string, ScanFacts>();
  for (const row of summary.domains) {
    if (row.manifestKey === undefined) continue;
    try {
      const manifest = JSON.parse(await readFile(join(resultsRoot, row.manifestKey), 'utf8')) as {
        objects: { name: string; size: number }[];
        timings: { elapsedSeconds: number };
      };
      facts.set(row.manifestKey, {
        outputs: manifest.objects.map(({ name, size }) => ({ name, size })),
        elapsedSeconds: manifest.timings.elapsedSeconds,
      });
    } catch {
      // Not exported here (a run whose export kept a file of the user's): the row says where it is.
    }
  }
  return facts;
}

/** Line `n` of a list that is `fileLines` lines of a file followed by command-line domains. */
export function lineLabeller(fileLines: number): (line: number) => string {
  return (line) => (line <= fileLines ? String(line) : `arg ${line - fileLines}`);
}

type SummaryRow = ListSummary['domains'][number];

/**
 * A domain as a person reads it: an internationalised one (stored and scanned as punycode, as DNS
 * has it) with its Unicode form beside it, `xn--bcher-kva.example (bücher.example)`.
 */
export function shownDomain(domain: string): string {
  if (!/(^|\.)xn--/i.test(domain)) return domain;
  const unicode = domainToUnicode(domain);
  return unicode === '' || unicode === domain ? domain : `${domain} (${terminalValue(unicode)})`;
}

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

/** What a finished scan's manifest says of it: each output's size, and how long the scan took. */
export interface ScanFacts {
  readonly outputs: readonly { readonly name: string; readonly size: number }[];
  readonly elapsedSeconds: number;
}

/** `512 B`, `3.2 KiB`, `256 KiB`, `1.5 MiB`. */
export function byteSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const shown = unit === 0 || value >= 100 ? Math.round(value) : Number(value.toFixed(1));
  return `${shown} ${units[unit]}`;
}

/** `took` and `sizes` of a row: empty for a row whose scan has no manifest. */
function factCells(facts: ScanFacts | undefined): string[] {
  if (facts === undefined) return ['', ''];
  return [
    `${facts.elapsedSeconds} s`,
    facts.outputs.map((output) => `${output.name} ${byteSize(output.size)}`).join(', '),
  ];
}

/** Every row of the summary, domains and invalid lines, in line order. */
function tableRows(summary: ListSummary, options: TableOptions): { line: number; cells: string[] }[] {
  const label = options.lineLabel ?? String;
  const facts = options.scanFacts;
  const rows: { line: number; cells: string[] }[] = [];
  for (const entry of summary.domains) {
    const known = facts && entry.manifestKey ? facts.get(entry.manifestKey) : undefined;
    rows.push({
      line: entry.line,
      cells: [
        label(entry.line),
        shownDomain(entry.domain),
        entry.state,
        ...(facts ? factCells(known) : []),
        outputsOrError(entry, options, label),
      ],
    });
  }
  for (const invalid of summary.invalid) {
    rows.push({
      line: invalid.line,
      cells: [
        label(invalid.line),
        invalid.text.slice(0, 40),
        'invalid',
        ...(facts ? ['', ''] : []),
        invalid.reason,
      ],
    });
  }
  return rows.sort((a, b) => a.line - b.line);
}

const HEADER_ROW = ['line', 'domain', 'result', 'outputs / error'];
const HEADER_WITH_FACTS = ['line', 'domain', 'result', 'took', 'sizes', 'outputs / error'];

/** The totals line and the notes that go with it (refused list, sampled rows). */
export function formatTotals(summary: ListSummary): string {
  const lines: string[] = [];
  const c = summary.counts;
  if (summary.rejected) lines.push(`The list was refused: ${summary.rejected.reason}`);
  if (summary.sampled) {
    const duplicatesListed = summary.domains.filter((entry) => entry.state === 'duplicate').length;
    lines.push(
      `Only the first ${summary.invalid.length} of ${c.invalid} invalid and ${duplicatesListed} of ${c.duplicate} duplicate lines are listed (see rejects.json); the counts cover every line.`,
    );
  }
  const header = summary.header ? 1 : 0;
  lines.push(
    `${c.lines} line(s): ${c.succeeded} succeeded, ${c.failed} failed, ${c.timed_out} timed out, ` +
      `${c.rejected} rejected, ${(c.interrupted ?? 0) > 0 ? `${c.interrupted} interrupted, ` : ''}${c.invalid} invalid, ${c.duplicate} duplicate, ${c.ignored - header} blank or comment` +
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
  return `${formatRows(summary, options)}\n${formatTotals(summary)}`;
}

/** The table's header and rows, aligned. */
function formatRows(summary: ListSummary, options: TableOptions): string {
  const header = options.scanFacts ? HEADER_WITH_FACTS : HEADER_ROW;
  const lines = alignRows([header, ...tableRows(summary, options).map((row) => row.cells)]);
  return `${lines.join('\n')}\n`;
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
        ...failed.map((d) => [
          label(d.line),
          shownDomain(d.domain),
          d.state,
          outputsOrError(d, options, label),
        ]),
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
      const group = groups.get(d.duplicateOf) ?? { domain: shownDomain(d.domain), lines: [] };
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

/** How the message of a domain the stop kept from starting begins (the rest were stopped in flight). */
export const NOT_STARTED = 'not started';

const isInterrupted = (row: SummaryRow) => row.state === 'interrupted';

/**
 * The interrupted domains in one line, by where the stop met them (`19,856 not started, 2 in
 * flight stopped`); undefined when none was interrupted. Each one is named in summary.txt only.
 */
export function describeInterrupted(summary: ListSummary): string | undefined {
  const interrupted = summary.domains.filter(isInterrupted);
  if (interrupted.length === 0) return undefined;
  const notStarted = interrupted.filter((row) => row.error?.message.startsWith(NOT_STARTED)).length;
  const count = (n: number) => n.toLocaleString('en-US');
  return `${count(notStarted)} not started, ${count(interrupted.length - notStarted)} in flight stopped`;
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
  if (mode === 'verbose') {
    // The interrupted rows stay in summary.txt: on the terminal they are the one interrupt line.
    const shown = { ...summary, domains: summary.domains.filter((row) => !isInterrupted(row)) };
    return { table, printed: `\n${formatRows(shown, options)}\n${formatTotals(summary)}` };
  }
  const problems = formatProblems(summary, options);
  return { table, printed: `\n${problems}${problems ? '\n' : ''}${formatTotals(summary)}` };
}
