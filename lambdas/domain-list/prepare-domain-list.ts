/**
 * `PrepareDomainList`, the fan-out level of a domain-list run: prepare the list (parse, dedupe, name
 * the child executions). The summary, once every child has finished, is in write-list-summary.ts,
 * which builds on this module (not the other way round: a re-export here made the two a cycle).
 *
 * In AWS these run as the `PrepareDomainList` and `WriteListSummary` tasks around a Distributed
 * Map; locally the runner calls the same functions around its own bounded fan-out. The Lambda entry
 * is at the end.
 */
import { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  type DomainListInput,
  type DomainListItem,
  type DomainListSource,
  type DuplicateLine,
  type InvalidLine,
  type ListRejection,
  type PreparedDomainList,
  parseDomainListInput,
  sourceRef,
} from '#lambdas/domain-list/contracts';
import { type ListDeps, listDepsFromEnvironment } from '#lambdas/domain-list/deps';
import {
  DEFAULT_DOMAIN_LIST_SUFFIXES,
  DEFAULT_MAX_DOMAINS,
  DEFAULT_MAX_LIST_BYTES,
  linesFromStream,
  type ParsedDomainList,
  parseDomainList,
} from '#lambdas/domain-list/domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { childExecutionName, listResultsPrefix, runIdFor } from '#lambdas/platform/runs/naming';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { putJson } from '#lambdas/platform/s3/json-objects';

/** rejects.json: the first invalid and duplicate lines (samples; the counts are in the summary). */
export interface Rejects {
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

/** Validates the list workflow's input; errors name the field (`source.scheduleName`). */

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
      maxDomains: deps.settings.maxDomains ?? DEFAULT_MAX_DOMAINS,
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
    source: sourceRef(source),
    startedAt: (deps.clock?.() ?? new Date()).toISOString(),
    resultsPrefix,
    resultsBucket: deps.settings.resultsBucket,
    itemsKey,
    rejectsKey,
    counts,
    ...(parsed.header ? { header: parsed.header } : {}),
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
  const suffixes = deps.settings.suffixes ?? DEFAULT_DOMAIN_LIST_SUFFIXES;
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
  return linesFromStream(object.Body, { fileName: key.replace(/^.*\//, '') });
}

/** `PrepareDomainList`: parse the uploaded or scheduled list, write items.json for the Distributed Map. */
export function createPrepareDomainListHandler(deps: ListDeps): Handler<unknown, PreparedDomainList> {
  return async (event) => prepareDomainList(deps, parseDomainListInput(event));
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => listDepsFromEnvironment(process.env, tools),
  handler: createPrepareDomainListHandler,
});
