/**
 * The fan-out level of a domain-list run: prepare the list (parse, dedupe, name the child
 * executions) and, when every child has finished, account for every input line in summary.json.
 *
 * In AWS these run as the `PrepareDomainList` and `WriteListSummary` tasks around a Distributed
 * Map; locally the runner calls the same functions around its own bounded fan-out.
 */
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { linesFromStream, type ParsedDomainList, parseDomainList } from '#core/domain-list';
import { InvalidInputError } from '#core/errors';
import { childExecutionName, listResultsPrefix, runIdFor } from '#core/naming';
import type {
  DomainFinalState,
  DomainListInput,
  DomainListItem,
  DomainListSource,
  DomainScanResult,
  DuplicateLine,
  InvalidLine,
  ListRejection,
  ListSummary,
  PreparedDomainList,
  ScanOutcome,
} from '#core/scan/contracts';
import { isRecord, parseJsonBody } from '#core/vendor/json';
import type { VendorLogger } from '#core/vendor/types';

export interface ListSettings {
  readonly resultsBucket: string;
  /** When set, S3 sources must name this bucket: a list elsewhere is not ours to read. */
  readonly inputBucket: string | undefined;
  /** Object-key suffixes accepted as domain lists. @default ['.txt', '.csv'] */
  readonly suffixes?: readonly string[];
  /** @default 100_000 */
  readonly maxDomains?: number;
  /** A list object larger than this is refused before a byte is read. @default DEFAULT_MAX_LIST_BYTES */
  readonly maxListBytes?: number;
  /** Special-use suffixes accepted anyway (`scan.allowSpecialUseDomains`). @default [] */
  readonly allowSpecialUse?: readonly string[];
}

/** Lists are text: 20 MiB is about a million domains, far above `maxDomains`. */
export const DEFAULT_MAX_LIST_BYTES = 20 * 1024 * 1024;

/**
 * The list size limit, written once: the configuration (`intake.maxListBytes`), the variable the
 * prepare step reads, and its bounds. Up to 100 MiB: parsing streams, but every line costs CPU
 * time inside the step's timeout.
 */
export const LIST_SIZE_LIMIT = {
  variable: 'DOMAIN_LIST_MAX_BYTES',
  bounds: { min: 1024, max: 100 * 1024 * 1024, integer: true },
  default: DEFAULT_MAX_LIST_BYTES,
} as const;

/** Where WriteListSummary finds the ScanDomain machine whose children it may need to look up. */
export const SCAN_STATE_MACHINE_VARIABLE = 'SCAN_STATE_MACHINE_ARN';

/** The part of Step Functions the summary uses: looking up a child execution that already ran. */
export interface ExecutionLookup {
  describe(executionName: string): Promise<
    | { readonly status: 'SUCCEEDED'; readonly output: string | undefined }
    | {
        readonly status: 'FAILED' | 'TIMED_OUT' | 'ABORTED';
        readonly error: string | undefined;
        readonly cause: string | undefined;
      }
    | { readonly status: 'RUNNING' | 'PENDING_REDRIVE' | string }
  >;
}

export interface ListDeps {
  readonly s3: S3Client;
  /** Looks up earlier child executions (a redriven run); without it they stay errors. */
  readonly executions?: ExecutionLookup;
  readonly logger: VendorLogger;
  readonly settings: ListSettings;
  readonly clock?: () => Date;
}

/** rejects.json: the first invalid and duplicate lines (samples; the counts are in the summary). */
interface Rejects {
  readonly invalid: readonly InvalidLine[];
  readonly duplicates: readonly DuplicateLine[];
}

/** A list refused as a whole; prepare records it instead of failing, so a summary is still written. */
export class ListRejectedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ListRejectedError';
  }
}

const DEFAULT_SUFFIXES = ['.txt', '.csv'];

