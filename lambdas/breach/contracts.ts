/**
 * The breach workflow's inputs and state payloads as zod/mini schemas, with their types inferred.
 *
 * Emails are personal data: they appear in exactly one place, the request object in S3 that a
 * starter writes (the local runner, a watchlist run). State payloads, execution names, keys and log
 * lines carry only the person's keyed hash (`person.id`) and a slug of the name.
 */
import { createHash, createHmac } from 'node:crypto';
import * as z from 'zod/mini';
import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText, parseWith, validated } from '#lambdas/platform/input/schema';
import { validateEmail } from '#lambdas/platform/input/validation';
import { containsEmail } from '#lambdas/platform/redaction/redact';
import { MAX_EXECUTION_NAME_LENGTH } from '#lambdas/platform/runs/naming';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';

/** How many distinct addresses one report may cover unless configured otherwise (BREACH_MAX_EMAILS). */
/** Its variables are public too: the watchlist sets the address cap and reads the BreachReport machine's. */
export { BREACH_VARIABLES } from '#lambdas/breach/variables';
export const DEFAULT_MAX_EMAILS = 50;
/** The vendor client takes at most this many addresses per recon. */
export const MAX_EMAILS_LIMIT = 100;
/** The vendor stores the name in the report; a bounded length keeps it a name. */
export const MAX_PERSON_NAME_LENGTH = 200;

/** A person to report on, normalised: the name trimmed, the emails valid and distinct. */
export interface BreachRequest {
  readonly name: string;
  readonly emails: readonly string[];
}

/** C0 controls, DEL and C1 controls: they would corrupt the vendor's report and our log lines. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

const personName = z
  .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a string') })
  .check(
    z.trim(),
    z.minLength(1, { error: 'is empty' }),
    z.refine((name) => [...name].length <= MAX_PERSON_NAME_LENGTH, {
      error: `is longer than ${MAX_PERSON_NAME_LENGTH} characters`,
    }),
    z.refine((name) => !CONTROL_CHARACTERS.test(name), { error: 'contains a control character' }),
    // The name is slugged into keys and shown on the terminal; the addresses belong in `emails`.
    z.refine((name) => !containsEmail(name), {
      error: 'is or contains an email address; give the name only, and the address under emails',
    }),
  );

/**
 * `{ name, emails }`, normalised: the name trimmed; each address valid (an error names it by
 * position, `emails[3]`, and never quotes it); duplicates dropped case-insensitively, keeping the
 * first; at most `maxEmails` distinct addresses.
 */
export function breachRequestSchema(maxEmails: number = DEFAULT_MAX_EMAILS) {
  return z.pipe(
    z.object(
      {
        name: personName,
        emails: z
          .array(z.pipe(z.string({ error: 'must be a string' }), validated(validateEmail)), {
            error: (issue) => (issue.input === undefined ? 'is missing' : 'must be an array of addresses'),
          })
          .check(z.minLength(1, { error: 'must list at least one address' })),
      },
      { error: 'must be an object with name and emails' },
    ),
    z.transform((request, context) => {
      const seen = new Set<string>();
      const emails = request.emails.filter((email) => {
        const identity = email.toLowerCase();
        if (seen.has(identity)) return false;
        seen.add(identity);
        return true;
      });
      if (emails.length > maxEmails) {
        context.issues.push({
          code: 'custom',
          path: ['emails'],
          message: `lists ${emails.length} distinct addresses; at most ${maxEmails} are accepted per report`,
          input: emails.length,
        });
        return z.NEVER;
      }
      return { name: request.name, emails, duplicatesRemoved: request.emails.length - emails.length };
    }),
  );
}

