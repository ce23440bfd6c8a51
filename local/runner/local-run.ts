/**
 * What every local command sets up and tears down alike: the vendor (simulator or real, checked
 * once up front), the embedded S3 beside the results, the handler log, the vendor clients, the IAM
 * evaluator (every call a handler makes checked against its function's synthesized policies), and
 * at the end the export of every object written as `<out>/<bucket>/<key>`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ConfigurationError } from '#lambdas/platform/errors';
import { ENV } from '#lambdas/platform/runtime/variables';
import { LEARNED_DURATIONS_PREFIX } from '#lambdas/scan/learned-durations';
import { createVendorClients, type VendorClients } from '#lambdas/vendor-api/clients';
import type { CredentialProvider, VendorAttemptObserver } from '#lambdas/vendor-api/transport/types';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { markAsOutput, UsageError, usableOutputDirectory } from '../cli/cli-checks.ts';
import { type Leftovers, onInterrupt, rescueLeftovers, s3FolderPrefix } from '../cli/interrupts.ts';
import { type PreflightApi, preflight } from '../cli/preflight.ts';
import { loopbackDownloadProblem, resolveVendor, type VendorTarget } from '../cli/vendor-target.ts';
import {
  type ExportReport,
  exportObjects,
  localPathFor,
  type Placement,
  trackWrittenObjects,
  type WrittenObject,
} from '../output/export.ts';
import { runFoldersByEmbeddedS3 } from '../output/resume.ts';
import { createFileLogger, type FileLogger, type LogLevel, logLine } from '../output/run-files.ts';
import { exportStoredObjectsSync, type StoredObject } from '../output/stored-objects.ts';
import { say } from '../output/terminal-text.ts';
import { type IamEvaluator, localRunEvaluator } from '../services/iam/evaluator.ts';
import { type S3rverFixture, startS3rver } from '../services/s3/embedded-s3.ts';
import type { FaultRule } from '../simulator/types.ts';
import { cachedSynthesis } from '../synth/synth-cache.ts';
import type { LocalTiming } from './pipeline.ts';
import { spentFaultsLine } from './spent-faults.ts';

/** Written into the run folder of a run that was interrupted, instead of its summary. */
export const INTERRUPTED_FILE = 'interrupted.json';

/** The folder of a run's folder that holds the list as the run uploaded it. */
export const INPUT_COPY_FOLDER = 'input';

/** Local stand-ins for the two buckets CloudFormation names in AWS. */
export const LOCAL_INPUT_BUCKET = 'pipeline-input';
export const LOCAL_RESULTS_BUCKET = 'pipeline-results';

/**
 * Where a list run's objects go besides `<out>/<bucket>/<key>`: the list as the run uploaded it,
 * into the run's own folder (`<run folder>/input/<name>`), so an edited list rerun is a copy of its
 * own. A run's export and the rescue of a killed run's objects place them alike.
 */
export function inputCopyIn(runFolder: string): (object: WrittenObject) => string | undefined {
  return (object) =>
    object.bucket === LOCAL_INPUT_BUCKET
      ? join(runFolder, INPUT_COPY_FOLDER, basename(object.key))
      : undefined;
}

export interface LocalRunOptions {
  /** The command (`scan`, `rotate`...): names the handler log of a run that has no run folder. */
  readonly command: string;
  readonly out: string;
  /** The demo shortens the simulator's scans. */
  readonly demo: boolean;
  readonly logLevel: LogLevel;
  /** The API the command needs: checked once (key refused, unreachable: exit 2) before any work. */
  readonly api: PreflightApi;
  readonly config: PipelineConfig;
  /** Told about retries and give-ups of vendor calls, as they happen. */
  readonly vendorObserver?: VendorAttemptObserver;
  /** The local name (or id) of the secret that stands for the stack's rotated secret. */
  readonly rotatedSecret?: string;
  /**
   * Replaced waits and retry intervals for the state machines the run executes, and the vendor
   * clients' backoff sleeps (`vendorBackoffMs`). @default {}
   */
  readonly timing?: LocalTiming;
  /** Simulator faults the run starts with (`--fault`); a UsageError against a real vendor. @default [] */
  readonly faults?: readonly FaultRule[];
}

export interface LocalRun {
  /** The usable output directory (absolute). */
  readonly out: string;
  /** `<out>/<results bucket>`. */
  readonly resultsRoot: string;
  readonly vendor: VendorTarget;
  readonly s3: S3rverFixture;
  readonly logs: FileLogger;
  readonly clients: VendorClients;
  /**
   * Checks every AWS call made inside a handler (local/services/iam/attribution.ts) against the synthesized
   * policies; already watching `s3.client`. Watch any other client the command creates.
   */
  readonly iam: IamEvaluator;
  /**
   * Vendor clients like `clients`, with other credentials (e.g. read from a secret, as the deployed
   * handlers read them); closed with the run.
   */
  clientsWith(credentials: CredentialProvider): VendorClients;
  /** Copies every object written so far to `<out>/<bucket>/<key>` (or where `placeExports` says). */
  exportWritten(): Promise<ExportReport>;
  /** Where this run's objects are exported instead of `<out>/<bucket>/<key>` (an interrupt's export too). */
  placeExports(targetOf: (object: WrittenObject) => string | undefined): void;
  /** What every state machine run of this command passes on (LocalRunOptions.timing). */
  readonly timing: LocalTiming;
}

