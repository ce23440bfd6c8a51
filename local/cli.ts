/**
 * `npm start`: the real pipeline on this machine (see docs/local-runs.md and docs/contracts.md).
 *
 *   npm start                                   demo: examples/domains.txt against the simulator
 *   npm start -- scan <domain...> [--domains-file F] [--out DIR] [--min-wait S] [--max-wait S]
 *                                 [--quiet | --verbose] [--log-level L]
 *   npm start -- breach --name NAME --email E [--email E2...] [--out DIR] [--log-level L]
 *   npm start -- breach --watchlist FILE [--out DIR] [--log-level L]
 *   npm start -- rotate [--out DIR] [--check-domain D] [--log-level L]
 *
 * Exit codes: 0 everything succeeded; 1 a domain or report failed, or an input was rejected;
 * 2 usage or configuration error.
 */
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { splitLines } from '#lambdas/domain-list/domain-list';
import { ConfigurationError, InvalidInputError } from '#lambdas/platform/errors';
import { loadPipelineConfigFile, type PipelineConfig, PipelineConfigError } from '../lib/config/index.ts';
import { runBreachCommand } from './breach-command.ts';
import {
  collect,
  concurrencyFlag,
  flagBeforeCommandProblem,
  swallowedFlagsProblem,
  userDirectory,
  userPath,
} from './cli-args.ts';
import {
  configFlag,
  hasDomainLines,
  nodeVersionProblem,
  readDomainsFile,
  UsageError,
  unknownCommandProblem,
} from './cli-checks.ts';
import { loadLocalPipelineConfig } from './config.ts';
import { installInterruptHandlers } from './interrupts.ts';
import { addLatencyFlags } from './latency.ts';
import { localPollSettings, pollFlag } from './poll-flags.ts';
import { addReconcileCommand } from './reconcile-command.ts';
import { addRotateCommand } from './rotate-command.ts';

export { nodeVersionProblem, usableOutputDirectory } from './cli-checks.ts';
export { localPollSettings } from './poll-flags.ts';

import { scanDomainStateMachine } from './definitions.ts';
import { LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET, withLocalRun } from './local-run.ts';
import { type LocalTiming, runDomainList } from './pipeline.ts';
import {
  COMPACT_THRESHOLD,
  createConsoleReporter,
  lineLabeller,
  type OutputMode,
  outputModeFor,
  type ProgressListener,
  scanRunEnding,
  summaryHasFailures,
} from './progress.ts';
import {
  HANDLER_LOG_FILE,
  type LogLevel,
  latestLine,
  logLevelOption,
  logLine,
  pointLatestAt,
  reportKept,
  writeSummaryTable,
} from './run-files.ts';
import { cachedTemplate } from './synth-cache.ts';

export { LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET } from './local-run.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');
const DEMO_LIST = resolve(PROJECT_ROOT, 'examples/domains.txt');

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
}

