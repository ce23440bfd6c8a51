/**
 * `npm start`: the real pipeline on this machine (see "Contracts" in the README).
 *
 *   npm start                                   demo: examples/domains.txt against the simulator
 *   npm start -- scan <domain...> [--domains-file F] [--out DIR] [--min-wait S] [--max-wait S]
 *
 * Exit codes: 0 everything succeeded; 1 a domain failed or an input line was rejected;
 * 2 usage or configuration error.
 */
import { constants } from 'node:fs';
import { access, mkdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  ConfigurationError,
  InvalidInputError,
  VendorAuthError,
  VendorNetworkError,
  VendorTimeoutError,
} from '#core/errors';
import { redactSecrets } from '#core/redact';
import type { ScanLogger } from '#core/scan/deps';
import {
  largestDeadlineWithinBudget,
  POLL_BOUNDS,
  type PollSettingNamer,
  type PollSettings,
  pollSettingsSchema,
} from '#core/scan/poll-schedule';
import { numberFromText, problemsOf } from '#core/schema';
import { createVendorClients, ScanClient } from '#core/vendor/index';
import {
  loadPipelineConfigFile,
  type PipelineConfig,
  PipelineConfigError,
  vendorUrlProblem,
} from '../lib/config/index.ts';
import { loadLocalPipelineConfig } from './config.ts';
import { scanDomainStateMachine } from './definitions.ts';
import { startS3rver } from './embedded-s3.ts';
import { exportObjects, trackWrittenObjects } from './export.ts';
import { runDomainList } from './pipeline.ts';
import { createConsoleReporter, formatSummaryTable, summaryHasFailures } from './progress.ts';
import { startVendorSimulator } from './simulator/index.ts';
import { cachedTemplate } from './synth-cache.ts';

/** Local stand-ins for the two buckets CloudFormation names in AWS. */
export const LOCAL_INPUT_BUCKET = 'pipeline-input';
export const LOCAL_RESULTS_BUCKET = 'pipeline-results';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');
const DEMO_LIST = resolve(PROJECT_ROOT, 'examples/domains.txt');

/** The demo's scans finish in a few polls: short waits, and a deadline that fits them. */
const DEMO_POLL = { minWaitSeconds: 1, maxWaitSeconds: 2, deadlineSeconds: 600 } as const;

/** The poll settings as this command names them: its flags, or the configuration for the rest. */
const pollFlagNamer: PollSettingNamer = (field) => {
  switch (field) {
    case 'minWaitSeconds':
      return '--min-wait';
    case 'maxWaitSeconds':
      return '--max-wait';
    case 'growthFactor':
      return 'pipeline.poll.growthFactor';
    default:
      return '--deadline';
  }
};

class UsageError extends Error {
  override name = 'UsageError';
}

export interface ScanCommandOptions {
  readonly domains: readonly string[];
  readonly domainsFile?: string;
  readonly out: string;
  readonly minWait?: number;
  readonly maxWait?: number;
  readonly deadline?: number;
  readonly concurrency?: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** The demo shortens the poll waits and the simulator's scans. */
  readonly demo: boolean;
}

interface VendorTarget {
  readonly scanApiUrl: string;
  readonly keysApiUrl: string;
  readonly breachApiUrl: string;
  readonly apiKey: string;
  readonly orgUuid: string | undefined;
  readonly label: string;
  close(): Promise<void>;
}

/**
 * A vendor base URL from the environment, held to the rule synth applies to the configuration:
 * https, or plain http only to a loopback host (the key would otherwise travel in clear).
 */
function readUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name]?.trim() || fallback;
  const problem = vendorUrlProblem(value);
  if (problem) throw new ConfigurationError(name, problem);
  return value.replace(/\/+$/, '');
}