/** Runs `body` inside a local run and always tears it down (log, S3, vendor), whatever happens. */
export async function withLocalRun<T>(
  options: LocalRunOptions,
  body: (run: LocalRun) => Promise<T>,
): Promise<T> {
  const out = await usableOutputDirectory(options.out);
  const vendor = await resolveVendor(process.env, options.demo);
  const startedAt = new Date().toISOString();
  try {
    await preflight(vendor, options.api);
    const downloads = options.api === 'breach' ? loopbackDownloadProblem(vendor) : undefined;
    if (downloads) throw new ConfigurationError(ENV.vendorAllowedOrigins, downloads);
    const faults = options.faults ?? [];
    if (faults.length > 0 && vendor.simulator === undefined) {
      throw new UsageError('--fault needs the built-in simulator: unset the vendor URLs');
    }
    // After the up-front check, which they must not strike.
    for (const rule of faults) vendor.simulator?.addFault(rule);
  } catch (error) {
    await vendor.close();
    throw error;
  }
  await markAsOutput(out);
  // A killed run's objects go where that run would have put them: its list copy into its run folder.
  const killedRuns = runFoldersByEmbeddedS3(join(out, LOCAL_RESULTS_BUCKET));
  say(
    describeLeftovers(
      rescueLeftovers(out, LOCAL_RESULTS_BUCKET, (embeddedS3) => {
        const runFolder = killedRuns.get(embeddedS3);
        return runFolder === undefined ? {} : { targetOf: inputCopyIn(runFolder) };
      }),
      out,
    ),
  );
  // The pid in the name tells a later run whether its owner is still running. The embedded S3 keeps
  // its data beside the results, so the export can hard-link its files; loopback S3 can take every
  // request at once (the SDK's default 50 sockets only queue, and warn).
  const s3Directory = await mkdtemp(join(out, s3FolderPrefix()));
  const s3 = await startS3rver({
    buckets: [LOCAL_INPUT_BUCKET, LOCAL_RESULTS_BUCKET],
    maxSockets: 1024,
    directory: s3Directory,
  });
  const logs = createFileLogger(options.logLevel, () => [vendor.apiKey]);
  const written = trackWrittenObjects(s3.client);
  const placement: {
    targetOf?: (object: WrittenObject) => string | undefined;
    carried: Map<string, string>;
  } = {
    carried: await carryOver(s3, out),
  };
  const forget = onInterrupt(() => keepWhatWasWritten(written.values(), s3, out, logs, placement));
  try {
    const { config } = options;
    const iam = localRunEvaluator((await cachedSynthesis(config)).iam, {
      inputBucket: LOCAL_INPUT_BUCKET,
      resultsBucket: LOCAL_RESULTS_BUCKET,
      ...(options.rotatedSecret ? { rotatedSecret: options.rotatedSecret } : {}),
    });
    iam.watch(s3.client);
    const opened: VendorClients[] = [];
    const backoff = options.timing?.vendorBackoffMs;
    const clientsWith = (credentials: CredentialProvider): VendorClients => {
      const clients = createVendorClients({
        scanApiUrl: vendor.scanApiUrl,
        keysApiUrl: vendor.keysApiUrl,
        breachApiUrl: vendor.breachApiUrl,
        allowedOrigins: vendor.allowedOrigins,
        scanCredentials: credentials,
        keysCredentials: credentials,
        breachCredentials: credentials,
        ...(vendor.orgUuid ? { orgUuid: vendor.orgUuid } : {}),
        ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
        logger: logs.logger,
        ...(options.vendorObserver ? { observer: options.vendorObserver } : {}),
        // Only the sleep: the retry decisions, their delays (as reported) and the retry budget are
        // the client's own (its budget counts a sleep cut short as if it had been slept).
        ...(backoff === undefined ? {} : { sleep: () => delay(backoff).then(() => {}) }),
      });
      opened.push(clients);
      return clients;
    };
    try {
      const result = await body({
        out,
        resultsRoot: join(out, LOCAL_RESULTS_BUCKET),
        vendor,
        s3,
        logs,
        clients: clientsWith(async () => vendor.apiKey),
        iam,
        clientsWith,
        timing: options.timing ?? {},
        exportWritten: () => exportObjects(s3.client, written.values(), out, 8, s3.storedFile, placement),
        placeExports: (targetOf) => {
          placement.targetOf = targetOf;
        },
      });
      say(await spentFaultsLine(vendor.scanApiUrl, startedAt));
      return result;
    } finally {
      await Promise.all(opened.map((clients) => clients.close()));
      // Nothing to say when no handler ran (a usage error found inside the command).
      if (iam.stats().checks > 0) say(describeEvaluation(iam));
    }
  } finally {
    forget();
    await keepUnattachedLog(out, options.command, logs);
    await logs.close(process.stderr);
    await s3.close();
    await rm(s3Directory, { recursive: true, force: true });
    await vendor.close();
  }
}