/** Runs a scan list locally; returns the exit code. */
export async function runScanCommand(options: ScanCommandOptions, config: PipelineConfig): Promise<number> {
  if (options.domains.length === 0 && !options.domainsFile) {
    throw new UsageError('give at least one domain or --domains-file FILE');
  }
  // Absolute from here on, resolved where the user typed it, so every message shows the real path.
  const domainsFile = options.domainsFile === undefined ? undefined : userPath(options.domainsFile);
  const file = domainsFile
    ? { name: basename(domainsFile), bytes: await readDomainsFile(domainsFile) }
    : undefined;
  // The intake only treats these suffixes as domain lists; say so before anything starts.
  if (domainsFile && file && !config.intake.suffixes.some((s) => file.name.toLowerCase().endsWith(s))) {
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
  const sleeps = options.timing?.vendorBackoffMs;
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
      // Retries and give-ups show as they happen, instead of minutes of silence.
      vendorObserver: {
        retrying: (attempt) => onProgress({ type: 'vendor-retry', attempt, ...backoff }),
        failed: (attempt) => onProgress({ type: 'vendor-gave-up', attempt }),
      },
    },
    async ({ out, resultsRoot, vendor, s3, logs, clients, exportWritten }) => {
      const scanDefinition = scanDomainStateMachine(await cachedTemplate(config)).definition;
      process.stdout.write(
        `Vendor: ${vendor.label}\nPoll waits: ${poll.minWaitSeconds}s growing x${poll.growthFactor} to ${poll.maxWaitSeconds}s, ` +
          `deadline ${poll.deadlineSeconds}s${deadlineNote}; concurrency ${options.concurrency ?? config.scan.maxConcurrency}\n`,
      );
      let mode: OutputMode = options.output ?? 'verbose';
      let reporter: ReturnType<typeof createConsoleReporter> | undefined;
      onProgress = (event) => {
        if (event.type === 'list-prepared') {
          mode = outputModeFor(event.total, options.output);
          reporter = createConsoleReporter(process.stdout, { mode });
          // In the run folder from before the first scan, so it can be followed while the run goes on.
          logs.attach(join(resultsRoot, event.resultsPrefix, HANDLER_LOG_FILE));
        }
        reporter?.listener(event);
      };
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
          concurrency: options.concurrency ?? config.scan.maxConcurrency,
          intakePrefix: config.intake.prefix,
          intakeSuffixes: config.intake.suffixes,
          maxListBytes: config.intake.maxListBytes,
          allowSpecialUse: config.scan.allowSpecialUseDomains,
          maxOutputBytes: config.scan.maxOutputBytes,
          logger: logs.logger,
          onProgress,
          ...options.timing,
        },
        { domains: options.domains, ...(file ? { file } : {}) },
      );
      reporter?.finish();
      const exported = await exportWritten();
      const runFolder = resolve(resultsRoot, run.prepared.resultsPrefix);
      // Positional domains follow the file in the uploaded list; they are shown as `arg N`.
      const lineLabel = lineLabeller(file ? splitLines(Buffer.from(file.bytes).toString('utf8')).length : 0);
      const ending = scanRunEnding(run.summary, mode, { resultsDir: resultsRoot, lineLabel });
      const tablePath = await writeSummaryTable(runFolder, ending.table);
      const logPath = await logs.close(process.stderr);
      const latest = await pointLatestAt(out, runFolder);
      process.stdout.write(ending.printed);
      process.stdout.write(
        `Summary: ${join(resultsRoot, run.summaryKey)}\nTable:   ${tablePath}\n` +
          logLine(logPath, logs) +
          latestLine(latest, runFolder),
      );
      reportKept(exported);
      return summaryHasFailures(run.summary) ? 1 : 0;
    },
  );
}

interface RawScanFlags {
  domainsFile?: string;
  out: string;
  minWait?: number;
  maxWait?: number;
  deadline?: number;
  concurrency?: number;
  logLevel: ScanCommandOptions['logLevel'];
  quiet?: boolean;
  verbose?: boolean;
}

/** The options `scan` and the demo share, without the flags the user left unset. */
function sharedScanOptions(
  flags: RawScanFlags,
): Omit<ScanCommandOptions, 'domains' | 'domainsFile' | 'demo'> {
  return {
    out: flags.out,
    ...(flags.minWait === undefined ? {} : { minWait: flags.minWait }),
    ...(flags.maxWait === undefined ? {} : { maxWait: flags.maxWait }),
    ...(flags.deadline === undefined ? {} : { deadline: flags.deadline }),
    ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
    logLevel: flags.logLevel,
    ...(flags.quiet ? { output: 'compact' as const } : flags.verbose ? { output: 'verbose' as const } : {}),
  };
}

