/**
 * `npm start`: the real pipeline on this machine (see docs/local-runs.md and docs/contracts.md).
 *
 *   npm start                                   demo: examples/domains.txt against the simulator
 *   npm start -- scan <domain...> [--domains-file F] [--out DIR] [--min-wait S] [--max-wait S]
 *                                 [--quiet | --verbose] [--fresh] [--log-level L]
 *   npm start -- breach --name NAME --emails-file FILE|- [--out DIR] [--log-level L]
 *   npm start -- breach --watchlist FILE [--out DIR] [--log-level L]
 *   npm start -- rotate [--out DIR] [--check-domain D] [--log-level L]
 *
 * Exit codes: 0 everything succeeded; 1 a domain or report failed, or an input was rejected;
 * 2 usage or configuration error.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { ConfigurationError, InvalidInputError } from '#lambdas/platform/errors';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { COMPACT_THRESHOLD } from '../output/progress.ts';
import { type LogLevel, logLevelOption } from '../output/run-files.ts';
import { complain, say, sayIfStillQuiet } from '../output/terminal-text.ts';
import type { LocalTiming } from '../runner/pipeline.ts';
import { addLatencyFlags } from '../services/latency.ts';
import { ROTATE_ANSWER_SHAPES } from '../simulator/rotate-answers.ts';
import {
  collect,
  concurrencyFlag,
  flagBeforeCommandProblem,
  outOption,
  swallowedFlagsProblem,
  userDirectory,
} from './cli-args.ts';
import { configFlag, nodeVersionProblem, UsageError, unknownCommandProblem } from './cli-checks.ts';
import { FAULTS_OF, faultFlagHelp } from './fault-flags.ts';
import { installInterruptHandlers, takeStopRequest } from './interrupts.ts';
import type { PollFlagsText } from './poll-flags.ts';
import type { ScanCommandOptions } from './scan-command.ts';

export { nodeVersionProblem } from './cli-checks.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
const DEMO_LIST = resolve(PROJECT_ROOT, 'examples/domains.txt');

interface RawScanFlags {
  domainsFile?: string;
  out: string;
  minWait?: string;
  maxWait?: string;
  deadline?: string;
  concurrency?: number;
  logLevel: ScanCommandOptions['logLevel'];
  quiet?: boolean;
  verbose?: boolean;
  fault?: string;
  fresh?: boolean;
}

/** The options `scan` and the demo share, without the flags the user left unset. */
function sharedScanOptions(
  flags: RawScanFlags,
): Omit<ScanCommandOptions, 'domains' | 'domainsFile' | 'demo'> {
  return {
    out: flags.out,
    ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
    logLevel: flags.logLevel,
    ...(flags.quiet ? { output: 'compact' as const } : flags.verbose ? { output: 'verbose' as const } : {}),
    ...(flags.fault === undefined ? {} : { fault: flags.fault }),
    ...(flags.fresh ? { fresh: true } : {}),
  };
}

/**
 * A flag value checked once its command runs (its checker loads a schema, not loaded for `--help`),
 * worded as commander words a value its parser refuses.
 */
function flagValue<T>(flag: string, text: string | undefined, parse: (text: string) => T): T | undefined {
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (error) {
    throw new UsageError(`option '${flag}' argument '${text}' is invalid. ${(error as Error).message}`);
  }
}

/**
 * Every command and flag, as `--help` shows them. Nothing here loads the pipeline: each action
 * loads the configuration (`loadConfig`) and its command's module only when it runs, so `--help`
 * and a usage error answer before the AWS SDK, CDK and the pipeline are read (bench: `cli`).
 */
