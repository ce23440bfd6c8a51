/**
 * `npm start -- scan` and the demo: a domain list through the real pipeline on this machine. Loaded
 * by local/cli/main.ts only once the arguments are read (it brings the pipeline, the AWS SDK and the
 * synthesis with it).
 */
import { statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { DomainListItem } from '#lambdas/domain-list/contracts';
import { splitLines } from '#lambdas/domain-list/domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { LOCAL_SCAN_CONCURRENCY } from '../../lib/config/scan-concurrency.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import {
  createConsoleReporter,
  type OutputMode,
  outputModeFor,
  type ProgressListener,
} from '../output/progress.ts';
import {
  describeResume,
  findRunToResume,
  listIdentity,
  planResume,
  writeRunRecord,
} from '../output/resume.ts';
import {
  HANDLER_LOG_FILE,
  type LogLevel,
  latestLine,
  logLine,
  pointLatestAt,
  reportKept,
  writeSummaryTable,
} from '../output/run-files.ts';
import { writeRunIndex } from '../output/run-index.ts';
import {
  describeInterrupted,
  lineLabeller,
  readScanFacts,
  scanRunEnding,
  summaryHasFailures,
} from '../output/summary-table.ts';
import { complain, say } from '../output/terminal-text.ts';
import { listSuffix, runDomainList } from '../runner/domain-list-run.ts';
import { inputCopyIn, LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET, withLocalRun } from '../runner/local-run.ts';
import type { LocalTiming } from '../runner/pipeline.ts';
import { scanDomainStateMachine } from '../synth/definitions.ts';
import { cachedTemplate } from '../synth/synth-cache.ts';
import { userPath } from './cli-args.ts';
import { hasDomainLines, readDomainsFile, refuseUnlessUtf8, UsageError } from './cli-checks.ts';
import { FAULTS_OF, faultRulesOf } from './fault-flags.ts';
import { type Interruption, withStopRequest } from './interrupts.ts';
import { localPollSettings } from './poll-flags.ts';

export interface ScanCommandOptions {
  readonly domains: readonly string[];
  readonly domainsFile?: string;
  readonly out: string;
  readonly minWait?: number;
  readonly maxWait?: number;
  readonly deadline?: number;
  readonly concurrency?: number;
  readonly logLevel: LogLevel;
  /** `compact` or `verbose` output; unset: compact above COMPACT_THRESHOLD domains. */
  readonly output?: OutputMode;
  /** The demo shortens the poll waits and the simulator's scans. */
  readonly demo: boolean;
  /** @default {}: the definition's own waits and retry intervals */
  readonly timing?: LocalTiming;
  /** `--fault key-echo=status` (simulator only, local/cli/fault-flags.ts). */
  readonly fault?: string | undefined;
  /**
   * `--fresh`: a new run even when an earlier run of the list into this `--out` did not finish
   * (which is otherwise resumed, local/output/resume.ts). @default false
   */
  readonly fresh?: boolean;
}

/** Runs a scan list locally; returns the exit code. */
export async function runScanCommand(options: ScanCommandOptions, config: PipelineConfig): Promise<number> {
  if (options.domains.length === 0 && !options.domainsFile) {
    throw new UsageError('give at least one domain or --domains-file FILE');
  }
  const faults = faultRulesOf(options.fault, FAULTS_OF.scan);
  const fileArgument = options.domains.find((arg) => looksLikeListFile(arg, config.intake.suffixes));
  if (fileArgument !== undefined) {
    throw new UsageError(
      `${fileArgument} looks like a domain-list file, not a domain: did you mean npm start -- scan --domains-file ${fileArgument}?`,
    );
  }
  // Absolute from here on, resolved where the user typed it, so every message shows the real path;
  // `-` is standard input, uploaded under a name of ours the intake takes.
  const fromStdin = options.domainsFile === STANDARD_INPUT;
  const domainsFile =
    options.domainsFile === undefined || fromStdin ? options.domainsFile : userPath(options.domainsFile);
  const file = domainsFile
    ? {
        name: fromStdin ? `standard-input${listSuffix(config.intake.suffixes)}` : basename(domainsFile),
        bytes: await readDomainsFile(domainsFile),
      }
    : undefined;
  if (domainsFile && file) refuseUnlessUtf8(file.bytes, '--domains-file', domainsFile);
  // The intake only treats these suffixes as domain lists; say so before anything starts.
  if (
    domainsFile &&
    file &&
    !fromStdin &&
    !config.intake.suffixes.some((s) => file.name.toLowerCase().endsWith(s))
  ) {
    throw new UsageError(
      `--domains-file ${domainsFile}: must end with one of ${config.intake.suffixes.join(', ')} ` +
        '(the intake.suffixes setting of the pipeline configuration)',
    );
  }
  const { poll, deadlineNote } = localPollSettings(config, options);
  if (options.domains.length === 0 && file && !hasDomainLines(file.bytes)) {
    throw new InvalidInputError(
      `--domains-file ${domainsFile}`,
      'is empty: it has no domain lines (only blank lines or # comments)',
    );
  }
  let onProgress: ProgressListener = () => {};
  // The vendor's, once known: says which failure a fault the demo injected on purpose caused.
  let injectedFault: (operation: string) => string | undefined = () => undefined;
  const sleeps = options.timing?.vendorBackoffMs;
  // The progress interval is the reporter's; the rest of the timing goes to the local run.
  const { progressIntervalMs, ...pipelineTiming } = options.timing ?? {};
  const backoff = sleeps === undefined ? {} : { overriddenMs: sleeps };
  return withLocalRun(
    {
      command: options.demo ? 'demo' : 'scan',
      out: userPath(options.out),
      demo: options.demo,
      logLevel: options.logLevel,
      api: 'scan',
      config,
      timing: options.timing,
      faults,
      // Retries and give-ups show as they happen, instead of minutes of silence.
      vendorObserver: {
        retrying: (attempt) => onProgress({ type: 'vendor-retry', attempt, ...backoff }),
        failed: (attempt) => {
          const injectedBecause = injectedFault(attempt.operation);
          onProgress({ type: 'vendor-gave-up', attempt, ...(injectedBecause ? { injectedBecause } : {}) });
        },
      },
    },
    async ({ out, resultsRoot, vendor, s3, logs, clients, iam, exportWritten, placeExports }) =>
      // Ctrl-C from here on stops the list as a run would end: what finished is exported and summarised.
      withStopRequest(
        'no new scan starts, those in flight stop after their current step, then what finished is exported with the summary',
        async (stopSignal) => {
          injectedFault = vendor.injectedFault ?? injectedFault;
          // One process runs every execution here: a deployed default sized for a day's list is capped.
          const concurrency =
            options.concurrency ?? Math.min(config.scan.maxConcurrency, LOCAL_SCAN_CONCURRENCY);
          const scanDefinition = scanDomainStateMachine(await cachedTemplate(config)).definition;
          say(
            `Vendor: ${vendor.label}\nPoll waits: ${poll.minWaitSeconds}s growing x${poll.growthFactor} to ${poll.maxWaitSeconds}s, ` +
              `deadline ${poll.deadlineSeconds}s${deadlineNote}; concurrency ${concurrency}\n`,
          );
          let mode: OutputMode = options.output ?? 'verbose';
          let reporter: ReturnType<typeof createConsoleReporter> | undefined;
          // A list from standard input has no name of its own: it is known by its content.
          const list = listIdentity({ domains: options.domains, ...(file ? { file } : {}) }, fromStdin);
          const earlier = options.fresh ? undefined : await findRunToResume(resultsRoot, list);
          onProgress = (event) => {
            if (event.type === 'list-prepared') {
              mode = outputModeFor(event.total, options.output);
              reporter = createConsoleReporter(process.stdout, {
                mode,
                ...(progressIntervalMs === undefined ? {} : { intervalMs: progressIntervalMs }),
              });
              const runFolder = join(resultsRoot, event.resultsPrefix);
              // In the run folder from before the first scan, so it can be followed while the run goes on.
              logs.attach(join(runFolder, HANDLER_LOG_FILE));
              writeRunRecord(runFolder, event.runId, list, earlier, basename(s3.directory));
              // The list as this run uploaded it, in its own folder: an edited list rerun is a new copy.
              placeExports(inputCopyIn(runFolder));
            }
            reporter?.listener(event);
          };
          const resume = earlier
            ? async (items: readonly DomainListItem[]) => {
                const plan = await planResume(earlier, items, {
                  resultsRoot,
                  scanClient: clients.scan,
                  listFields: config.scan.reconciliation.listFields,
                  ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
                });
                say(describeResume(earlier, plan));
                return plan.decisions;
              }
            : undefined;
          const run = await runDomainList(
            {
              s3: s3.client,
              inputBucket: LOCAL_INPUT_BUCKET,
              resultsBucket: LOCAL_RESULTS_BUCKET,
              scanDefinition,
              scanClient: clients.scan,
              poll,
              ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
              listFields: config.scan.reconciliation.listFields,
              concurrency: concurrency,
              intakePrefix: config.intake.prefix,
              intakeSuffixes: config.intake.suffixes,
              maxListBytes: config.intake.maxListBytes,
              allowSpecialUse: config.scan.allowSpecialUseDomains,
              maxOutputBytes: config.scan.maxOutputBytes,
              maxDecodingRatio: config.scan.maxDecodingRatio,
              logger: logs.logger,
              watchClient: (client) => iam.watch(client),
              onProgress,
              stop: stopSignal,
              ...pipelineTiming,
            },
            { domains: options.domains, ...(file ? { file } : {}) },
            resume,
          );
          reporter?.finish();
          const exported = await exportWritten();
          const runFolder = resolve(resultsRoot, run.prepared.resultsPrefix);
          // Positional domains follow the file in the uploaded list; they are shown as `arg N`.
          const lineLabel = lineLabeller(
            file ? splitLines(Buffer.from(file.bytes).toString('utf8')).length : 0,
          );
          const scanFacts = await readScanFacts(resultsRoot, run.summary);
          const ending = scanRunEnding(run.summary, mode, { resultsDir: resultsRoot, lineLabel, scanFacts });
          const tablePath = await writeSummaryTable(runFolder, ending.table);
          const indexPath = await writeRunIndex(runFolder, run.summary, {
            resultsRoot,
            scanFacts,
            lineLabel,
          });
          const logPath = await logs.close(process.stderr);
          const latest = await pointLatestAt(out, runFolder);
          say(ending.printed);
          say(
            `Summary: ${join(resultsRoot, run.summaryKey)}\nTable:   ${tablePath}\nPage:    ${indexPath}\n` +
              logLine(logPath, logs) +
              latestLine(latest, runFolder),
          );
          reportKept(exported);
          if (stopSignal.aborted) {
            // One line however long the list: each unfinished domain is named in summary.txt only.
            complain(
              `interrupted (${(stopSignal.reason as Interruption).cause}): ${describeInterrupted(run.summary) ?? 'every domain had finished'}; ` +
                `every finished scan is kept under ${out}, each unfinished domain is named in ${tablePath}; ` +
                'the same command resumes the run (--fresh starts afresh)\n',
            );
          }
          return summaryHasFailures(run.summary) ? 1 : 0;
        },
      ),
  );
}

/** `--domains-file -`: the list is read from standard input. */
const STANDARD_INPUT = '-';

/**
 * `scan ./x.txt`: an argument that names a list file (by the intake's suffixes, or a path to a
 * file that exists) was meant for --domains-file; as a domain it would only be "contains a path".
 */
function looksLikeListFile(arg: string, suffixes: readonly string[]): boolean {
  // A URL names the domain to scan, whatever its path ends with.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) return false;
  if (suffixes.some((suffix) => arg.toLowerCase().endsWith(suffix))) return true;
  if (!/[\\/]/.test(arg)) return false;
  return statSync(userPath(arg), { throwIfNoEntry: false })?.isFile() ?? false;
}
