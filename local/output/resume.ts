/**
 * Resuming a local list run. A rerun of the same list into the same `--out` carries on the newest
 * earlier run of that list that did not finish (interrupted, or killed before its summary):
 *
 * - a domain that finished there (its summary row, or a manifest that run wrote) is not scanned
 *   again: its outcome is carried into the new run's summary;
 * - a domain that was in flight, or never started, is settled from the vendor's listing by the rule
 *   StartScan settles a start whose answer was lost (lookInListing): exactly one scan of it created
 *   since that run began is adopted (polled and fetched, never started again); none is started; a
 *   listing that leaves doubt rejects the domain as an unresolved start, never a second paid scan.
 *
 * Each run keeps its own folder (`lists/<list>/<runId>/`); `run.json` there says which list it ran
 * and which earlier runs it carries on, which is how the next run finds it.
 */
import { createHash } from 'node:crypto';
import { type Dirent, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type DomainListItem,
  type DomainScanResult,
  INTERRUPTED_ERROR,
  type ListSummary,
} from '#lambdas/domain-list/contracts';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import type { ScanApi } from '#lambdas/scan/deps';
import { SCAN_ERROR_NAME } from '#lambdas/scan/errors';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import { DEFAULT_START_SETTLE } from '#lambdas/scan/settings';
import { lookInListing } from '#lambdas/scan/start-scan';
import { readScanListing } from '#lambdas/vendor-api/scan/scan-listing';
import type { StatusVocabulary } from '#lambdas/vendor-api/scan/types';
import { MANIFEST_FILE } from '../../lambdas/scan/write-scan-manifest.ts';

/** The local runner's record of a list run, in its run folder. */
export const RUN_RECORD_FILE = 'run.json';

export interface RunRecord {
  readonly runId: string;
  /** Which list: `file:<name>` for a list file alone, else `sha256:<hash of what was given>`. */
  readonly list: string;
  readonly startedAt: string;
  /** The run ids this run carries on, oldest first; empty for a run that resumed nothing. */
  readonly resumes: readonly string[];
  /** When the first run of that chain began: a scan any of them left at the vendor is younger. */
  readonly chainStartedAt: string;
  /**
   * The name of the run's embedded S3 folder under `--out`: a run killed before its export leaves
   * its objects there, and the next run exports them into this run's folder.
   */
  readonly embeddedS3?: string;
}

/** An earlier run of the same list that did not finish. */
export interface EarlierRun {
  readonly folder: string;
  readonly record: RunRecord;
  /** Its summary's row per domain, when it got as far as writing summary.json. */
  readonly rows: ReadonlyMap<string, ListSummary['domains'][number]> | undefined;
}

/** What the new run does with one domain. */
export type ResumeDecision =
  | { readonly kind: 'finished'; readonly result: DomainScanResult; readonly runId: string }
  | { readonly kind: 'adopt'; readonly scanUuid: string }
  | { readonly kind: 'start' }
  | { readonly kind: 'unresolved'; readonly result: DomainScanResult };

export interface ResumePlan {
  readonly decisions: ReadonlyMap<string, ResumeDecision>;
  readonly counts: { finished: number; adopted: number; started: number; unresolved: number };
}

/**
 * A list file alone is known by its name (so an edited list resumes); anything else, and a list
 * `byContent` (standard input's, whose name is ours), by its bytes.
 */
export function listIdentity(
  request: {
    readonly domains: readonly string[];
    readonly file?: { readonly name: string; readonly bytes: Uint8Array };
  },
  byContent = false,
): string {
  if (request.file && request.domains.length === 0 && !byContent) return `file:${request.file.name}`;
  const hash = createHash('sha256');
  if (request.file) hash.update(request.file.bytes);
  hash.update(`\0${request.domains.join('\n')}`);
  return `sha256:${hash.digest('hex')}`;
}

/** A row the run did not finish: stopped in flight, or never started. */
export function isUnfinishedRow(row: ListSummary['domains'][number]): boolean {
  return row.state === 'interrupted' || row.error?.name === INTERRUPTED_ERROR;
}

const FINISHED_STATES = new Set(['succeeded', 'failed', 'timed_out', 'rejected']);

/**
 * The newest earlier run of `list` under `resultsRoot`, if it did not finish: no summary.json
 * (killed), or one with domains it did not finish. A run that finished is not resumed: a rerun of
 * it is a new run.
 */
