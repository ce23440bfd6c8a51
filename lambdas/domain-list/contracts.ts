/**
 * The list workflow's state payloads as zod/mini schemas, and their types inferred from them:
 * what starts a run (`DomainListInput`) and what PrepareDomainList hands to the Map and to
 * WriteListSummary (`PreparedDomainList`). Executions can be started by hand with any JSON, so each
 * handler parses its input with these, and an error names the field (`source.scheduleName`).
 *
 * Documents the list steps write to S3 (items.json, summary.json) are ours alone and stay plain
 * interfaces (at the end of this file): nothing but our own code writes them.
 */
import * as z from 'zod/mini';
import { parseWith } from '#lambdas/platform/input/schema';
import type { RunEventName } from '#lambdas/platform/runs/run-events';
import type { ScanOutcome, SettledStartOutcome } from '#lambdas/scan/contracts';

/**
 * The event WriteListSummary puts when a list run finished (lambdas/platform/runs/run-events.ts): the
 * operations workflow's run notifications rule matches its detail type.
 */
export const LIST_RUN_FINISHED = {
  kind: 'domain-list',
  detailType: 'DomainListRunFinished',
} as const satisfies RunEventName;

const text = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a non-empty string') })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));
const domains = () => z.array(z.string(), { error: 'must be an array of strings' });
const object = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.object(shape, { error: (issue) => (issue.input === undefined ? 'is missing' : 'must be an object') });
const count = () =>
  z.number({ error: 'must be a whole number >= 0' }).check(
    z.refine((value) => Number.isSafeInteger(value) && value >= 0, {
      error: 'must be a whole number >= 0',
    }),
  );

/** An uploaded list object (the intake), named by its decoded key. */
const s3SourceSchema = z.object({
  type: z.literal('s3'),
  bucket: text(),
  /** Decoded object key (never URL-encoded). */
  key: text(),
  versionId: z.optional(text()),
  etag: z.optional(text()),
});

/** A schedule fire: a list object in the input bucket, or inline domains (exactly one). */
const scheduleSourceSchema = z
  .object({
    type: z.literal('schedule'),
    scheduleName: text(),
    /** EventBridge Scheduler's <aws.scheduler.scheduled-time>: one run per fire. */
    scheduledTime: text(),
    bucket: z.optional(text()),
    key: z.optional(text()),
    domains: z.optional(domains()),
  })
  .check(
    z.refine((source) => (source.domains === undefined) !== (source.key === undefined), {
      error: 'a schedule needs exactly one of domains or bucket/key',
    }),
  );

/** Domains given directly (the local runner, a manual start). */
const adhocSourceSchema = z.object({ type: z.literal('adhoc'), requestId: text(), domains: domains() });

/** What started a list run. Its identity (not wall-clock time) decides child execution names. */
export const domainListSourceSchema = z.discriminatedUnion(
  'type',
  [s3SourceSchema, scheduleSourceSchema, adhocSourceSchema],
  { error: (issue) => (issue.input === undefined ? 'is missing' : 'must be one of s3, schedule, adhoc') },
);
export type DomainListSource = z.output<typeof domainListSourceSchema>;

/**
 * The source as the prepared run and summary.json name it: inline domains are replaced by their
 * count (they are in items.json, and in summary.json's `domains`). Carrying them would copy an
 * ad-hoc input of up to 256 KiB into every later state and overrun Step Functions' payload limit
 * (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
 */
export const domainListSourceRefSchema = z.discriminatedUnion(
  'type',
  [
    s3SourceSchema,
    z.object({
      type: z.literal('schedule'),
      scheduleName: text(),
      scheduledTime: text(),
      bucket: z.optional(text()),
      key: z.optional(text()),
      inlineDomains: z.optional(count()),
    }),
    // Optional, so a run prepared before this change (domains inline) still reaches its summary.
    z.object({ type: z.literal('adhoc'), requestId: text(), inlineDomains: z.optional(count()) }),
  ],
  { error: (issue) => (issue.input === undefined ? 'is missing' : 'must be one of s3, schedule, adhoc') },
);
export type DomainListSourceRef = z.output<typeof domainListSourceRefSchema>;

/** The source without its inline domains (see {@link domainListSourceRefSchema}). */
export function sourceRef(source: DomainListSource): DomainListSourceRef {
  if (source.type === 's3') return source;
  if (source.type === 'adhoc') {
    return { type: 'adhoc', requestId: source.requestId, inlineDomains: source.domains.length };
  }
  const { domains, ...rest } = source;
  return domains === undefined ? rest : { ...rest, inlineDomains: domains.length };
}

/** Input of the domain-list state machine. */
export const domainListInputSchema = z.object({ source: domainListSourceSchema });
export type DomainListInput = z.output<typeof domainListInputSchema>;

/** The run's input, checked; an error names the field (`source.scheduleName`). */
export function parseDomainListInput(event: unknown): DomainListInput {
  return parseWith(domainListInputSchema, event);
}

/** Why a whole list was refused. */
export const listRejectionSchema = z.object({ reason: z.string({ error: 'must be a string' }) });
export type ListRejection = z.output<typeof listRejectionSchema>;

