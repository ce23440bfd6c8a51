/**
 * `npm start -- reconcile`: scan reconciliation with the real handler, against the simulator or the
 * real vendor, then a second run that must store nothing new. Each run is followed by the operations
 * workflow's vendor statistics job, as the deployed schedule runs both, which shows the vendor's own
 * counts and keeps the day's snapshot.
 *
 * - With the simulator it first makes what reconciliation is for: a scan the pipeline never
 *   archived. One domain goes through the synthesized ScanDomain while the simulator loses
 *   StartScan's answer after creating the scan, so the execution ends ScanRejected; the vendor then
 *   finishes the scan (the simulator's scans advance when polled). The orphans are seconds old, so
 *   the minimum age is 0 here; everything else comes from the configuration.
 * - Against the real vendor nothing is staged, and the configured minimum age applies. The
 *   manifests and failure records of earlier runs into the same `--out` are loaded first, so a
 *   second invocation does not archive again what the first one did.
 *
 * Exit 0 when both runs finished without a failed archive (and, with the simulator, the first run
 * archived the orphan and the second archived nothing); 1 otherwise; 2 for usage errors.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { VENDOR_STATS_FOLDER } from '#lambdas/operations/registry';
import {
  recordVendorStatistics,
  VENDOR_STATS_LATEST_KEY,
  type VendorStatsOutcome,
} from '#lambdas/operations/vendor-stats';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { createScanDeps } from '#lambdas/scan/deps';
import { reconcileScans, type ScanReconcileResult } from '#lambdas/scan/reconcile-scans';
import type { ReconcileSettings } from '#lambdas/scan/reconcile-settings';
import { FAILURE_FILE } from '#lambdas/scan/record-scan-failure';
import { createScanSettings } from '#lambdas/scan/settings';
import { MANIFEST_FILE } from '#lambdas/scan/write-scan-manifest';
import { reconcileFunctionSettings } from '../../lib/config/reconciliation-schema.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import type { LogLevel } from '../output/run-files.ts';
import { say as sayText } from '../output/terminal-text.ts';
import { LOCAL_RESULTS_BUCKET, type LocalRun, withLocalRun } from '../runner/local-run.ts';
import { scanOneDomain } from '../runner/one-domain-scan.ts';
import type { LocalTiming } from '../runner/pipeline.ts';
import { runAs } from '../services/iam/attribution.ts';
import { recordS3Commands } from '../services/s3/embedded-s3.ts';
import { lostStartAnswer } from '../simulator/faults.ts';
import { userPath } from './cli-args.ts';
import { domainFlag } from './cli-checks.ts';

const COMMAND = 'reconcile';

export interface ReconcileCommandOptions {
  readonly out: string;
  readonly logLevel: LogLevel;
  /** The domain whose scan the simulator orphans. */
  readonly orphanDomain: string;
  /** @default {}: the orphan's scan waits and retries as the definition says */
  readonly timing?: LocalTiming;
}

const WRITES = /^(PutObject|CopyObject|CreateMultipartUpload|DeleteObject)Command (.+)$/;