/** Validates the list workflow's input; errors name the field. */
export function parseDomainListInput(event: unknown): DomainListInput {
  const source = (event as { source?: unknown } | null)?.source as Record<string, unknown> | undefined;
  if (!source || typeof source !== 'object') throw new InvalidInputError('source', 'is missing');
  const text = (field: string, optional = false): string | undefined => {
    const value = source[field];
    if (value === undefined || value === null) {
      if (optional) return undefined;
      throw new InvalidInputError(`source.${field}`, 'is missing');
    }
    if (typeof value !== 'string' || value.length === 0) {
      throw new InvalidInputError(`source.${field}`, 'must be a non-empty string');
    }
    return value;
  };
  const domains = (optional: boolean): string[] | undefined => {
    const value = source.domains;
    if (value === undefined && optional) return undefined;
    if (!Array.isArray(value) || value.some((d) => typeof d !== 'string')) {
      throw new InvalidInputError('source.domains', 'must be an array of strings');
    }
    return value as string[];
  };
  switch (source.type) {
    case 's3':
      return {
        source: {
          type: 's3',
          bucket: text('bucket') as string,
          key: text('key') as string,
          ...optionalField('versionId', text('versionId', true)),
          ...optionalField('etag', text('etag', true)),
        },
      };
    case 'schedule': {
      const list = domains(true);
      const bucket = text('bucket', true);
      const key = text('key', true);
      if ((list === undefined) === (key === undefined)) {
        throw new InvalidInputError('source', 'a schedule needs exactly one of domains or bucket/key');
      }
      return {
        source: {
          type: 'schedule',
          scheduleName: text('scheduleName') as string,
          scheduledTime: text('scheduledTime') as string,
          ...optionalField('bucket', bucket),
          ...optionalField('key', key),
          ...optionalField('domains', list),
        },
      };
    }
    case 'adhoc':
      return {
        source: {
          type: 'adhoc',
          requestId: text('requestId') as string,
          domains: domains(false) as string[],
        },
      };
    default:
      throw new InvalidInputError('source.type', 'must be one of s3, schedule, adhoc');
  }
}

function optionalField<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

/**
 * Reads and parses the list, writes items.json and rejects.json, and returns where they are. A list
 * refused as a whole (too large, not a list object, unreadable) is not an error here: it is
 * prepared as empty with `rejected` set, so the run still ends with a summary.json that says why.
 */
export async function prepareDomainList(deps: ListDeps, input: DomainListInput): Promise<PreparedDomainList> {
  const { source } = input;
  const runId = runIdFor(source);
  const resultsPrefix = listResultsPrefix(source, runId);
  let parsed: ParsedDomainList;
  let rejected: ListRejection | undefined;
  try {
    parsed = await parseDomainList(await openListLines(deps, source), {
      fileName: listFileName(source),
      maxDomains: deps.settings.maxDomains ?? 100_000,
      allowSpecialUse: deps.settings.allowSpecialUse ?? [],
    });
  } catch (error) {
    const reason = listRejectionReason(error);
    if (reason === undefined) throw error;
    rejected = { reason };
    parsed = {
      domains: [],
      invalid: [],
      invalidCount: 0,
      duplicates: [],
      duplicateCount: 0,
      lines: 0,
      ignored: 0,
    };
    deps.logger.warn('domain list refused', { runId, resultsPrefix, reason });
  }

  const items: DomainListItem[] = parsed.domains.map(({ domain, line }) => ({
    domain,
    executionName: childExecutionName(runId, domain),
    runId,
    line,
  }));
  const itemsKey = `${resultsPrefix}items.json`;
  const rejectsKey = `${resultsPrefix}rejects.json`;
  const rejects: Rejects = { invalid: parsed.invalid, duplicates: parsed.duplicates };
  await putJson(deps, itemsKey, items);
  await putJson(deps, rejectsKey, rejects);

  const counts = {
    lines: parsed.lines,
    valid: parsed.domains.length,
    invalid: parsed.invalidCount,
    duplicate: parsed.duplicateCount,
    ignored: parsed.ignored,
  };
  deps.logger.info('domain list prepared', { runId, resultsPrefix, ...counts });
  return {
    runId,
    source,
    startedAt: (deps.clock?.() ?? new Date()).toISOString(),
    resultsPrefix,
    resultsBucket: deps.settings.resultsBucket,
    itemsKey,
    rejectsKey,
    counts,
    ...(rejected ? { rejected } : {}),
  };
}