export function buildProgram(
  config: PipelineConfig,
  setExitCode: (code: number) => void,
  timing: LocalTiming = {},
): Command {
  const program = new Command('npm start --')
    .description(
      'Run the vendor security pipeline locally: the synthesized state machine, the real handlers, embedded S3.',
    )
    .exitOverride()
    // One line of error, not the whole usage: the hint says where the usage is.
    .showHelpAfterError('(npm start -- --help lists every command and flag)');
  addLatencyFlags(program);
  const withScanFlags = (command: Command) =>
    command
      .option('--config <file>', 'pipeline configuration file (as cdk synth -c pipelineConfigFile=FILE)')
      .option('--out <dir>', 'where results land as <dir>/<bucket>/<key>', './results')
      .option('--min-wait <seconds>', 'first wait of the poll loop', pollFlag('--min-wait', 'minWaitSeconds'))
      .option(
        '--max-wait <seconds>',
        'largest wait of the poll loop',
        pollFlag('--max-wait', 'maxWaitSeconds'),
      )
      .option(
        '--deadline <seconds>',
        'give up on a scan (ScanTimedOut) after this long',
        pollFlag('--deadline', 'deadlineSeconds'),
      )
      .option('--concurrency <n>', 'domains scanned at once', concurrencyFlag)
      .addOption(
        new Option(
          '--quiet',
          `compact output: one progress line, then only the problems (the default above ${COMPACT_THRESHOLD} domains)`,
        ).conflicts('verbose'),
      )
      .addOption(new Option('--verbose', 'a line per domain and the full table, however long the list'))
      .addOption(logLevelOption());
  withScanFlags(
    program
      .command('scan')
      .description('scan the given domains and/or a domain-list file')
      .argument('[domains...]', 'domains or URLs to scan')
      .option('--domains-file <file>', 'a .txt or .csv domain list'),
  ).action(async (domains: string[], flags: RawScanFlags) => {
    setExitCode(
      await runScanCommand(
        {
          domains,
          ...(flags.domainsFile ? { domainsFile: flags.domainsFile } : {}),
          ...sharedScanOptions(flags),
          demo: false,
          timing,
        },
        config,
      ),
    );
  });
  program
    .command('breach')
    .description("one person's breach report: recon, then the verified ZIP archived")
    .option('--name <name>', 'the person the report is about')
    .option('--email <address>', 'an address of theirs (repeat for more)', collect, [])
    .option('--watchlist <file>', 'a .csv or .json watchlist: one report per person')
    .option('--config <file>', 'pipeline configuration file (as cdk synth -c pipelineConfigFile=FILE)')
    .option('--out <dir>', 'where results land as <dir>/<bucket>/<key>', './results')
    .addOption(logLevelOption())
    .action(
      async (flags: {
        name?: string;
        email: string[];
        watchlist?: string;
        out: string;
        logLevel: LogLevel;
      }) => {
        setExitCode(
          await runBreachCommand(
            {
              ...(flags.name === undefined ? {} : { name: flags.name }),
              ...(flags.watchlist === undefined ? {} : { watchlist: flags.watchlist }),
              emails: flags.email,
              out: flags.out,
              logLevel: flags.logLevel,
              timing,
            },
            config,
          ),
        );
      },
    );
  addRotateCommand(program, config, setExitCode, timing);
  addReconcileCommand(program, config, setExitCode, timing);
  withScanFlags(
    program.command('demo', { isDefault: true }).description(`scan ${DEMO_LIST} against the simulator`),
  ).action(async (flags: RawScanFlags) => {
    process.stdout.write(`Demo: scanning ${DEMO_LIST}\n`);
    setExitCode(
      await runScanCommand(
        {
          domains: [],
          domainsFile: DEMO_LIST,
          ...sharedScanOptions(flags),
          demo: true,
          timing,
        },
        config,
      ),
    );
  });
  return program;
}

/** What only an in-process caller (the tests) can set; the command line reaches none of it. */
export interface MainOptions {
  /** Used instead of the configuration `--config` or config/ would give. */
  readonly config?: PipelineConfig;
  /** Replaced waits and retry intervals, for runs that are not about timing. */
  readonly timing?: LocalTiming;
}

/** Parses argv and runs; never throws: every failure becomes a message and an exit code. */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  let exitCode = 0;
  try {
    const nodeProblem = nodeVersionProblem();
    if (nodeProblem) throw new UsageError(nodeProblem);
    const configFile = configFlag(argv);
    const config =
      options.config ??
      (configFile === undefined
        ? await loadLocalPipelineConfig(PROJECT_ROOT)
        : loadPipelineConfigFile(configFile, userDirectory(), '--config'));
    const program = buildProgram(
      config,
      (code) => {
        exitCode = code;
      },
      options.timing,
    );
    const unknown =
      swallowedFlagsProblem(argv, program) ??
      flagBeforeCommandProblem(argv, program) ??
      unknownCommandProblem(
        argv,
        program.commands.map((command) => command.name()),
      );
    if (unknown) throw new UsageError(unknown);
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successes; everything else commander rejects is a usage error.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (
      error instanceof UsageError ||
      error instanceof ConfigurationError ||
      error instanceof PipelineConfigError
    ) {
      process.stderr.write(`error: ${error.message}\n`);
      return 2;
    }
    if (error instanceof InvalidInputError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`error: ${(error as Error).name}: ${(error as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  installInterruptHandlers();
  process.exitCode = await main(process.argv.slice(2));
}
