/**
 * `npm start -- breach`: one person's breach report (`--name`, `--email`...) or a watchlist file,
 * through the synthesized BreachReport definition, against the simulator or the real vendor.
 *
 * Exit codes follow the CLI contract: 0 when every report was archived or had no results; 1 when
 * one failed or an input was rejected; 2 for usage and configuration errors found up front.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { MIN_IDENTITY_KEY_BYTES } from '#lambdas/breach/contracts';
import { InvalidInputError } from '#lambdas/platform/errors';
import { validateEmail } from '#lambdas/platform/input/validation';
import { watchlistFormatOf } from '#lambdas/watchlist/watchlist';
import type { WatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import {
  HANDLER_LOG_FILE,
  type LogLevel,
  latestLine,
  logLine,
  pointLatestAt,
  reportKept,
  writeSummaryTable,
} from '../output/run-files.ts';
import { complain, say } from '../output/terminal-text.ts';
import { watchlistTable } from '../output/watchlist-table.ts';
import {
  type BreachRunRequest,
  type LocalBreachResult,
  runBreachReport,
  runWatchlist,
} from '../runner/breach-run.ts';
import {
  LOCAL_INPUT_BUCKET,
  LOCAL_RESULTS_BUCKET,
  type LocalRunOptions,
  withLocalRun,
} from '../runner/local-run.ts';
import type { LocalTiming } from '../runner/pipeline.ts';
import type { FaultRule } from '../simulator/types.ts';
import { breachReportStateMachine } from '../synth/definitions.ts';
import { cachedTemplate } from '../synth/synth-cache.ts';
import { userPath } from './cli-args.ts';
import { readStandardInput, refuseUnlessUtf8, UsageError } from './cli-checks.ts';
import { FAULTS_OF, faultRulesOf } from './fault-flags.ts';

export interface BreachCommandOptions {
  readonly name?: string;
  /** `--email`: addresses given on the command line (visible in `ps`; a warning says so). */
  readonly emails: readonly string[];
  /**
   * `--emails-file FILE` (`-` for standard input): one address a line, blank and `#` lines
   * skipped. Addresses read here appear in no process argument and no npm banner.
   */
  readonly emailsFile?: string;
  /** A CSV or JSON watchlist instead of one person. */
  readonly watchlist?: string;
  readonly out: string;
  readonly logLevel: LogLevel;
  /** @default {}: failed states are retried at the definition's intervals */
  readonly timing?: LocalTiming;
  /** `--fault key-echo=recon|report-name` (simulator only, local/cli/fault-flags.ts). */
  readonly fault?: string | undefined;
}

/** Where the local identity key lives: the same people get the same names across runs into one `--out`. */
export const IDENTITY_KEY_FILE = '.breach-identity-key';
/** Overrides the key file, e.g. to match the names of a deployed stack's secret. */
export const IDENTITY_KEY_VARIABLE = 'BREACH_IDENTITY_KEY';

export async function runBreachCommand(
  options: BreachCommandOptions,
  config: PipelineConfig,
): Promise<number> {
  const faults = faultRulesOf(options.fault, FAULTS_OF.breach);
  if (options.watchlist !== undefined) {
    if (options.name !== undefined || options.emails.length > 0 || options.emailsFile !== undefined) {
      throw new UsageError('give either --watchlist FILE or --name with --emails-file, not both');
    }
    return runWatchlistCommand({ ...options, watchlist: userPath(options.watchlist) }, config, faults);
  }
  const emails = [
    ...options.emails,
    ...(options.emailsFile === undefined ? [] : await readEmailsFile(options.emailsFile)),
  ];
  if (options.name === undefined || emails.length === 0) {
    throw new UsageError(
      'give --name NAME and its addresses with --emails-file FILE (or - for standard input), or --watchlist FILE',
    );
  }
  if (options.emails.length > 0) {
    complain(
      "warning: --email puts the address in this process's arguments (every user of the machine sees them in ps) and in npm's banner; use --emails-file FILE, or --emails-file - to read them from standard input\n",
    );
  }
  return withLocalRun(
    breachRunOptions(options, config, faults),
    async ({ out, resultsRoot, vendor, s3, logs, clients, exportWritten, timing }) => {
      const definition = breachReportStateMachine(await cachedTemplate(config)).definition;
      say(`Vendor: ${vendor.label}\n`);
      const request: BreachRunRequest = {
        name: options.name,
        emails,
        requestId: `cli-${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(3).toString('hex')}`,
      };
      const identityKey = await localIdentityKey(out);
      // The run folder is only known once the person is named; the log follows it there.
      const result = await runBreachReport(
        {
          s3: s3.client,
          resultsBucket: LOCAL_RESULTS_BUCKET,
          definition,
          breachClient: clients.breach,
          maxEmails: config.breach.maxEmails,
          limits: config.breach,
          identityKey,
          logger: logs.logger,
          retryIntervalMs: timing.retryIntervalMs,
        },
        request,
      );
      const runFolder = resolve(resultsRoot, result.outputPrefix);
      logs.attach(join(runFolder, HANDLER_LOG_FILE));
      await exportWritten().then(reportKept);
      const logPath = await logs.close(process.stderr);
      const latest = await pointLatestAt(out, runFolder);
      say(describeResult(result, resultsRoot) + logLine(logPath, logs) + latestLine(latest, runFolder));
      return result.outcome === 'failed' ? 1 : 0;
    },
  );
}

