/**
 * The local list run: the same run AWS performs for an uploaded domain list, on this machine.
 *
 * - The domain list is uploaded to the (embedded) input bucket, as a user would.
 * - `PrepareDomainList` and `WriteListSummary` are the real handlers.
 * - The fan-out is done here, with the configured concurrency bound, because the local engine has
 *   no Distributed Map; every item is a `ScanDomain` execution of pipeline.ts.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type {
  DomainListItem,
  DomainListSource,
  ListSummary,
  PreparedDomainList,
} from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { mapBounded } from '#lambdas/platform/runs/bounded';
import { createPrepareDomainListHandler } from '../../lambdas/domain-list/prepare-domain-list.ts';
import { createWriteListSummaryHandler } from '../../lambdas/domain-list/write-list-summary.ts';
import { adoptingScanClient, type ResumeDecision } from '../output/resume.ts';
import { NOT_STARTED } from '../output/summary-table.ts';
import { runAs } from '../services/iam/attribution.ts';
import { earlyEndTickMs, LocalTaskTokens, startLocalEarlyEndWatch } from './early-end-watch.ts';
import {
  bindScanHandlers,
  interruptedResult,
  type LocalPipelineOptions,
  runScanExecution,
  stopCause,
} from './pipeline.ts';
import { localStateMachine } from './task-binding.ts';

export interface DomainListRequest {
  /** Domains given on the command line. */
  readonly domains: readonly string[];
  /** A domain-list file: its name (for the object key) and bytes, uploaded unchanged. */
  readonly file?: { readonly name: string; readonly bytes: Uint8Array };
}

export interface LocalRunResult {
  readonly prepared: PreparedDomainList;
  readonly summaryKey: string;
  readonly summary: ListSummary;
  /** History events per domain, as Step Functions would count them (bench and tests read it). */
  readonly historyEvents: ReadonlyMap<string, number>;
}

/**
 * The list object's key: the file's own name, or for domains typed on the command line a name of
 * ours that the intake takes whatever `intake.suffixes` says (`.txt` when it is among them, else
 * the first), since those suffixes are a rule for uploads, and no one uploaded anything.
 */
function listObjectKey(
  prefix: string,
  request: DomainListRequest,
  runStamp: string,
  suffixes: readonly string[],
): string {
  const suffix = listSuffix(suffixes);
  const base =
    request.file && request.domains.length === 0 ? request.file.name : `command-line-${runStamp}${suffix}`;
  return `${prefix}${base.replace(/^.*[\\/]/, '')}`;
}

/** The suffix a list of ours (not a file the user named) is uploaded with: `.txt` when the intake takes it, else its first. */
export function listSuffix(suffixes: readonly string[]): string {
  return suffixes.includes('.txt') ? '.txt' : (suffixes[0] ?? '.txt');
}

/**
 * The file goes first and unchanged, so the summary's line numbers are the user's own; domains
 * given on the command line follow it.
 */
function listBody(request: DomainListRequest): Uint8Array {
  if (request.domains.length === 0 && request.file) return request.file.bytes;
  const parts: Uint8Array[] = [];
  if (request.file) {
    parts.push(request.file.bytes);
    const last = request.file.bytes[request.file.bytes.length - 1];
    if (last !== undefined && last !== 0x0a) parts.push(Buffer.from('\n'));
  }
  parts.push(Buffer.from(`${request.domains.join('\n')}\n`, 'utf8'));
  return Buffer.concat(parts);
}

/**
 * What an earlier run of the list already did about each item (local/output/resume.ts): consulted once
 * the items are known, before any scan starts. A domain it does not name is scanned.
 */
export type ResumeDecisions = (
  items: readonly DomainListItem[],
) => Promise<ReadonlyMap<string, ResumeDecision>>;