/** Why a list is refused as a whole, or undefined for an error that is not about the list. */
function listRejectionReason(error: unknown): string | undefined {
  if (error instanceof ListRejectedError) return error.reason;
  if (error instanceof InvalidInputError) return error.message;
  const name = (error as { name?: unknown } | undefined)?.name;
  // Without s3:ListBucket a missing key answers AccessDenied, not NoSuchKey.
  if (name === 'NoSuchKey' || name === 'NotFound' || name === 'AccessDenied') {
    return `the list object cannot be read (${name})`;
  }
  return undefined;
}

function listFileName(source: DomainListSource): string {
  if (source.type === 's3') return source.key;
  if (source.type === 'schedule') return source.key ?? `schedule ${source.scheduleName}`;
  return 'inline list';
}

async function openListLines(
  deps: ListDeps,
  source: DomainListSource,
): Promise<Iterable<string> | AsyncIterable<string>> {
  if (source.type === 'adhoc' || (source.type === 'schedule' && source.domains)) {
    return source.domains ?? [];
  }
  const bucket = source.bucket as string;
  const key = source.key as string;
  const { inputBucket } = deps.settings;
  if (inputBucket !== undefined && bucket !== inputBucket) {
    throw new InvalidInputError('source.bucket', `must be the pipeline's input bucket (${inputBucket})`);
  }
  const suffixes = deps.settings.suffixes ?? DEFAULT_SUFFIXES;
  if (!suffixes.some((suffix) => key.toLowerCase().endsWith(suffix))) {
    throw new InvalidInputError('source.key', `must end with one of ${suffixes.join(', ')}`);
  }
  const versionId = source.type === 's3' ? source.versionId : undefined;
  const object = await deps.s3.send(
    new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId ? { VersionId: versionId } : {}) }),
  );
  if (!(object.Body instanceof Readable)) {
    throw new InvalidInputError('source.key', 'object body is not a stream');
  }
  // Checked before a byte is read: the size is in the response headers.
  const limit = deps.settings.maxListBytes ?? DEFAULT_MAX_LIST_BYTES;
  if (object.ContentLength !== undefined && object.ContentLength > limit) {
    object.Body.destroy();
    throw new ListRejectedError(
      `${key} is ${object.ContentLength} bytes, over the limit of ${limit} bytes for a domain list (intake.maxListBytes): split it into smaller lists`,
    );
  }
  return linesFromStream(object.Body);
}

async function putJson(deps: ListDeps, key: string, value: unknown, indent?: number): Promise<void> {
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.settings.resultsBucket,
      Key: key,
      Body: JSON.stringify(value, null, indent),
      ContentType: 'application/json',
    }),
  );
}