/** The local run a breach command makes, a single report or a watchlist alike. */
function breachRunOptions(
  options: BreachCommandOptions,
  config: PipelineConfig,
  faults: readonly FaultRule[],
): LocalRunOptions {
  return {
    command: 'breach',
    out: userPath(options.out),
    demo: false,
    logLevel: options.logLevel,
    api: 'breach',
    config,
    timing: options.timing,
    faults,
  };
}

async function runWatchlistCommand(
  options: BreachCommandOptions & { readonly watchlist: string },
  config: PipelineConfig,
  faults: readonly FaultRule[],
): Promise<number> {
  const name = basename(options.watchlist);
  if (watchlistFormatOf(name) === undefined) {
    throw new UsageError(`--watchlist ${options.watchlist}: must end with .csv or .json`);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readFile(options.watchlist);
  } catch (error) {
    throw new UsageError(
      `--watchlist ${options.watchlist}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  refuseUnlessUtf8(bytes, '--watchlist', options.watchlist);
  return withLocalRun(
    breachRunOptions(options, config, faults),
    async ({ out, resultsRoot, vendor, s3, logs, clients, exportWritten, timing }) => {
      const definition = breachReportStateMachine(await cachedTemplate(config)).definition;
      say(
        `Vendor: ${vendor.label}\nWatchlist: ${options.watchlist}; ${config.breach.maxConcurrency} at once\n`,
      );
      const run = await runWatchlist(
        {
          s3: s3.client,
          inputBucket: LOCAL_INPUT_BUCKET,
          resultsBucket: LOCAL_RESULTS_BUCKET,
          watchlistPrefix: config.breach.watchlistPrefix,
          concurrency: config.breach.maxConcurrency,
          maxWatchlistBytes: config.breach.maxWatchlistBytes,
          maxWatchlistRows: config.breach.maxWatchlistRows,
          definition,
          breachClient: clients.breach,
          maxEmails: config.breach.maxEmails,
          limits: config.breach,
          identityKey: await localIdentityKey(out),
          logger: logs.logger,
          retryIntervalMs: timing.retryIntervalMs,
          onPersonDone: (item, outcome) =>
            say(
              `  row ${item.row}: ${item.person.slug}: ${outcome.outcome === 'failed' ? `failed (${outcome.error})` : outcome.outcome}\n`,
            ),
        },
        { name, bytes },
      );
      const runFolder = resolve(resultsRoot, run.prepared.resultsPrefix);
      logs.attach(join(runFolder, HANDLER_LOG_FILE));
      await exportWritten().then(reportKept);
      const logPath = await logs.close(process.stderr);
      const latest = await pointLatestAt(out, runFolder);
      const { counts } = run;
      const summaryPath = join(resultsRoot, run.summaryKey);
      const summary = JSON.parse(await readFile(summaryPath, 'utf8')) as WatchlistSummary;
      const tablePath = await writeSummaryTable(runFolder, await watchlistTable(summary, resultsRoot));
      say(
        rowProblems(summary) +
          (run.refused ? `\nRefused: ${run.refused}` : '') +
          `\n${counts.rows} row(s): ${counts.archived} archived, ${counts.no_results} no results, ${counts.failed} failed, ` +
          `${counts.invalid} invalid, ${counts.duplicate} duplicate; ${counts.ignoredLines} blank or comment line(s)\n` +
          `Summary: ${summaryPath}\nTable:   ${tablePath}\n` +
          logLine(logPath, logs) +
          latestLine(latest, runFolder),
      );
      return run.refused || counts.failed > 0 || counts.invalid > 0 ? 1 : 0;
    },
  );
}

/**
 * The rows that never became a report, with their reasons, as a scan run lists its invalid lines.
 * The reasons name the field by position (`emails[0]: has no '@'`), never an address.
 */
function rowProblems(summary: WatchlistSummary): string {
  const problems = summary.rows.filter((row) => row.status === 'invalid' || row.status === 'duplicate');
  return problems
    .map((row) => `  row ${row.row}: ${row.status}${row.reason ? `: ${row.reason}` : ''}\n`)
    .join('');
}

/** What a person's run did, in a few lines; never an address, the name only as its slug. */
export function describeResult(result: LocalBreachResult, resultsRoot: string): string {
  const who = `Person:   ${result.person.slug} (${result.person.id.slice(0, 16)}), execution ${result.executionName}\n`;
  switch (result.outcome) {
    case 'archived': {
      const { result: run } = result;
      return (
        who +
        `Recon:    success, ${run.totalBreaches ?? 'an unknown number of'} breach(es), report ${run.reportName ?? '(named in recon.json: too long for a state payload)'}\n` +
        `Archive:  ${join(resultsRoot, run.archiveKey)} (verified)\n` +
        `Manifest: ${join(resultsRoot, run.manifestKey)}\n`
      );
    }
    case 'no_results':
      return `${who}Recon:    no_results: no breach found\nRecord:   ${join(resultsRoot, result.reconKey)}\n`;
    case 'failed':
      return `${who}Failed:   ${result.error}: ${causeMessage(result.cause, resultsRoot)}\n`;
  }
}

/**
 * The Fail state's cause is the failure record's `{ name, message, failureKey }` as JSON; the
 * record is named by its path under `--out`, as every other line names a file.
 */
function causeMessage(cause: string, resultsRoot: string): string {
  try {
    const parsed = JSON.parse(cause) as { name?: string; message?: string; failureKey?: string | null };
    return `${parsed.name ?? 'Error'}: ${parsed.message ?? ''}${parsed.failureKey ? ` (recorded in ${join(resultsRoot, parsed.failureKey)})` : ''}`;
  } catch {
    return cause;
  }
}

/**
 * The key of the keyed hash that names people: BREACH_IDENTITY_KEY, else a random key kept in
 * `<out>/.breach-identity-key` (created once, readable by its owner only).
 */
export async function localIdentityKey(out: string): Promise<string> {
  const fromEnvironment = process.env[IDENTITY_KEY_VARIABLE]?.trim();
  if (fromEnvironment) {
    if (Buffer.byteLength(fromEnvironment) < MIN_IDENTITY_KEY_BYTES) {
      throw new UsageError(`${IDENTITY_KEY_VARIABLE} must be at least ${MIN_IDENTITY_KEY_BYTES} bytes long`);
    }
    return fromEnvironment;
  }
  const path = join(out, IDENTITY_KEY_FILE);
  try {
    const stored = (await readFile(path, 'utf8')).trim();
    if (Buffer.byteLength(stored) >= MIN_IDENTITY_KEY_BYTES) return stored;
    throw new UsageError(
      `${path} holds a key shorter than ${MIN_IDENTITY_KEY_BYTES} bytes: remove it to make a new one`,
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('hex');
  // 'wx': two runs starting at once must not each write their own key.
  try {
    await writeFile(path, `${key}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return localIdentityKey(out);
    throw error;
  }
  await chmod(path, 0o600);
  return key;
}

/**
 * The addresses of `--emails-file`: one a line, blank lines and `#` comments skipped; `-` reads
 * standard input. A file that cannot be read is a usage error naming the flag, never an address.
 */
export async function readEmailsFile(file: string): Promise<string[]> {
  let text: string;
  try {
    text =
      file === '-' ? (await readStandardInput()).toString('utf8') : await readFile(userPath(file), 'utf8');
  } catch (error) {
    throw new UsageError(
      `--emails-file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const emails: string[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    // Checked here, before anything starts, by the rule Recon applies: the file and its line
    // (from 1, as an editor counts) are named, the address never is.
    try {
      validateEmail(line);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new UsageError(`--emails-file ${file} line ${index + 1}: ${error.reason}`);
    }
    emails.push(line);
  }
  if (emails.length === 0) throw new UsageError(`--emails-file ${file}: holds no address (one a line)`);
  return emails;
}