/** Parses a request with {@link breachRequestSchema}; errors name the field under `root`. */
export function parseBreachRequest(
  value: unknown,
  options: { readonly maxEmails?: number; readonly root?: string } = {},
): BreachRequest & { readonly duplicatesRemoved: number } {
  const maxEmails = options.maxEmails ?? DEFAULT_MAX_EMAILS;
  // Built once per limit: a 100,000-row watchlist spent 2 s of its CPU building the same schema.
  let schema = requestSchemas.get(maxEmails);
  if (schema === undefined) {
    schema = breachRequestSchema(maxEmails);
    requestSchemas.set(maxEmails, schema);
  }
  return parseWith(schema, value, options.root ?? 'request');
}

const requestSchemas = new Map<number, ReturnType<typeof breachRequestSchema>>();

const text = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a non-empty string') })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));
const hex = (length: number) =>
  z
    .string({ error: 'is missing' })
    .check(
      z.regex(new RegExp(`^[0-9a-f]{${length}}$`), { error: `must be ${length} lower-case hex digits` }),
    );
const object = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.object(shape, { error: (issue) => (issue.input === undefined ? 'is missing' : 'must be an object') });

/** A person as the workflow knows them: a keyed hash of their identity and a slug of the name. */
export const personRefSchema = object({
  /** HMAC-SHA256 (hex) of the normalised name and emails, under the pipeline's identity key. */
  id: hex(64),
  /** `[a-z0-9-]`, at most 40 characters: the only form of the name that appears in keys. */
  slug: z.string().check(z.regex(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, { error: 'is not a slug' })),
});
export type PersonRef = z.infer<typeof personRefSchema>;

const offset = z
  .int({ error: 'must be a whole number of bytes' })
  .check(z.gte(0, { error: 'must not be negative' }));

/**
 * Where a request object lives; only Recon reads it. With `range`, the object holds many people's
 * requests (a watchlist run's shard, one JSON line each) and this person's is the bytes from
 * `start` to `end`, both included (an HTTP Range): Recon reads those bytes only.
 */
export const objectRefSchema = object({
  bucket: text(),
  key: text(),
  versionId: z.optional(text()),
  range: z.optional(
    object({ start: offset, end: offset }).check(
      z.refine((range) => range.end >= range.start, { error: 'must end at or after its start' }),
    ),
  ),
});
export type ObjectRef = z.infer<typeof objectRefSchema>;

/** The input of one BreachReport execution. */
export const breachReportInputSchema = object({
  /** Names the request: an execution and its outputs are per person and request. */
  requestId: z
    .string()
    .check(z.regex(/^[A-Za-z0-9_-]{1,40}$/, { error: 'must be 1-40 characters of A-Z a-z 0-9 _ -' })),
  person: personRefSchema,
  request: objectRefSchema,
});
export type BreachReportInput = z.infer<typeof breachReportInputSchema>;

export const RECON_STATUSES = ['success', 'no_results'] as const;
export type ReconStatus = (typeof RECON_STATUSES)[number];

/**
 * Where a vendor value too large for a state payload is kept: a string field of a JSON object in
 * S3 (recon.json), with its size and digest so a reader knows it got the value the writer meant.
 */
export const valueRefSchema = object({
  bucket: text(),
  key: text(),
  field: z.literal('output', { error: "must be 'output'" }),
  bytes: z.number({ error: 'must be a number' }),
  sha256: hex(64),
});
export type ValueRef = z.infer<typeof valueRefSchema>;

/** Recon's answer as the state machine routes on it (the whole answer is in recon.json). */
export const reconSummarySchema = object({
  status: z.enum(RECON_STATUSES, { error: "must be 'success' or 'no_results'" }),
  /**
   * The vendor's `output`, redacted (`redactText`), when it fits `breach.maxInlineValueBytes`;
   * otherwise `outputRef`.
   */
  reportName: z.optional(text()),
  outputRef: z.optional(valueRefSchema),
  totalBreaches: z.optional(z.number()),
  /**
   * Where the vendor's exact report name is kept, when `reportName` is its redacted form (the
   * vendor put an address in it): personal data, read only by ArchiveReport.
   */
  reportNameKey: z.optional(text()),
  /** The recon.json this run wrote. */
  reconKey: text(),
});
export type ReconSummary = z.infer<typeof reconSummarySchema>;