export async function runReconcileCommand(
  options: ReconcileCommandOptions,
  config: PipelineConfig,
): Promise<number> {
  // As scan would judge it: an orphan of a domain the pipeline refuses proves nothing.
  domainFlag(
    options.orphanDomain,
    '--orphan-domain',
    config.scan.allowSpecialUseDomains,
    'nothing was scanned',
  );
  return withLocalRun(
    {
      command: COMMAND,
      out: userPath(options.out),
      demo: true,
      logLevel: options.logLevel,
      api: 'scan',
      config,
      timing: options.timing,
    },
    async (run) => {
      const say = (line: string) => sayText(`${line}\n`);
      say(`Vendor: ${run.vendor.label}`);
      const loaded = await loadEarlierRecords(run);
      if (loaded > 0)
        say(`Loaded ${loaded} manifests and failure records of earlier runs from ${run.resultsRoot}`);
      const simulator = run.vendor.simulator;
      let orphanUuid: string | undefined;
      if (simulator !== undefined) {
        // A lost answer alone is settled by adopting the scan: the listing is unreadable too while
        // StartScan looks, so the start stays unresolved (ScanRejected) and the scan an orphan.
        simulator.clearFaults();
        const because = 'reconcile makes an orphan: a scan whose start answer is lost and never settled';
        simulator.addFault(lostStartAnswer(because));
        const blind = simulator.addFault({
          api: 'scan',
          method: 'GET',
          path: '/scans',
          times: Number.POSITIVE_INFINITY,
          fault: { type: 'status', status: 503 },
          injectedBecause: because,
        });
        const scanned = await scanOneDomain(run, config, run.clients.scan, options.orphanDomain).finally(
          blind,
        );
        const listed = await run.clients.scan.listScans();
        const scans = (listed.raw as { scans?: { uuid: string; domain: string }[] }).scans ?? [];
        orphanUuid = scans.find((scan) => scan.domain === options.orphanDomain)?.uuid;
        say(
          `Made an orphan: the simulator created scan ${orphanUuid} of ${options.orphanDomain} and lost StartScan's answer; the execution ended ${scanned.state === 'rejected' ? 'ScanRejected' : scanned.state}`,
        );
        // Time passes at the vendor: its scans advance when polled.
        for (let poll = 0; orphanUuid !== undefined && poll < 10; poll++) {
          const status = await run.clients.scan.getStatus(orphanUuid);
          if (status.state === 'succeeded' || status.state === 'failed') break;
        }
      }
      const settings: ReconcileSettings = {
        ...reconcileFunctionSettings(config.scan.reconciliation, {
          deadlineSeconds: config.poll.deadlineSeconds,
          deleteAtVendorAfterManifest: config.scan.deleteAtVendorAfterManifest,
        }),
        ...(simulator === undefined ? {} : { minAgeSeconds: 0 }),
      };
      const reconcileOnce = async (label: string) => {
        // The run's own client: what it writes is exported to --out with everything else.
        const client = run.s3.client;
        const writes = recordS3Commands(client, { withKeys: true });
        const result = await runAs('reconcile-scans', () =>
          reconcileScans({
            ...createScanDeps({
              s3: client,
              scanClient: run.clients.scan,
              logger: run.logs.logger,
              metrics: createMetricsRecorder(),
              settings: createScanSettings({
                resultsBucket: LOCAL_RESULTS_BUCKET,
                ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
                listFields: config.scan.reconciliation.listFields,
              }),
            }),
            inventory: run.clients.scan,
            reconcile: settings,
          }),
        );
        const statistics = await runAs('record-vendor-stats', () =>
          recordVendorStatistics({
            s3: client,
            settings: {
              resultsBucket: LOCAL_RESULTS_BUCKET,
              statusVocabulary: config.scan.statusVocabulary,
              statsFields: config.scan.reconciliation.statsFields,
            },
            metrics: createMetricsRecorder(),
            logger: run.logs.logger,
            clock: () => new Date(),
            stats: run.clients.scan,
          }),
        );
        // A day's snapshot that an earlier read kept was refused (If-None-Match), not written.
        const refused = statistics.history?.written === false ? statistics.history.key : undefined;
        const written = [...new Set(writes.flatMap((entry) => WRITES.exec(entry)?.[2] ?? []))].filter(
          (key) => key !== refused,
        );
        report(say, label, result, written, settings.minAgeSeconds);
        reportStatistics(say, statistics);
        return { result, written, statistics };
      };
      const first = await reconcileOnce('First run');
      const second = await reconcileOnce('Second run');
      await run.exportWritten();
      // The statistics job's latest read is its bookkeeping; the day's snapshot is written once.
      const bookkeeping = new Set([second.result.recordKey, VENDOR_STATS_LATEST_KEY]);
      const storedNothingNew = second.written.every((key) => bookkeeping.has(key));
      say(
        storedNothingNew
          ? "The second run stored nothing new: only its own record and the vendor statistics' latest read."
          : `The second run wrote ${second.written.filter((key) => !bookkeeping.has(key)).join(', ')}`,
      );
      say(`Results: ${run.resultsRoot}`);
      const failed = first.result.counts.failed + second.result.counts.failed;
      const orphanArchived = orphanUuid === undefined || first.result.counts.archived >= 1;
      return failed === 0 && storedNothingNew && second.result.counts.archived === 0 && orphanArchived
        ? 0
        : 1;
    },
  );
}