/** The real vendor when SCAN_API_URL is set, else the built-in simulator on a free loopback port. */
async function resolveVendor(env: NodeJS.ProcessEnv, demo: boolean): Promise<VendorTarget> {
  if (env.SCAN_API_URL?.trim()) {
    const scanApiUrl = readUrl(env, 'SCAN_API_URL', '');
    const apiKey = env.VENDOR_API_KEY?.trim();
    if (!apiKey) throw new ConfigurationError('VENDOR_API_KEY', 'is required when SCAN_API_URL is set');
    return {
      scanApiUrl,
      keysApiUrl: readUrl(env, 'KEYS_API_URL', scanApiUrl),
      breachApiUrl: readUrl(env, 'BREACH_API_URL', scanApiUrl),
      apiKey,
      orgUuid: env.ORG_UUID?.trim() || undefined,
      label: scanApiUrl,
      close: async () => {},
    };
  }
  const simulator = await startVendorSimulator({ pollsToFinish: demo ? 2 : 3 });
  return {
    scanApiUrl: simulator.url,
    keysApiUrl: simulator.url,
    breachApiUrl: simulator.url,
    get apiKey() {
      return simulator.apiKey;
    },
    orgUuid: simulator.orgUuid,
    label: `built-in simulator at ${simulator.url}`,
    close: () => simulator.close(),
  };
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;

/** Compact JSON lines on stderr, at or above `level`; known secrets are scrubbed as a last defence. */
function createLocalLogger(level: keyof typeof LEVELS, secrets: () => string[]): ScanLogger {
  const emit = (lineLevel: keyof typeof LEVELS) => (message: string, extra?: Record<string, unknown>) => {
    if (LEVELS[lineLevel] < LEVELS[level]) return;
    const line = JSON.stringify({ level: lineLevel.toUpperCase(), message, ...extra });
    process.stderr.write(`${redactSecrets(line, secrets())}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** Runs a scan list locally; returns the exit code. */
export async function runScanCommand(options: ScanCommandOptions, config: PipelineConfig): Promise<number> {
  if (options.domains.length === 0 && !options.domainsFile) {
    throw new UsageError('give at least one domain or --domains-file FILE');
  }
  const file = options.domainsFile
    ? { name: basename(options.domainsFile), bytes: await readDomainsFile(options.domainsFile) }
    : undefined;
  // The intake only treats these suffixes as domain lists; say so before anything starts.
  if (
    options.domainsFile &&
    file &&
    !config.intake.suffixes.some((s) => file.name.toLowerCase().endsWith(s))
  ) {
    throw new UsageError(
      `--domains-file ${options.domainsFile}: must end with one of ${config.intake.suffixes.join(', ')}`,
    );
  }
  const { poll, deadlineNote } = localPollSettings(config, options);
  if (options.domains.length === 0 && file && !hasDomainLines(file.bytes)) {
    throw new InvalidInputError(
      `--domains-file ${options.domainsFile}`,
      'is empty: it has no domain lines (only blank lines or # comments)',
    );
  }
  const out = await usableOutputDirectory(options.out);

  const vendor = await resolveVendor(process.env, options.demo);
  try {
    await preflight(vendor);
  } catch (error) {
    await vendor.close();
    throw error;
  }
  const s3 = await startS3rver({ buckets: [LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET] });
  try {
    const written = trackWrittenObjects(s3.client);
    const logger = createLocalLogger(options.logLevel, () => [vendor.apiKey]);
    const credentials = async () => vendor.apiKey;
    const clients = createVendorClients({
      scanApiUrl: vendor.scanApiUrl,
      keysApiUrl: vendor.keysApiUrl,
      breachApiUrl: vendor.breachApiUrl,
      scanCredentials: credentials,
      keysCredentials: credentials,
      breachCredentials: credentials,
      ...(vendor.orgUuid ? { orgUuid: vendor.orgUuid } : {}),
      ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
      logger,
    });
    const scanDefinition = scanDomainStateMachine(await cachedTemplate(config)).definition;
    process.stdout.write(
      `Vendor: ${vendor.label}\nPoll waits: ${poll.minWaitSeconds}s growing x${poll.growthFactor} to ${poll.maxWaitSeconds}s, ` +
        `deadline ${poll.deadlineSeconds}s${deadlineNote}; concurrency ${options.concurrency ?? config.scan.maxConcurrency}\n`,
    );
    const run = await runDomainList(
      {
        s3: s3.client,
        inputBucket: LOCAL_INPUT_BUCKET,
        resultsBucket: LOCAL_RESULTS_BUCKET,
        scanDefinition,
        scanClient: clients.scan,
        poll,
        ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
        concurrency: options.concurrency ?? config.scan.maxConcurrency,
        intakePrefix: config.intake.prefix,
        intakeSuffixes: config.intake.suffixes,
        maxListBytes: config.intake.maxListBytes,
        allowSpecialUse: config.scan.allowSpecialUseDomains,
        logger,
        onProgress: createConsoleReporter(process.stdout),
      },
      { domains: options.domains, ...(file ? { file } : {}) },
    );
    const exported = await exportObjects(s3.client, written.values(), out);
    process.stdout.write(
      `\n${formatSummaryTable(run.summary, join(relative(process.cwd(), out) || '.', LOCAL_RESULTS_BUCKET))}`,
    );
    process.stdout.write(
      `Summary: ${join(relative(process.cwd(), out) || '.', LOCAL_RESULTS_BUCKET, run.summaryKey)}\n`,
    );
    for (const kept of exported.kept) {
      process.stdout.write(
        `Kept your existing ${kept}: it differs from this run's copy, which was not written.\n`,
      );
    }
    return summaryHasFailures(run.summary) ? 1 : 0;
  } finally {
    await s3.close();
    await vendor.close();
  }
}

