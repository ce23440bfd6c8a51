/**
 * The state payloads that reach the scan handlers, as zod schemas. The state machine builds them
 * from our own outputs, but an execution can also be started by hand with any JSON, and the values
 * end up in S3 keys and vendor URLs: each field is checked, and the error names it
 * (`InvalidInputError('poll.attempt', 'must be a whole number >= 0')`).
 *
 * Parsers keep fields they do not know (loose objects at the top level), so the state machine may
 * carry extra data through a task whose result replaces the state.
 */
import * as z from 'zod/mini';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWith, validated } from '#lambdas/platform/input/schema';

export { parseWith } from '#lambdas/platform/input/schema';

import { ALREADY_ACCEPTED, normalizeDomain, validateUuid } from '#lambdas/platform/input/validation';
import type {
  PollState,
  ScanDomainInput,
  ScanInProgress,
  StatusSnapshot,
  StoredObject,
} from '#lambdas/scan/contracts';
import { SCAN_OUTPUT_NAMES, SCAN_OUTPUTS, type ScanOutput } from '#lambdas/scan/scan-outputs';
import type { ScanState } from '#lambdas/vendor-api/scan/types';

const SCAN_STATES = [
  'pending',
  'running',
  'succeeded',
  'failed',
  'unknown',
] as const satisfies readonly ScanState[];
/** Generous: list run ids are 20 hex characters, ad-hoc ones are words. */
const MAX_RUN_ID_LENGTH = 128;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

type Fields = Record<string, unknown>;

const object = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.object(shape, { error: 'must be a JSON object' });
const string = (missing = 'must be a string') =>
  z.string({ error: (issue) => (issue.input === undefined ? missing : 'must be a string') });
const wholeNumber = (min: number) =>
  z.number({ error: `must be a whole number >= ${min}` }).check(
    z.refine((value) => Number.isSafeInteger(value) && value >= min, {
      error: `must be a whole number >= ${min}`,
    }),
  );
/** Absent and null both mean "not given" (Step Functions writes null for a JSONPath that matched nothing). */
const optional = <T extends z.core.$ZodType>(schema: T, type: string) =>
  z.pipe(
    z.optional(z.union([schema, z.null()], { error: `must be a ${type} when present` })),
    z.transform((value) => (value === null ? undefined : value) as z.output<T> | undefined),
  );
const nonEmpty = () =>
  z
    .string({ error: 'must be a non-empty string' })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));

export const runIdSchema = z.pipe(
  z.nullish(z.string({ error: 'must be a string' })),
  z.transform((value, context) => {
    if (value === undefined || value === null) return 'adhoc';
    const runId = value.trim();
    const problem =
      runId === ''
        ? 'is empty'
        : runId.length > MAX_RUN_ID_LENGTH
          ? `is longer than ${MAX_RUN_ID_LENGTH} characters`
          : CONTROL_CHARS.test(runId)
            ? 'contains a control character'
            : undefined;
    if (problem) {
      context.issues.push({ code: 'custom', message: problem, input: value });
      return z.NEVER;
    }
    return runId;
  }),
);

export const pollStateSchema = object({
  attempt: wholeNumber(0),
  nextWaitSeconds: wholeNumber(1),
  waitedSeconds: wholeNumber(0),
  startedAt: z
    .string({ error: 'must be an ISO 8601 date-time' })
    .check(z.refine((value) => !Number.isNaN(Date.parse(value)), { error: 'must be an ISO 8601 date-time' })),
  deadlineExceeded: z.boolean({ error: 'must be true or false' }),
  ageAtLastPollSeconds: optional(wholeNumber(0), 'whole number'),
  ageAtPreviousPollSeconds: optional(wholeNumber(0), 'whole number'),
  expected: optional(
    object({
      earliestSeconds: wholeNumber(1),
      latestSeconds: wholeNumber(1),
      basis: z.enum(['domain', 'neighbours'], { error: 'must be domain or neighbours' }),
    }).check(
      z.refine((expected) => expected.latestSeconds >= expected.earliestSeconds, {
        error: 'latestSeconds must be >= earliestSeconds',
      }),
    ),
    'JSON object',
  ),
}) satisfies z.ZodMiniType<PollState, unknown>;

export const statusSnapshotSchema = object({
  state: z.enum(SCAN_STATES, { error: `must be one of ${SCAN_STATES.join(', ')}` }),
  vendorStatus: optional(z.string(), 'string'),
  progress: optional(z.number(), 'number'),
  raw: z.string({ error: 'must be a string' }),
  rawTruncated: z.pipe(
    z.unknown(),
    z.transform((value) => value === true),
  ),
}) satisfies z.ZodMiniType<StatusSnapshot, unknown>;