function report(
  say: (line: string) => void,
  label: string,
  result: ScanReconcileResult,
  written: readonly string[],
  minAgeSeconds: number,
): void {
  const c = result.counts;
  // A scan younger than the minimum age may still be in a workflow's hands: say what the age is,
  // and where it is set, so "too recent" is never a dead end.
  const tooRecent =
    c.tooRecent === 0
      ? '0 too recent'
      : `${c.tooRecent} too recent (younger than ${ageText(minAgeSeconds)}: scan.reconciliation.minAgeMinutes, in a --config file, archives them sooner)`;
  say(
    `${label}: ${c.listed} listed, ${c.archived} archived, ${c.alreadyArchived} already archived, ${c.unfinished} unfinished, ${c.vendorFailed} failed at the vendor, ${tooRecent}, ${c.beyondHorizon} beyond the horizon, ${c.deferred} deferred, ${c.failed} could not be archived, ${c.unreadable} unreadable; ${c.linkedFailures} failure records linked; ${written.length} objects written`,
  );
  for (const key of written.filter(
    (k) => k.endsWith(`/${MANIFEST_FILE}`) || k.endsWith(`/${FAILURE_FILE}`),
  )) {
    say(`  wrote ${key}`);
  }
  say(`  record: ${result.recordKey}`);
}

/** What the statistics job read, or why it could not. */
function reportStatistics(say: (line: string) => void, outcome: VendorStatsOutcome): void {
  if (outcome.problem !== null) {
    say(`  vendor statistics could not be read: ${outcome.problem.name}: ${outcome.problem.message}`);
    return;
  }
  const numbers = Object.entries(outcome.numbers).map(([name, value]) => `${name} ${value}`);
  if (numbers.length > 0) say(`  vendor statistics: ${numbers.join(', ')}`);
  const { finishedIncrease: finished, failedIncrease: failed } = outcome;
  const growth = (value: number | null) => (value === null ? 'unknown' : String(value));
  say(
    finished === null && failed === null
      ? '  vendor growth: none measured (no previous read, or no counts found)'
      : `  vendor growth since the previous read: ${growth(finished)} finished, ${growth(failed)} failed`,
  );
  if (outcome.history !== null) {
    const kept = outcome.history.written ? '' : ' (kept: written earlier that day)';
    say(`  day's snapshot: ${outcome.history.key}${kept}`);
  }
}

/**
 * The manifests and failure records an earlier run exported to `<out>/<results bucket>/scans/`,
 * and the statistics job's folder, put back into the embedded S3: what reconciliation reads to know
 * what is archived, and what the statistics job measures growth from (its day's snapshot too, so a
 * second invocation on one day keeps the first's, as S3 would). The outputs themselves stay on disk;
 * a manifest is what says they are complete. Returns how many manifests and failure records.
 */
async function loadEarlierRecords(run: LocalRun): Promise<number> {
  const filesUnder = async (root: string) => {
    try {
      return (await readdir(root, { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name));
    } catch {
      return [];
    }
  };
  const records = (await filesUnder(join(run.resultsRoot, 'scans'))).filter(
    (file) => file.endsWith(`${sep}${MANIFEST_FILE}`) || file.endsWith(`${sep}${FAILURE_FILE}`),
  );
  const statistics = await filesUnder(join(run.resultsRoot, ...VENDOR_STATS_FOLDER.split('/')));
  const wanted = [...records, ...statistics];
  for (const file of wanted) {
    const key = relative(run.resultsRoot, file).split(sep).join('/');
    await run.s3.client.send(
      new PutObjectCommand({
        Bucket: LOCAL_RESULTS_BUCKET,
        Key: key,
        Body: await readFile(file),
        ContentType: 'application/json',
      }),
    );
  }
  return records.length;
}

/** `25 h`, `90 min`, `45 s`. */
function ageText(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