/**
 * The poll settings of a local run: the configuration's (the deployed defaults), the demo's short
 * waits, then the flags. When the waits are given without `--deadline`, the deadline is the largest
 * that keeps the loop within the history budget (at most the configured one), and the run says so.
 * Anything else the schema refuses is a usage error naming every flag involved.
 */
export function localPollSettings(
  config: PipelineConfig,
  options: Pick<ScanCommandOptions, 'demo' | 'minWait' | 'maxWait' | 'deadline'>,
): { poll: PollSettings; deadlineNote: string } {
  const waits = {
    ...config.poll,
    ...(options.demo ? DEMO_POLL : {}),
    ...(options.minWait === undefined ? {} : { minWaitSeconds: options.minWait }),
    ...(options.maxWait === undefined ? {} : { maxWaitSeconds: options.maxWait }),
  };
  let deadlineNote = '';
  let deadlineSeconds = options.deadline ?? waits.deadlineSeconds;
  const waitsGiven = options.minWait !== undefined || options.maxWait !== undefined;
  if (options.deadline === undefined && waitsGiven && waits.maxWaitSeconds >= waits.minWaitSeconds) {
    const largest = largestDeadlineWithinBudget(waits);
    if (largest < deadlineSeconds) {
      deadlineNote = ` (chosen: the largest that fits the history budget for these waits; the default is ${deadlineSeconds}s)`;
      deadlineSeconds = largest;
    }
  }
  const result = pollSettingsSchema(pollFlagNamer).safeParse({ ...waits, deadlineSeconds });
  if (!result.success) {
    const problems = problemsOf(result.error, ([field]) =>
      pollFlagNamer(field as keyof PollSettings | undefined),
    );
    throw new UsageError(problems.map(({ setting, problem }) => `${setting} ${problem}`).join('; '));
  }
  return { poll: result.data, deadlineNote };
}

/** True when the list has at least one line that is not blank, a `#` comment or only a BOM. */
function hasDomainLines(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  return text.split(/\r?\n/).some((line) => {
    const trimmed = line.trim();
    return trimmed !== '' && !trimmed.startsWith('#');
  });
}

/**
 * `--out` must be a directory this process can write, checked before anything runs: a run that
 * scans a thousand domains and then cannot save them has wasted the vendor's and the user's time.
 */
export async function usableOutputDirectory(dir: string): Promise<string> {
  const path = resolve(dir);
  const existing = await stat(path).catch(() => undefined);
  if (existing && !existing.isDirectory())
    throw new UsageError(`--out ${dir}: exists and is not a directory`);
  try {
    if (!existing) await makeDirectories(path);
    await access(path, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unusable';
    throw new UsageError(`--out ${dir}: cannot be created or written (${code})`);
  }
  return path;
}

/**
 * `mkdir -p`, one level at a time. Node's `mkdir({ recursive: true })` spins forever on some
 * pseudo file systems (`/proc/nope` never returns), so the missing levels are created one by one
 * below the nearest ancestor that exists.
 */
async function makeDirectories(path: string): Promise<void> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    const found = await stat(current).catch(() => undefined);
    if (found) {
      if (!found.isDirectory())
        throw Object.assign(new Error(`${current} is not a directory`), { code: 'ENOTDIR' });
      break;
    }
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const level of missing) await mkdir(level);
}

/**
 * One authenticated call before any work, so a wrong key or an unreachable vendor is one clear
 * error instead of every domain of a long list failing the same way. `GET /stats` is cheap, read
 * only, and needs the key. A vendor that answers anything else (a 5xx, a 404 for a missing route)
 * is reachable and accepts the key, so the run goes on and the scans report what they meet.
 */
async function preflight(vendor: VendorTarget): Promise<void> {
  const client = new ScanClient({
    baseUrl: vendor.scanApiUrl,
    credentials: async () => vendor.apiKey,
    retry: { maxAttempts: 1 },
    requestTimeoutMs: 15_000,
  });
  try {
    await client.getStats();
  } catch (error) {
    if (error instanceof VendorAuthError) {
      throw new ConfigurationError(
        'VENDOR_API_KEY',
        `is refused by the vendor at ${vendor.scanApiUrl} (HTTP ${error.status})`,
      );
    }
    if (
      (error instanceof VendorNetworkError && error.requestNotSent) ||
      error instanceof VendorTimeoutError
    ) {
      const reason = error instanceof VendorNetworkError ? (error.code ?? 'connection failed') : 'timed out';
      throw new ConfigurationError('SCAN_API_URL', `cannot be reached: ${vendor.scanApiUrl} (${reason})`);
    }
  } finally {
    await client.close();
  }
}