export const storedObjectSchema = object({
  // Which names belong is the table's business (SCAN_OUTPUTS), checked by the steps.
  name: nonEmpty(),
  bucket: nonEmpty(),
  key: nonEmpty(),
  size: wholeNumber(0),
  sha256: z
    .string({ error: 'must be 64 lower-case hexadecimal digits' })
    .check(z.regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hexadecimal digits' })),
  contentType: optional(z.string(), 'string'),
  versionId: optional(z.string(), 'string'),
}) satisfies z.ZodMiniType<StoredObject, unknown>;

/** StartScan's input. The domain is only checked for type here; startScan normalises it. */
export const scanDomainInputSchema = z.looseObject(
  { domain: string('is missing'), runId: runIdSchema },
  { error: 'must be a JSON object' },
);

/** The state of the poll loop: StartScan's output, PollScanStatus's input and output. */
export const scanInProgressSchema = z.pipe(
  z
    .looseObject(
      {
        domain: z.pipe(
          string(),
          validated((domain) => normalizeDomain(domain, 'domain', ALREADY_ACCEPTED)),
        ),
        runId: runIdSchema,
        scanUuid: z.pipe(
          string(),
          validated((uuid) => validateUuid(uuid, 'scanUuid')),
        ),
        outputPrefix: string(),
        poll: pollStateSchema,
        status: z.pipe(
          z.nullish(statusSnapshotSchema),
          z.transform((status) => status ?? undefined),
        ),
        settledStart: z.optional(z.enum(['adopted', 'retried'], { error: 'must be adopted or retried' })),
      },
      { error: 'must be a JSON object' },
    )
    .check(
      z.superRefine((state, context) => {
        const problem = outputPrefixProblem(state.outputPrefix, state.domain, state.scanUuid);
        if (problem) context.addIssue({ code: 'custom', path: ['outputPrefix'], message: problem });
      }),
    ),
  z.transform(({ status, ...rest }) => ({ ...rest, ...(status === undefined ? {} : { status }) })),
);

export function requireObject(value: unknown, field: string): Fields {
  return parseWith(z.looseObject({}, { error: 'must be a JSON object' }), value, field);
}

export function parseRunId(value: unknown, field = 'runId'): string {
  return parseWith(runIdSchema, value, field);
}

export function parseScanDomainInput(event: unknown): ScanDomainInput & Fields & { runId: string } {
  return parseWith(scanDomainInputSchema, event);
}

export function parseScanInProgress(event: unknown): ScanInProgress & Fields {
  return parseWith(scanInProgressSchema, event);
}

/**
 * `scans/<domain>/<yyyy>/<mm>/<dd>/<scanUuid>/` for exactly this domain and scan: a hand-made input
 * cannot make a step write outside its own scan's folder.
 */
export function parseOutputPrefix(value: unknown, domain: string, scanUuid: string): string {
  const prefix = parseWith(string(), value, 'outputPrefix');
  const problem = outputPrefixProblem(prefix, domain, scanUuid);
  if (problem) throw new InvalidInputError('outputPrefix', problem);
  return prefix;
}

function outputPrefixProblem(value: string, domain: string, scanUuid: string): string | undefined {
  const match = /^scans\/([^/]+)\/(\d{4})\/(\d{2})\/(\d{2})\/([^/]+)\/$/.exec(value);
  if (match && match[1] === domain && match[5] === scanUuid) return undefined;
  return `must be scans/${domain}/<yyyy>/<mm>/<dd>/${scanUuid}/ for this domain and scan`;
}

export function parsePollState(value: unknown, field = 'poll'): PollState {
  return parseWith(pollStateSchema, value, field);
}

export function parseStatusSnapshot(value: unknown, field = 'status'): StatusSnapshot {
  return parseWith(statusSnapshotSchema, value, field);
}

/** The row of the scan outputs table named `value`. */
export function parseOutputName(value: unknown, field = 'output'): ScanOutput {
  const row = SCAN_OUTPUTS.find((output) => output.name === value);
  if (!row) throw new InvalidInputError(field, `must be one of ${SCAN_OUTPUT_NAMES.join(', ')}`);
  return row;
}

/** The Parallel's array of StoredObject; completeness is the manifest step's business. */
export function parseStoredObjects(value: unknown, field = 'stored'): StoredObject[] {
  return parseWith(
    z.array(storedObjectSchema, { error: 'must be an array of stored objects' }),
    value,
    field,
  );
}
