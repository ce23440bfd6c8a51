/**
 * The summary level of a domain-list run: read what every Map iteration returned (or, locally,
 * what the runner collected), look up children of a redriven run that already ran, and write
 * summary.json, which accounts for every input line.
 */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import {
  type DomainFinalState,
  type DomainListItem,
  type DomainListSourceRef,
  type DomainScanResult,
  INTERRUPTED_ERROR,
  LIST_RUN_FINISHED,
  type ListRejection,
  type ListSummary,
  type ResultWriterOutput,
  type WriteSummaryInput,
  writeSummaryInputSchema,
} from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { listDepsFromEnvironment } from '#lambdas/domain-list/deps';
import type { Rejects } from '#lambdas/domain-list/prepare-domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWith } from '#lambdas/platform/input/schema';
import { mapBounded } from '#lambdas/platform/runs/bounded';
import {
  DESCRIBE_EXECUTION_CONCURRENCY,
  readIterationResults,
  tryJson,
} from '#lambdas/platform/runs/fan-out-results';
import { announceRunFinished } from '#lambdas/platform/runs/run-events';
import { eventBridgeRunEvents } from '#lambdas/platform/runtime/event-bridge';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { getJson, putJson } from '#lambdas/platform/s3/json-objects';
import { SCAN_ERROR_NAME, type ScanOutcome } from '#lambdas/scan/contracts';
import { isRecord } from '#lambdas/vendor-api/transport/json';

// ---------------------------------------------------------------------------------------------
// Results of the fan-out
// ---------------------------------------------------------------------------------------------

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
  const results: DomainScanResult[] = [];
  for (const entry of await readIterationResults(deps, location)) {
    const fromOutput = domainResultFromIteration(entry.output);
    if (fromOutput) {
      results.push(fromOutput);
      continue;
    }
    // An iteration that failed outside our Catch (e.g. Map-level timeout): its input names the domain.
    const input = entry.input;
    if (input && typeof input.domain === 'string') {
      const executionName = typeof input.executionName === 'string' ? input.executionName : '';
      results.push(domainResultFromFailure(input.domain, executionName, entry.error, entry.cause));
    }
  }
  return results;
}

/** Joins the items with their results and accounts for every input line. Pure. */
export function buildListSummary(options: {
  readonly runId: string;
  readonly source: DomainListSourceRef;
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
  readonly header?: ListSummary['header'];
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
    interrupted: 0,
    invalid: options.invalidCount ?? options.rejects.invalid.length,
    duplicate: options.duplicateCount ?? options.rejects.duplicates.length,
  };
  const domains: ListSummary['domains'][number][] = [];
  const settled = { adopted: 0, retried: 0, unresolved: 0 };
  for (const item of options.items) {
    const result = byName.get(item.executionName) ?? byName.get(`domain:${item.domain}`);
    const outcome = result?.outcome;
    const state: DomainFinalState = outcome
      ? outcome.state
      : result?.error?.name === INTERRUPTED_ERROR
        ? 'interrupted'
        : 'failed';
    counts[state] += 1;
    const settledStart =
      outcome?.settledStart ??
      (outcome?.error?.name === SCAN_ERROR_NAME.ScanStartUnresolvedError ? 'unresolved' : undefined);
    if (settledStart) settled[settledStart] += 1;
    domains.push({
      ...(settledStart ? { settledStart } : {}),
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
      duplicateOf: duplicate.firstLine,
      ...(duplicate.text === undefined ? {} : { text: duplicate.text }),
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
    // Only when a start's answer was lost: the line that shows the at-most-once guarantee at work.
    ...(settled.adopted + settled.retried + settled.unresolved > 0 ? { settledStarts: settled } : {}),
    ...(options.header ? { header: options.header } : {}),
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
  results = await mapBounded(results, DESCRIBE_EXECUTION_CONCURRENCY, (result) =>
    resolveEarlierExecution(deps, result),
  );
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
    ...(input.header ? { header: input.header } : {}),
    ...(input.rejected ? { rejected: input.rejected } : {}),
  });
  const summaryKey = `${input.resultsPrefix}summary.json`;
  // Indented: people open this file, and its size is bounded by the sample limits and maxDomains.
  await putJson(deps, summaryKey, summary, 2);
  deps.logger.info('list summary written', { runId: input.runId, summaryKey, ...summary.counts });
  await announceRunFinished(deps, {
    kind: LIST_RUN_FINISHED.kind,
    runId: input.runId,
    trigger: input.source.type,
    counts: summary.counts,
    summary: `s3://${bucket}/${summaryKey}`,
    finishedAt: summary.finishedAt,
    refused: summary.rejected?.reason ?? null,
  });
  return { summaryKey, counts: summary.counts };
}

/** `WriteListSummary`: join the Map results with the list and write summary.json. */
type SummaryResult = Awaited<ReturnType<typeof writeListSummary>>;

export function createWriteListSummaryHandler(deps: ListDeps): Handler<unknown, SummaryResult> {
  return async (event) => writeListSummary(deps, parseWith(writeSummaryInputSchema, event));
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) =>
    listDepsFromEnvironment(process.env, tools, {
      events: (observability) =>
        eventBridgeRunEvents(
          observability.tracer.captureAWSv3Client(new EventBridgeClient({})),
          LIST_RUN_FINISHED.detailType,
        ),
    }),
  handler: createWriteListSummaryHandler,
});