export function buildProgram(
  loadConfig: () => Promise<PipelineConfig>,
  setExitCode: (code: number) => void,
  timing: LocalTiming = {},
): Command {
  /** The configuration, then the command: only the action that runs loads either. */
  const runWith = async (run: (config: PipelineConfig) => Promise<number>) => {
    // Loading the pipeline, the vendor check and the embedded S3 take seconds on a loaded machine.
    sayIfStillQuiet(
      'Starting: loading the pipeline, checking the vendor and starting the embedded S3 (seconds; more on a busy machine)\n',
    );
    setExitCode(await run(await loadConfig()));
  };
  const scan = async (options: Omit<ScanCommandOptions, 'timing'>, pollFlags: PollFlagsText) => {
    const { parsePollFlags } = await import('./poll-flags.ts');
    const waits = parsePollFlags(pollFlags);
    await runWith(async (config) =>
      (await import('./scan-command.ts')).runScanCommand({ ...options, ...waits, timing }, config),
    );
  };
  const configOption = () =>
    new Option('--config <file>', 'pipeline configuration file (as cdk synth -c pipelineConfigFile=FILE)');
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
      .addOption(configOption())
      .addOption(outOption('where results land as <dir>/<bucket>/<key>'))
      // Checked when the command runs (parsePollFlags), with the schema the configuration uses.
      .option('--min-wait <seconds>', 'first wait of the poll loop')
      .option('--max-wait <seconds>', 'largest wait of the poll loop')
      .option('--deadline <seconds>', 'give up on a scan (ScanTimedOut) after this long')
      .option('--concurrency <n>', 'domains scanned at once', concurrencyFlag)
      .addOption(
        new Option(
          '--quiet',
          `compact output: one progress line, then only the problems (the default above ${COMPACT_THRESHOLD} domains)`,
        ).conflicts('verbose'),
      )
      .addOption(new Option('--verbose', 'a line per domain and the full table, however long the list'))
      .option('--fault <spec>', faultFlagHelp(FAULTS_OF.scan))
      .option(
        '--fresh',
        'a new run even when an earlier run of this list into --out did not finish (by default it is resumed)',
      )
      .addOption(logLevelOption());
  withScanFlags(
    program
      .command('scan')
      .description('scan the given domains and/or a domain-list file')
      .argument('[domains...]', 'domains or URLs to scan')
      .option('--domains-file <file>', "a .txt or .csv domain list ('-': standard input)"),
  ).action(async (domains: string[], flags: RawScanFlags) => {
    // Found without loading anything: a usage error answers at once.
    if (domains.length === 0 && !flags.domainsFile) {
      throw new UsageError('give at least one domain or --domains-file FILE');
    }
    await scan(
      {
        domains,
        ...(flags.domainsFile ? { domainsFile: flags.domainsFile } : {}),
        ...sharedScanOptions(flags),
        demo: false,
      },
      flags,
    );
  });
  program
    .command('breach')
    .description("one person's breach report: recon, then the verified ZIP archived")
    .option('--name <name>', 'the person the report is about')
    .option(
      '--emails-file <file>',
      "their addresses, one a line ('-': standard input), kept off the command line",
    )
    .option(
      '--email <address>',
      'an address of theirs (repeat for more; visible in ps: prefer --emails-file)',
      collect,
      [],
    )
    .option('--watchlist <file>', 'a .csv or .json watchlist: one report per person')
    .addOption(configOption())
    .addOption(outOption('where results land as <dir>/<bucket>/<key>'))
    .option('--fault <spec>', faultFlagHelp(FAULTS_OF.breach))
    .addOption(logLevelOption())
    .action(
      async (flags: {
        name?: string;
        email: string[];
        emailsFile?: string;
        watchlist?: string;
        out: string;
        logLevel: LogLevel;
        fault?: string;
      }) => {
        await runWith(async (config) =>
          (await import('./breach-command.ts')).runBreachCommand(
            {
              ...(flags.name === undefined ? {} : { name: flags.name }),
              ...(flags.watchlist === undefined ? {} : { watchlist: flags.watchlist }),
              emails: flags.email,
              ...(flags.emailsFile === undefined ? {} : { emailsFile: flags.emailsFile }),
              out: flags.out,
              logLevel: flags.logLevel,
              ...(flags.fault === undefined ? {} : { fault: flags.fault }),
              timing,
            },
            config,
          ),
        );
      },
    );
  program
    .command('rotate')
    .description(
      'rotate the org key with the real rotation function (as Secrets Manager calls it), then scan with the new key',
    )
    .addOption(configOption())
    .addOption(outOption('where the rotation record and the check scan land'))
    .option('--check-domain <domain>', 'the domain scanned with the rotated key', 'example.com')
    .option(
      '--fault <spec>',
      `simulator only, repeatable: rotate-answer=<shape>[,decoys=N][,seconds=S][,bytes=N][,key-at=start|end] answers the rotate in that shape (${ROTATE_ANSWER_SHAPES.join(', ')}); rotate-delay=<seconds> refuses the new key that long`,
      (spec: string, earlier: string[] = []) => [...earlier, spec],
    )
    // Checked when the command runs (parsePropagationSeconds), with the configuration's bounds.
    .option(
      '--propagation-seconds <seconds>',
      'how long a new key the vendor refuses is probed again before a lockout (default: rotation.keyPropagationSeconds, 180)',
    )
    .addOption(logLevelOption())
    .action(
      async (flags: {
        out: string;
        logLevel: LogLevel;
        checkDomain: string;
        fault?: string[];
        propagationSeconds?: string;
      }) => {
        const rotate = await import('./rotate-command.ts');
        const propagationSeconds = flagValue(
          '--propagation-seconds <seconds>',
          flags.propagationSeconds,
          rotate.parsePropagationSeconds,
        );
        await runWith((config) =>
          rotate.runRotateCommand(
            {
              out: flags.out,
              logLevel: flags.logLevel,
              checkDomain: flags.checkDomain,
              fault: flags.fault,
              propagationSeconds,
              timing,
            },
            config,
          ),
        );
      },
    );
  program
    .command('reconcile')
    .description(
      'archive finished scans the pipeline never archived (with the simulator: an orphan it makes first), then show a second run stores nothing',
    )
    .addOption(configOption())
    .addOption(outOption('where results land as <dir>/<bucket>/<key>'))
    .option('--orphan-domain <domain>', 'the domain whose scan the simulator orphans', 'orphan.example.com')
    .addOption(logLevelOption())
    .action(async (flags: { out: string; logLevel: LogLevel; orphanDomain: string }) => {
      await runWith(async (config) =>
        (await import('./reconcile-command.ts')).runReconcileCommand(
          { out: flags.out, logLevel: flags.logLevel, orphanDomain: flags.orphanDomain, timing },
          config,
        ),
      );
    });
  withScanFlags(
    program.command('demo', { isDefault: true }).description(`scan ${DEMO_LIST} against the simulator`),
  ).action(async (flags: RawScanFlags) => {
    say(`Demo: scanning ${DEMO_LIST}\n`);
    await scan({ domains: [], domainsFile: DEMO_LIST, ...sharedScanOptions(flags), demo: true }, flags);
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
    // Read by the command that runs, not before: --help and usage errors need none of it.
    const loadConfig = async (): Promise<PipelineConfig> => {
      if (options.config) return options.config;
      if (configFile !== undefined) {
        const { loadPipelineConfigFile } = await import('../../lib/config/load.ts');
        return loadPipelineConfigFile(configFile, userDirectory(), '--config');
      }
      const { loadLocalPipelineConfig } = await import('../synth/config.ts');
      return loadLocalPipelineConfig(PROJECT_ROOT);
    };
    const program = buildProgram(
      loadConfig,
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
    // A run the user stopped ends as the shell expects of one (130, 143), once it has kept its results.
    return takeStopRequest()?.exitCode ?? exitCode;
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
      complain(`error: ${error.message}\n`);
      return 2;
    }
    if (error instanceof InvalidInputError) {
      complain(`error: ${error.message}\n`);
      return 1;
    }
    complain(`error: ${(error as Error).name}: ${(error as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // The X-Ray SDK, which every handler module's Tracer imports, follows every promise of the
  // process (an async hook) from the moment it loads, unless in manual mode; the Tracer is off
  // outside Lambda and the local runner traces nothing, so the hook only cost CPU (about 5 % of a
  // 30-domain run). Set before any command module, and so the SDK, is loaded.
  process.env.AWS_XRAY_MANUAL_MODE ??= 'true';
  installInterruptHandlers();
  process.exitCode = await main(process.argv.slice(2));
}