/** A Levenshtein distance small enough for command names. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min((row[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

/**
 * A first word that is not a command would otherwise reach the default (demo) command as "too
 * many arguments". Suggest the command that was meant, or `scan` for something that looks like a
 * domain.
 */
function unknownCommandProblem(argv: readonly string[], commands: readonly string[]): string | undefined {
  const first = argv[0];
  if (first === undefined || first.startsWith('-') || commands.includes(first)) return undefined;
  const closest = commands
    .map((command) => ({ command, distance: editDistance(first.toLowerCase(), command) }))
    .sort((a, b) => a.distance - b.distance)[0];
  if (closest && closest.distance <= 2)
    return `unknown command '${first}'. Did you mean '${closest.command}'?`;
  if (first.includes('.')) return `unknown command '${first}'. To scan it: npm start -- scan ${first}`;
  return `unknown command '${first}'. Commands: ${commands.join(', ')}`;
}

/** `--config FILE` (or `--config=FILE`) from argv, read before the commands are built. */
function configFlag(argv: readonly string[]): string | undefined {
  for (const [index, arg] of argv.entries()) {
    if (arg === '--config') {
      const value = argv[index + 1];
      if (value === undefined || value.startsWith('-')) throw new UsageError('--config needs a FILE');
      return value;
    }
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

/** The runner needs Node 22 (aws-local-stepfunctions uses Promise.withResolvers). */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= 22) return undefined;
  return (
    `npm start needs Node.js 22 or later, and this is Node.js ${version}. ` +
    'Run it through npm (npm start, npm test, npx tsx ...): npm ci installs Node 22 (the node@22 package) ' +
    'and npm puts it first on the PATH of its scripts.'
  );
}

async function readDomainsFile(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`--domains-file ${path}: cannot be read (${code})`);
  }
}

/** A poll flag held to the bounds the configuration and the handlers use (POLL_BOUNDS). */
function pollFlag(flag: string, field: keyof PollSettings) {
  const schema = numberFromText(POLL_BOUNDS[field]);
  return (value: string): number => {
    const parsed = schema.safeParse(value);
    if (!parsed.success)
      throw new InvalidArgumentError(`${flag} ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
    return parsed.data;
  };
}

function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 1000) {
    throw new InvalidArgumentError(
      `--concurrency must be a whole number between 1 and 1000 (got ${JSON.stringify(value)})`,
    );
  }
  return parsed;
}

interface RawScanFlags {
  domainsFile?: string;
  out: string;
  minWait?: number;
  maxWait?: number;
  deadline?: number;
  concurrency?: number;
  logLevel: ScanCommandOptions['logLevel'];
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
  };
}

export function buildProgram(config: PipelineConfig, setExitCode: (code: number) => void): Command {
  const program = new Command('npm start --')
    .description(
      'Run the vendor security pipeline locally: the synthesized state machine, the real handlers, embedded S3.',
    )
    .exitOverride()
    // One line of error, not the whole usage: the hint says where the usage is.
    .showHelpAfterError('(npm start -- --help lists every command and flag)');
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
      .option('--concurrency <n>', 'domains scanned at once', positiveInteger)
      .addOption(
        new Option('--log-level <level>', 'handler log level on stderr')
          .choices(['debug', 'info', 'warn', 'error'])
          .default('warn'),
      );
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
        },
        config,
      ),
    );
  });
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
        },
        config,
      ),
    );
  });
  return program;
}

/** Parses argv and runs; never throws: every failure becomes a message and an exit code. */
export async function main(argv: readonly string[], configOverride?: PipelineConfig): Promise<number> {
  let exitCode = 0;
  try {
    const nodeProblem = nodeVersionProblem();
    if (nodeProblem) throw new UsageError(nodeProblem);
    const configFile = configFlag(argv);
    const config =
      configOverride ??
      (configFile === undefined
        ? await loadLocalPipelineConfig(PROJECT_ROOT)
        : loadPipelineConfigFile(configFile, process.cwd(), '--config'));
    const program = buildProgram(config, (code) => {
      exitCode = code;
    });
    const unknown = unknownCommandProblem(
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
  process.exitCode = await main(process.argv.slice(2));
}