export async function findRunToResume(resultsRoot: string, list: string): Promise<EarlierRun | undefined> {
  const listsRoot = join(resultsRoot, 'lists');
  const entries = await readdir(listsRoot, { recursive: true, withFileTypes: true }).catch(() => []);
  let newest: { folder: string; record: RunRecord } | undefined;
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== RUN_RECORD_FILE) continue;
    const record = await readJson<RunRecord>(join(entry.parentPath, entry.name));
    if (record?.list !== list || typeof record.startedAt !== 'string') continue;
    if (newest === undefined || record.startedAt > newest.record.startedAt) {
      newest = { folder: entry.parentPath, record };
    }
  }
  if (newest === undefined) return undefined;
  const summary = await readJson<ListSummary>(join(newest.folder, 'summary.json'));
  if (summary && !summary.domains.some(isUnfinishedRow)) return undefined;
  const rows = summary
    ? new Map(
        summary.domains
          .filter((row) => row.state !== 'duplicate' && row.state !== 'invalid')
          .map((row) => [row.domain, row]),
      )
    : undefined;
  return { ...newest, rows };
}

/** Written when the run's folder is known, before any scan: a run killed later is still found. */
export function writeRunRecord(
  runFolder: string,
  runId: string,
  list: string,
  earlier: EarlierRun | undefined,
  embeddedS3: string,
): RunRecord {
  const startedAt = new Date().toISOString();
  const record: RunRecord = {
    runId,
    list,
    startedAt,
    resumes: earlier ? [...earlier.record.resumes, earlier.record.runId] : [],
    chainStartedAt: earlier?.record.chainStartedAt ?? startedAt,
    embeddedS3,
  };
  mkdirSync(runFolder, { recursive: true });
  writeFileSync(join(runFolder, RUN_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`, 'utf8');
  return record;
}

/**
 * Each run folder under `resultsRoot` by the embedded S3 folder its run record names: where the
 * objects of a run that was killed before its export belong. Read synchronously, as the rescue of
 * those folders runs (local/cli/interrupts.ts).
 */
export function runFoldersByEmbeddedS3(resultsRoot: string): Map<string, string> {
  const folders = new Map<string, string>();
  let entries: Dirent[];
  try {
    entries = readdirSync(join(resultsRoot, 'lists'), { recursive: true, withFileTypes: true });
  } catch {
    return folders;
  }
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== RUN_RECORD_FILE) continue;
    try {
      const record = JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as RunRecord;
      if (typeof record.embeddedS3 === 'string') folders.set(record.embeddedS3, entry.parentPath);
    } catch {
      // Not a record this tool can read: its run's objects go where their keys say.
    }
  }
  return folders;
}

export interface PlanOptions {
  /** `<out>/<results bucket>`: where the earlier runs' manifests were exported. */
  readonly resultsRoot: string;
  readonly scanClient: Pick<ScanApi, 'listScans'>;
  readonly listFields?: ListFields;
  readonly statusVocabulary?: StatusVocabulary;
}

/** Decides, for every item of the new run, what an earlier run already did about it. */
export async function planResume(
  earlier: EarlierRun,
  items: readonly DomainListItem[],
  options: PlanOptions,
): Promise<ResumePlan> {
  const chain = new Set([...earlier.record.resumes, earlier.record.runId]);
  const decisions = new Map<string, ResumeDecision>();
  const counts = { finished: 0, adopted: 0, started: 0, unresolved: 0 };
  const open: DomainListItem[] = [];
  for (const item of items) {
    const row = earlier.rows?.get(item.domain);
    const outcome =
      row && !isUnfinishedRow(row) && FINISHED_STATES.has(row.state)
        ? outcomeOfRow(row)
        : await manifestOutcome(options.resultsRoot, item.domain, chain);
    if (outcome) {
      const result = { domain: item.domain, executionName: item.executionName, outcome, error: undefined };
      decisions.set(item.domain, { kind: 'finished', result, runId: earlier.record.runId });
      counts.finished += 1;
    } else {
      open.push(item);
    }
  }
  if (open.length === 0) return { decisions, counts };
  // One listing for every open domain; the rule is StartScan's, from the chain's first start on.
  const since = Date.parse(earlier.record.chainStartedAt) - DEFAULT_START_SETTLE.clockSkewMs;
  let listing: ReturnType<typeof readScanListing> | { unreadable: string };
  try {
    const { raw } = await options.scanClient.listScans();
    listing = readScanListing(raw, options.listFields, options.statusVocabulary);
  } catch (error) {
    listing = { unreadable: `the scan listing could not be read (${(error as Error).name})` };
  }
  for (const item of open) {
    const look =
      'scans' in listing
        ? lookInListing(listing, item.domain, since)
        : { kind: 'unresolved' as const, reason: listing.unreadable };
    if (look.kind === 'one') {
      decisions.set(item.domain, { kind: 'adopt', scanUuid: look.scan.uuid });
      counts.adopted += 1;
    } else if (look.kind === 'none') {
      decisions.set(item.domain, { kind: 'start' });
      counts.started += 1;
    } else {
      const outcome: ScanOutcome = {
        domain: item.domain,
        state: 'rejected',
        scanUuid: undefined,
        outputPrefix: undefined,
        manifestKey: undefined,
        error: {
          name: SCAN_ERROR_NAME.ScanStartUnresolvedError,
          message: `resuming the run: whether it left a scan of this domain at the vendor is unknown (${look.reason}); not started again, so no second scan is paid for (--fresh starts it anyway)`,
        },
      };
      const result = { domain: item.domain, executionName: item.executionName, outcome, error: undefined };
      decisions.set(item.domain, { kind: 'unresolved', result });
      counts.unresolved += 1;
    }
  }
  return { decisions, counts };
}

/** A summary row as the outcome it recorded. */
function outcomeOfRow(row: ListSummary['domains'][number]): ScanOutcome {
  return {
    domain: row.domain,
    state: row.state as ScanOutcome['state'],
    scanUuid: undefined,
    outputPrefix: row.outputPrefix,
    manifestKey: row.manifestKey,
    error: row.error,
  };
}

/** The manifest one of the chain's runs wrote for the domain (a run killed before its summary). */
async function manifestOutcome(
  resultsRoot: string,
  domain: string,
  chain: ReadonlySet<string>,
): Promise<ScanOutcome | undefined> {
  const folder = join(resultsRoot, 'scans', domain);
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== MANIFEST_FILE) continue;
    const path = join(entry.parentPath, entry.name);
    const manifest = await readJson<{ runId?: string; scanUuid?: string; domain?: string }>(path);
    if (manifest?.runId === undefined || !chain.has(manifest.runId) || manifest.domain !== domain) continue;
    const manifestKey = path
      .slice(resultsRoot.length + 1)
      .split(/[\\/]/)
      .join('/');
    return {
      domain,
      state: 'succeeded',
      scanUuid: manifest.scanUuid,
      outputPrefix: manifestKey.slice(0, -MANIFEST_FILE.length),
      manifestKey,
      error: undefined,
    };
  }
  return undefined;
}

/**
 * The scan client the resumed run's StartScan calls: for a domain whose scan is adopted it answers
 * with that scan instead of starting another; everything else goes to the vendor.
 */
export function adoptingScanClient(client: ScanApi, adopt: Map<string, string>): ScanApi {
  return {
    startScan: async (domain) => {
      const uuid = adopt.get(domain);
      if (uuid === undefined) return client.startScan(domain);
      adopt.delete(domain);
      return { uuid, raw: { adopted: uuid } };
    },
    getStatus: (uuid) => client.getStatus(uuid),
    getOutput: (output, uuid, options) => client.getOutput(output, uuid, options),
    deleteScan: (uuid) => client.deleteScan(uuid),
    listScans: () => client.listScans(),
  };
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The line a resumed run starts with: which run it carries on, and what it does about each domain. */
export function describeResume(earlier: EarlierRun, plan: ResumePlan): string {
  const { finished, adopted, started, unresolved } = plan.counts;
  return (
    `Resuming run ${earlier.record.runId} of this list (started ${earlier.record.startedAt}, ${earlier.folder}): ` +
    `${finished} finished scan(s) kept, ${adopted} left in flight adopted from the vendor, ${started} to start` +
    `${unresolved > 0 ? `, ${unresolved} unresolved (not started again)` : ''}; --fresh starts afresh\n`
  );
}