/** Uploads the list, prepares it, fans out over the synthesized ScanDomain and writes the summary. */
export async function runDomainList(
  options: LocalPipelineOptions,
  request: DomainListRequest,
  resume?: ResumeDecisions,
): Promise<LocalRunResult> {
  const runStamp = new Date().toISOString().replace(/[:.]/g, '-');
  const key = listObjectKey(options.intakePrefix, request, runStamp, options.intakeSuffixes);
  const uploaded = await options.s3.send(
    new PutObjectCommand({
      Bucket: options.inputBucket,
      Key: key,
      Body: listBody(request),
      ContentType: 'text/plain',
    }),
  );
  // s3rver keeps no versions; each local upload stands for a new S3 version, so each run is its own.
  const source: DomainListSource = {
    type: 's3',
    bucket: options.inputBucket,
    key,
    versionId: uploaded.VersionId ?? `local-${runStamp}-${randomUUID().slice(0, 8)}`,
    ...(uploaded.ETag ? { etag: uploaded.ETag } : {}),
  };
  const listDeps: ListDeps = {
    s3: options.s3,
    logger: options.logger,
    settings: {
      resultsBucket: options.resultsBucket,
      inputBucket: options.inputBucket,
      suffixes: options.intakeSuffixes,
      ...(options.maxListBytes === undefined ? {} : { maxListBytes: options.maxListBytes }),
      allowSpecialUse: options.allowSpecialUse ?? [],
    },
  };
  const prepared = await runAs('prepare-domain-list', () =>
    createPrepareDomainListHandler(listDeps)({ source }),
  );
  options.onProgress?.({
    type: 'list-prepared',
    total: prepared.counts.valid,
    invalid: prepared.counts.invalid,
    duplicate: prepared.counts.duplicate,
    resultsPrefix: prepared.resultsPrefix,
    runId: prepared.runId,
  });

  // The Distributed Map's ItemReader reads items.json from S3; so do we.
  const itemsObject = await options.s3.send(
    new GetObjectCommand({ Bucket: prepared.resultsBucket, Key: prepared.itemsKey }),
  );
  const items = JSON.parse((await itemsObject.Body?.transformToString('utf8')) ?? '[]') as DomainListItem[];

  const decisions = (await resume?.(items)) ?? new Map<string, ResumeDecision>();
  // StartScan of a domain whose earlier scan is adopted gets that scan, not a new one.
  const adopt = new Map<string, string>();
  for (const [domain, decision] of decisions)
    if (decision.kind === 'adopt') adopt.set(domain, decision.scanUuid);
  const machine = localStateMachine(options.scanDefinition);
  const tokens = new LocalTaskTokens();
  const scanClient = adopt.size === 0 ? options.scanClient : adoptingScanClient(options.scanClient, adopt);
  const handlers = bindScanHandlers(options.scanDefinition, { ...options, scanClient, tokens });
  // The early-end watcher runs beside the scans, at the pace the waits run (none when waits are 0).
  const tickMs = earlyEndTickMs(options.waitOverrideMs);
  const watcher =
    tickMs === undefined
      ? undefined
      : startLocalEarlyEndWatch({
          s3: options.s3,
          resultsBucket: options.resultsBucket,
          scanClient,
          tokens,
          logger: options.logger,
          tickMs,
          ...(options.watchClient ? { watchClient: options.watchClient } : {}),
        });
  const historyEvents = new Map<string, number>();
  const scanning = mapBounded(items, options.concurrency, async (item) => {
    const decision = decisions.get(item.domain);
    if (decision?.kind === 'finished' || decision?.kind === 'unresolved') {
      const { outcome } = decision.result;
      options.onProgress?.({
        type: 'domain-done',
        domain: item.domain,
        result: outcome?.state ?? 'failed',
        detail:
          decision.kind === 'finished'
            ? `kept from run ${decision.runId}`
            : `${outcome?.error?.name}: not started again`,
      });
      return decision.result;
    }
    if (decision?.kind === 'adopt' && !options.stop?.aborted) {
      options.onProgress?.({
        type: 'domain-state',
        domain: item.domain,
        state: 'StartScan',
        detail: 'adopting the scan an earlier run of this list left at the vendor',
      });
    }
    if (options.stop?.aborted) {
      return interruptedResult(item, `${NOT_STARTED}: the run was stopped by ${stopCause(options.stop)}`);
    }
    const run = await runScanExecution(machine, options.scanDefinition, handlers, item, options);
    historyEvents.set(item.domain, run.historyEvents);
    return run.result;
  });
  const results = await scanning.finally(() => watcher?.stop());

  const written = await runAs('write-list-summary', () =>
    createWriteListSummaryHandler(listDeps)({ ...prepared, results }),
  );
  const summaryObject = await options.s3.send(
    new GetObjectCommand({ Bucket: prepared.resultsBucket, Key: written.summaryKey }),
  );
  const summary = JSON.parse((await summaryObject.Body?.transformToString('utf8')) ?? '{}') as ListSummary;
  return { prepared, summaryKey: written.summaryKey, summary, historyEvents };
}