/**
 * The interrupt that cannot wait (a second Ctrl-C, or a command that cannot stop itself): every
 * object written so far is exported from the embedded S3's own files, at once; only then is its
 * folder removed. Where the files cannot be named (Windows), the folder stays for the next run into
 * the same `--out` to export.
 */
function keepWhatWasWritten(
  written: Iterable<{ bucket: string; key: string }>,
  s3: S3rverFixture,
  out: string,
  logs: FileLogger,
  placement: Placement,
): string {
  const stored: StoredObject[] = [];
  for (const object of written) {
    const file = s3.storedFile(object.bucket, object.key);
    if (file === undefined) return `left ${s3.directory} for the next run into ${out} to export`;
    if (existsSync(file)) stored.push({ ...object, file });
  }
  const report = exportStoredObjectsSync(stored, out, placement);
  rmSync(s3.directory, { recursive: true, force: true });
  const kept = `kept ${report.written + report.unchanged} file(s) it had written under ${out}${report.kept.length > 0 ? ` (${report.kept.length} of yours differing left as they were)` : ''}; removed its embedded S3 files`;
  const logPath = logs.path();
  if (logPath === undefined || !existsSync(dirname(logPath))) return kept;
  const marker = join(dirname(logPath), INTERRUPTED_FILE);
  writeFileSync(
    marker,
    `${JSON.stringify({ interruptedAt: new Date().toISOString(), summary: 'none: the run was interrupted' }, null, 2)}\n`,
  );
  return `${kept}; the run folder says so in ${marker}`;
}

/**
 * The objects a run carries on from the earlier runs into the same `--out`, as the deployed
 * pipeline keeps them in its bucket between runs: the learned scan durations, one record per
 * domain under their prefix. Each is put into the embedded S3 from this tool's exported copy; the
 * copy's hash lets the export replace it with the run's, which is never the case for a file of the
 * user's.
 */
const CARRIED_OVER = [{ bucket: LOCAL_RESULTS_BUCKET, prefix: LEARNED_DURATIONS_PREFIX }] as const;

async function carryOver(s3: S3rverFixture, out: string): Promise<Map<string, string>> {
  const carried = new Map<string, string>();
  for (const { bucket, prefix } of CARRIED_OVER) {
    const folder = localPathFor(out, bucket, prefix);
    const names = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of names.filter((found) => found.isFile())) {
      const path = join(entry.parentPath, entry.name);
      const key = `${prefix}${relative(folder, path).split(sep).join('/')}`;
      const bytes = await readFile(path);
      // Exported again at the end: unchanged, or the run's update of it.
      await s3.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
      carried.set(path, createHash('sha256').update(bytes).digest('hex'));
    }
  }
  return carried;
}

/** What the next run says about the leftovers of runs that were killed (nothing when there were none). */
function describeLeftovers(leftovers: Leftovers, out: string): string {
  const lines = leftovers.rescued.map(
    ({ path, report }) =>
      `Exported what an interrupted earlier run left in ${path}: ${report.written} file(s) written, ${report.unchanged} already there under ${out}; ` +
      (report.kept.length === 0
        ? 'removed the folder\n'
        : `kept the folder: ${report.kept.length} of its files differ from yours, which were left as they were: ${report.kept.join(', ')}\n`),
  );
  if (leftovers.removed.length > 0) {
    lines.push(
      `Removed the empty run folders interrupted earlier runs left: ${leftovers.removed.join(', ')}\n`,
    );
  }
  return lines.join('');
}

/** One line on what the IAM evaluator checked, then each denied call as AWS would word it. */
function describeEvaluation(iam: IamEvaluator): string {
  const { checks, simulations, milliseconds, denials } = iam.stats();
  const head = `IAM: ${checks} handler call(s) checked against the synthesized policies (${simulations} simulated, ${Math.round(milliseconds)} ms), ${denials.length} denied\n`;
  const shown = denials.slice(0, 5).map((d) => `  ${d.handler} ${d.command}: ${d.message}\n`);
  const more = denials.length > shown.length ? [`  … and ${denials.length - shown.length} more\n`] : [];
  return [head, ...shown, ...more].join('');
}

/** Where a command without a run folder of its own (rotate, reconcile) keeps its handler log. */
export const HANDLER_LOGS_FOLDER = 'handler-logs';

/**
 * Handler lines of a command that never gave its log a run folder go to
 * `<out>/handler-logs/<command>-<time>.jsonl`, never to the terminal, and the path is printed.
 */
async function keepUnattachedLog(out: string, command: string, logs: FileLogger): Promise<void> {
  if (logs.unattached() === 0) return;
  const stamp = `${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}-${randomBytes(2).toString('hex')}`;
  logs.attach(join(out, HANDLER_LOGS_FOLDER, `${command}-${stamp}.jsonl`));
  const path = await logs.close(process.stderr);
  say(logLine(path, logs));
}