/** Output of PrepareDomainList. Big arrays live in S3, not in state (256 KiB payload limit). */
export const preparedDomainListSchema = z.looseObject({
  runId: text(),
  /** Carried through the Map so the summary can name what started the run (never its domains). */
  source: domainListSourceRefSchema,
  /** When PrepareDomainList ran (ISO). */
  startedAt: text(),
  /** `lists/<source-derived path>/<runId>/` in the results bucket; summary.json goes here. */
  resultsPrefix: text(),
  resultsBucket: text(),
  /** items.json: DomainListItem[] (ItemReader reads it). */
  itemsKey: text(),
  /** rejects.json: { invalid: InvalidLine[], duplicates: DuplicateLine[] }. */
  rejectsKey: text(),
  counts: object({
    lines: count(),
    valid: count(),
    invalid: count(),
    duplicate: count(),
    /** Blank lines, # comments and a CSV header row. */
    ignored: count(),
  }),
  /** The CSV header row, when the list starts with one (counted in `counts.ignored`). */
  header: z.optional(z.object({ line: count(), text: z.string({ error: 'must be a string' }) })),
  /** Set when the list as a whole was refused: nothing is scanned, and the summary says why. */
  rejected: z.optional(listRejectionSchema),
});
export type PreparedDomainList = z.output<typeof preparedDomainListSchema>;

/** Where the Distributed Map's ResultWriter put the results (AWS only). */
export const resultWriterOutputSchema = z.looseObject({
  ResultWriterDetails: z.looseObject({ Bucket: text(), Key: text() }),
});
export type ResultWriterOutput = z.output<typeof resultWriterOutputSchema>;

/**
 * WriteListSummary's input: the prepared list plus the Map's results, as a ResultWriter manifest
 * (`mapResult`, in AWS) or inline (`results`, the local runner, which runs the fan-out itself).
 */
export const writeSummaryInputSchema = z.looseObject({
  ...preparedDomainListSchema.def.shape,
  mapResult: z.optional(resultWriterOutputSchema),
  results: z.optional(
    z.array(z.custom<DomainScanResult>((value) => typeof value === 'object' && value !== null)),
  ),
});
export type WriteSummaryInput = z.output<typeof writeSummaryInputSchema>;

// ---------------------------------------------------------------------------------------------
// Documents in S3 (items.json, rejects.json, summary.json) and the Map's per-domain result
// ---------------------------------------------------------------------------------------------

/** One entry of items.json, the Distributed Map's ItemReader input. */
export interface DomainListItem {
  readonly domain: string;
  /** Deterministic: same run identity + same domain => same name, so a re-run never starts a second scan. */
  readonly executionName: string;
  readonly runId: string;
  /** 1-based line of the input where the domain first appeared (0 for inline lists: index + 1). */
  readonly line: number;
}

export interface InvalidLine {
  readonly line: number;
  readonly reason: string;
  /** The raw text, truncated to 200 characters. */
  readonly text: string;
}

export interface DuplicateLine {
  readonly line: number;
  readonly domain: string;
  readonly firstLine: number;
}

/** One Map iteration's result: what the child execution produced or why it did not. */
export interface DomainScanResult {
  readonly domain: string;
  readonly executionName: string;
  /** Parsed from the child's output (success) or from its failure cause (a JSON ScanOutcome). */
  readonly outcome: ScanOutcome | undefined;
  /** Set when the child could not be started or its cause was not a ScanOutcome. */
  readonly error: { readonly name: string; readonly message: string } | undefined;
}

/**
 * The error a domain's result carries when the run was stopped before the domain finished (the
 * local runner's Ctrl-C): the summary counts it as `interrupted`, apart from the failures.
 */
export const INTERRUPTED_ERROR = 'Interrupted';

export type DomainFinalState =
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'rejected'
  | 'interrupted'
  | 'invalid'
  | 'duplicate';

/** summary.json, written last when a list run finishes. Every input line is accounted for. */
export interface ListSummary {
  readonly runId: string;
  /** What started the run; inline domains appear as their count (`inlineDomains`). */
  readonly source: DomainListSourceRef;
  readonly startedAt: string | undefined;
  readonly finishedAt: string;
  readonly counts: Readonly<Record<DomainFinalState, number>> & {
    readonly lines: number;
    /** Blank lines, # comments and a CSV header row (`header` names the latter). */
    readonly ignored: number;
  };
  /** The CSV header row, when the list starts with one. */
  readonly header?: { readonly line: number; readonly text: string };
  readonly domains: readonly {
    readonly domain: string;
    readonly line: number;
    readonly state: DomainFinalState;
    /** For a duplicate line: the line where its domain first appeared. */
    readonly duplicateOf?: number;
    readonly outputPrefix: string | undefined;
    readonly manifestKey: string | undefined;
    readonly error: { readonly name: string; readonly message: string } | undefined;
    /** How StartScan settled this domain's start whose answer was lost, when it was. */
    readonly settledStart?: SettledStartOutcome | 'unresolved';
  }[];
  /**
   * Starts whose answer was lost, by how StartScan settled them (`unresolved` ones are rejected
   * domains); absent when every start answered.
   */
  readonly settledStarts?: {
    readonly adopted: number;
    readonly retried: number;
    readonly unresolved: number;
  };
  /** The first invalid lines (at most the sample limit); `counts.invalid` counts them all. */
  readonly invalid: readonly InvalidLine[];
  /** True when `invalid` or the duplicate rows hold only the first of more lines than listed. */
  readonly sampled: boolean;
  /** Set when the list as a whole was refused: nothing was scanned. */
  readonly rejected?: ListRejection;
}