async function getJson<T>(deps: ListDeps, bucket: string, key: string): Promise<T> {
  const object = await deps.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const text = await object.Body?.transformToString('utf-8');
  if (text === undefined) throw new InvalidInputError(key, 'object is empty');
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------------------------------------
// Results of the fan-out
// ---------------------------------------------------------------------------------------------

/** Where the Distributed Map's ResultWriter put its manifest (the Map state's output). */
export interface ResultWriterOutput {
  readonly ResultWriterDetails: { readonly Bucket: string; readonly Key: string };
}

interface ResultWriterManifest {
  readonly ResultFiles?: Record<string, readonly { readonly Key: string }[]>;
}

interface ResultWriterEntry {
  readonly Name?: string;
  readonly Status?: string;
  readonly Input?: string;
  readonly Output?: string;
  readonly Error?: string;
  readonly Cause?: string;
}

/**
 * What one Map iteration returned: `ScanOneDomain`'s ResultSelector gives `{ domain, executionName,
 * output }`; its Catch gives `{ domain, executionName, caught: { Error, Cause } }`.
 */
export function domainResultFromIteration(value: unknown): DomainScanResult | undefined {
  const record = asRecord(value);
  if (!record || typeof record.domain !== 'string') return undefined;
  const domain = record.domain;
  const executionName = typeof record.executionName === 'string' ? record.executionName : '';
  const output = asOutcome(typeof record.output === 'string' ? tryJson(record.output) : record.output);
  if (output) return { domain, executionName, outcome: output, error: undefined };
  const caught = asRecord(record.caught);
  if (caught) return domainResultFromFailure(domain, executionName, caught.Error, caught.Cause);
  return {
    domain,
    executionName,
    outcome: undefined,
    error: { name: 'ResultUnreadable', message: 'the iteration returned neither an output nor an error' },
  };
}

/**
 * A failed child surfaces as States.TaskFailed whose Cause is the child's DescribeExecution JSON;
 * its own Cause is the JSON ScanOutcome that RecordFailure wrote. Locally the runner passes the
 * child's error name and cause directly. Both shapes end up here.
 */
export function domainResultFromFailure(
  domain: string,
  executionName: string,
  errorName: unknown,
  cause: unknown,
): DomainScanResult {
  let outcome = asOutcome(tryJson(cause));
  let name = typeof errorName === 'string' ? errorName : 'UnknownError';
  let message = typeof cause === 'string' ? cause : '';
  const describe = asRecord(tryJson(cause));
  if (!outcome && describe) {
    outcome = asOutcome(tryJson(describe.Cause ?? describe.cause));
    if (typeof describe.Error === 'string') name = describe.Error;
    if (typeof describe.Cause === 'string') message = describe.Cause;
  }
  if (outcome) return { domain, executionName, outcome, error: undefined };
  if (name === 'StepFunctions.ExecutionAlreadyExistsException') {
    message = 'a scan with this execution name already ran for this list run; see that execution';
  }
  return { domain, executionName, outcome: undefined, error: { name, message: message.slice(0, 1024) } };
}

/** Step Functions hands outputs and causes over as JSON strings; anything else passes through. */
function tryJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const parsed = parseJsonBody(value);
  return parsed.ok ? parsed.value : undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

const OUTCOME_STATES = new Set(['succeeded', 'failed', 'timed_out', 'rejected']);

function asOutcome(value: unknown): ScanOutcome | undefined {
  const record = asRecord(value);
  if (!record || typeof record.domain !== 'string' || !OUTCOME_STATES.has(String(record.state))) {
    return undefined;
  }
  return record as unknown as ScanOutcome;
}

/** Reads every result file the Distributed Map's ResultWriter listed in its manifest. */
export async function readResultWriterResults(
  deps: ListDeps,
  location: ResultWriterOutput,
): Promise<DomainScanResult[]> {
  const { Bucket, Key } = location.ResultWriterDetails;
  const manifest = await getJson<ResultWriterManifest>(deps, Bucket, Key);
  const results: DomainScanResult[] = [];
  for (const files of Object.values(manifest.ResultFiles ?? {})) {
    for (const file of files) {
      for (const entry of await getJson<ResultWriterEntry[]>(deps, Bucket, file.Key)) {
        const fromOutput = domainResultFromIteration(tryJson(entry.Output));
        if (fromOutput) {
          results.push(fromOutput);
          continue;
        }
        // An iteration that failed outside our Catch (e.g. Map-level timeout): its input names the domain.
        const input = asRecord(tryJson(entry.Input));
        if (input && typeof input.domain === 'string') {
          const executionName = typeof input.executionName === 'string' ? input.executionName : '';
          results.push(domainResultFromFailure(input.domain, executionName, entry.Error, entry.Cause));
        }
      }
    }
  }
  return results;
}

export interface WriteSummaryInput extends PreparedDomainList {
  /** Set in AWS: the Map state's ResultWriter output. */
  readonly mapResult?: ResultWriterOutput;
  /** Set by the local runner, which runs the fan-out itself. */
  readonly results?: readonly DomainScanResult[];
}

/** Joins the items with their results and accounts for every input line. Pure. */
export function buildListSummary(options: {
  readonly runId: string;
  readonly source: DomainListSource;
  readonly startedAt: string | undefined;
  readonly finishedAt: string;
  readonly lines: number;
  readonly ignored: number;
  /** Every invalid and duplicate line, counted in full (the rejects hold samples). */
  readonly invalidCount?: number;
  readonly duplicateCount?: number;
  readonly items: readonly DomainListItem[];
  readonly rejects: Rejects;
  readonly results: readonly DomainScanResult[];
  readonly rejected?: ListRejection;
}): ListSummary {
  const byName = new Map<string, DomainScanResult>();
  for (const result of options.results) {
    byName.set(result.executionName || `domain:${result.domain}`, result);
  }
  const counts: Record<DomainFinalState, number> = {
    succeeded: 0,
    failed: 0,
    timed_out: 0,
    rejected: 0,
    invalid: options.invalidCount ?? options.rejects.invalid.length,
    duplicate: options.duplicateCount ?? options.rejects.duplicates.length,
  };
  const domains: ListSummary['domains'][number][] = [];
  for (const item of options.items) {
    const result = byName.get(item.executionName) ?? byName.get(`domain:${item.domain}`);
    const outcome = result?.outcome;
    const state: DomainFinalState = outcome ? outcome.state : 'failed';
    counts[state] += 1;
    domains.push({
      domain: item.domain,
      line: item.line,
      state,
      outputPrefix: outcome?.outputPrefix,
      manifestKey: outcome?.manifestKey,
      error:
        outcome?.error ??
        result?.error ??
        (result ? undefined : { name: 'ResultMissing', message: 'no result was recorded for this domain' }),
    });
  }
  for (const duplicate of options.rejects.duplicates) {
    domains.push({
      domain: duplicate.domain,
      line: duplicate.line,
      state: 'duplicate',
      outputPrefix: undefined,
      manifestKey: undefined,
      error: undefined,
    });
  }
  domains.sort((a, b) => a.line - b.line);
  return {
    runId: options.runId,
    source: options.source,
    startedAt: options.startedAt,
    finishedAt: options.finishedAt,
    counts: { ...counts, lines: options.lines, ignored: options.ignored },
    domains,
    invalid: options.rejects.invalid,
    sampled:
      counts.invalid > options.rejects.invalid.length || counts.duplicate > options.rejects.duplicates.length,
    ...(options.rejected ? { rejected: options.rejected } : {}),
  };
}

const ALREADY_EXISTS = 'StepFunctions.ExecutionAlreadyExistsException';

/**
 * A redriven list run re-runs an item whose child (same deterministic name) already ran and
 * closed: StartExecution answers ExecutionAlreadyExists. That is not a domain error: the earlier
 * execution's real outcome is looked up and recorded instead.
 */
async function resolveEarlierExecution(deps: ListDeps, result: DomainScanResult): Promise<DomainScanResult> {
  if (result.error?.name !== ALREADY_EXISTS || !deps.executions || result.executionName === '') return result;
  const earlier = await deps.executions.describe(result.executionName);
  const { domain, executionName } = result;
  if (earlier.status === 'SUCCEEDED' && 'output' in earlier) {
    const outcome = asOutcome(tryJson(earlier.output));
    if (outcome) return { domain, executionName, outcome, error: undefined };
  }
  if ('cause' in earlier) return domainResultFromFailure(domain, executionName, earlier.error, earlier.cause);
  return {
    domain,
    executionName,
    outcome: undefined,
    error: { name: 'ScanStillRunning', message: `the earlier execution of this domain is ${earlier.status}` },
  };
}

/** Writes summary.json next to the run's items; returns its key and the counts. */
export async function writeListSummary(
  deps: ListDeps,
  input: WriteSummaryInput,
): Promise<{ summaryKey: string; counts: ListSummary['counts'] }> {
  const bucket = input.resultsBucket;
  const items = await getJson<DomainListItem[]>(deps, bucket, input.itemsKey);
  const rejects = await getJson<Rejects>(deps, bucket, input.rejectsKey);
  let results = input.results;
  if (!results) {
    if (!input.mapResult) throw new InvalidInputError('mapResult', 'is missing (no results to summarise)');
    results = await readResultWriterResults(deps, input.mapResult);
  }
  results = await Promise.all(results.map((result) => resolveEarlierExecution(deps, result)));
  const summary = buildListSummary({
    runId: input.runId,
    source: input.source,
    startedAt: input.startedAt,
    finishedAt: (deps.clock?.() ?? new Date()).toISOString(),
    lines: input.counts.lines,
    ignored: input.counts.ignored,
    invalidCount: input.counts.invalid,
    duplicateCount: input.counts.duplicate,
    items,
    rejects,
    results,
    ...(input.rejected ? { rejected: input.rejected } : {}),
  });
  const summaryKey = `${input.resultsPrefix}summary.json`;
  // Indented: people open this file, and its size is bounded by the sample limits and maxDomains.
  await putJson(deps, summaryKey, summary, 2);
  deps.logger.info('list summary written', { runId: input.runId, summaryKey, ...summary.counts });
  return { summaryKey, counts: summary.counts };
}