/** What Recon passes on: the input plus the outcome and the run's prefix. */
export const reconOutputSchema = z.extend(breachReportInputSchema, {
  outputPrefix: text(),
  recon: reconSummarySchema,
});
export type ReconOutput = z.infer<typeof reconOutputSchema>;

/** An archive as Archive reports it; the entries stay in its manifest, not in the state. */
export const archiveSummarySchema = object({
  bucket: text(),
  key: text(),
  manifestKey: text(),
  size: z.number(),
  sha256: hex(64),
  entryCount: z.number(),
  /** True when this run found it already archived (and stored no bytes of its own). */
  alreadyArchived: z.boolean(),
  /**
   * Set when the report's archive already held other verified bytes under the same name (a
   * concurrent archive, or a name the vendor reused for another request): this run's bytes are
   * kept beside them under `conflicts/`, and `key` names them. The value is the existing digest.
   */
  conflictsWith: z.optional(hex(64)),
});
export type ArchiveSummary = z.infer<typeof archiveSummarySchema>;

export const archiveOutputSchema = z.extend(reconOutputSchema, { archive: archiveSummarySchema });
export type ArchiveOutput = z.infer<typeof archiveOutputSchema>;

// ---------------------------------------------------------------------------------------------
// Names a starter (the local runner, a watchlist run) gives a request, none of which reveals an
// email. A keyed hash (HMAC-SHA256), not a plain one: the set of plausible addresses of an
// organisation is small enough to hash exhaustively, so an unkeyed digest in a key or a log line
// would give the address away. The identity key lives in Secrets Manager (or, locally, in the run's
// state folder).
// ---------------------------------------------------------------------------------------------

/** Where every breach object lives in the results bucket. */
export const BREACH_PREFIX = 'breach/';
const SLUG_MAX = 40;
/** An identity key shorter than this is a configuration mistake, not a key. */
export const MIN_IDENTITY_KEY_BYTES = 32;

/** The keyed hash and slug of a person: `id` covers the name and every address, in any order or case. */
export function personRef(identityKey: string, request: BreachRequest): PersonRef {
  if (Buffer.byteLength(identityKey) < MIN_IDENTITY_KEY_BYTES) {
    throw new ConfigurationError(
      'breach identity key',
      `must be at least ${MIN_IDENTITY_KEY_BYTES} bytes long`,
    );
  }
  const canonical = [
    request.name.normalize('NFC').toLowerCase(),
    ...request.emails.map((email) => email.toLowerCase()).sort(),
  ].join('\n');
  return {
    id: createHmac('sha256', identityKey).update(canonical).digest('hex'),
    slug: slugOf(request.name),
  };
}

/** ASCII letters and digits of `text`, lower case, dashes between words; `person` when none is left. */
export function slugOf(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return slug === '' ? 'person' : slug;
}

/**
 * `breach-<48 hex>`: the same person and request always give the same name, so Step Functions
 * refuses a duplicate start and a recon is never repeated. Neither the name nor a slug is in it.
 */
export function breachExecutionName(person: PersonRef, requestId: string): string {
  const name = `breach-${createHash('sha256').update(`${person.id}\n${requestId}`).digest('hex').slice(0, 48)}`;
  return name.slice(0, MAX_EXECUTION_NAME_LENGTH);
}

/** BREACH_MAX_EMAILS, held to 1..MAX_EMAILS_LIMIT; undefined when unset (DEFAULT_MAX_EMAILS applies). */
export function maxEmailsFromEnv(env: Env): number | undefined {
  const raw = optionalEnv(env, BREACH_VARIABLES.maxEmails);
  if (raw === undefined) return undefined;
  const parsed = numberFromText({ min: 1, max: MAX_EMAILS_LIMIT, integer: true }).safeParse(raw);
  if (!parsed.success) {
    throw new ConfigurationError(BREACH_VARIABLES.maxEmails, parsed.error.issues[0]?.message ?? 'is invalid');
  }
  return parsed.data;
}
