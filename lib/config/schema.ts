/**
 * The pipeline configuration as zod schemas, one per section. The types the rest of the app uses
 * are inferred from them (`PipelineConfig` …), so a rule and its type cannot drift apart.
 *
 * Rules shared with the handlers are imported, never restated: the poll bounds and the history
 * budget (`#lambdas/scan/poll-schedule`), the domain-list suffix rule (`#lambdas/domain-list/domain-list`). Rules that
 * span sections (a schedule naming a domain list, a list key ending in an intake suffix) live in
 * `parse.ts`, which sees every section at once.
 *
 * Plain TypeScript and zod: no aws-cdk-lib import, so the local runner loads it without the CDK.
 */
import * as z from 'zod/mini';
import {
  DEFAULT_DOMAIN_LIST_SUFFIXES,
  DOMAIN_LIST_SUFFIX_PATTERN,
  LIST_SIZE_LIMIT,
} from '#lambdas/domain-list/domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import {
  boundedNumber,
  describeValue,
  nonEmptyString,
  oneOf,
  section,
  strictBoolean,
} from '#lambdas/platform/input/schema';
import { checkAllowedSpecialUse, normalizeDomain } from '#lambdas/platform/input/validation';
import { type PollSettingNamer, pollSettingsSchema } from '#lambdas/scan/poll-schedule';
import { SCAN_DECODING_LIMIT, SCAN_OUTPUT_LIMIT } from '#lambdas/scan/settings';
import type { AlarmsConfig, alarmsSchema } from './alarms-schema.ts';
import type { BreachConfig, breachSchema } from './breach-schema.ts';
import { intakePrefixProblem } from './intake-prefix.ts';
import type { NotificationsConfig, notificationsSchema } from './notifications-schema.ts';
import { scanReconciliationSchema } from './reconciliation-schema.ts';
import type { RotationConfig, rotationSchema } from './rotation-schema.ts';
import { DEFAULT_SCAN_CONCURRENCY, SCAN_CONCURRENCY_BOUNDS } from './scan-concurrency.ts';
import { scheduleFields } from './schedule-fields.ts';
import type { StackConfig, stackSchema } from './stack-schema.ts';

export { DEFAULT_SCHEDULE_SETTINGS, NAME_PATTERN } from './schedule-fields.ts';

import { vendorUrlProblem } from './vendor-url.ts';

export { isLoopbackHost, vendorUrlProblem } from './vendor-url.ts';

/** `pipeline.<section>…`: how every setting is named in messages. */
export const ROOT = 'pipeline';

/** Names of lists and schedules: they appear in S3 paths and Scheduler resource names. */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Placeholder vendor URL. It lets `cdk synth` run with no configuration at all; the stack adds a
 * synth warning while it is in use, because nothing deployed with it can reach the vendor.
 */
export const VENDOR_URL_PLACEHOLDER = 'https://vendor.example.com';

/** CloudWatch Logs retention values (CDK's `RetentionDays`; 9999 = never expire). */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
  9999,
];

/** EventBridge Scheduler's limit on a target's Input. */
export const MAX_SCHEDULE_INPUT_CHARS = 8192;

/** An array of non-empty strings; `nonEmpty` refuses `[]`; `missing` is the message when it is absent. */
export function stringList(options: { nonEmpty: boolean; missing?: string }) {
  const list = z.array(nonEmptyString(), {
    error: (issue) =>
      issue.input === undefined && options.missing !== undefined
        ? options.missing
        : `must be an array of strings (got ${describeValue(issue.input)})`,
  });
  return options.nonEmpty
    ? list.check(z.refine((items) => items.length > 0, { error: 'must not be empty', abort: true }))
    : list;
}

const vendorUrl = () =>
  nonEmptyString().check(
    z.superRefine((text, context) => {
      const problem = vendorUrlProblem(text);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }),
  );

export const vendorSchema = z.pipe(
  section({
    /** Base URL of the scanning API. @default VENDOR_URL_PLACEHOLDER (synth warns) */
    scanApiUrl: z.optional(vendorUrl()),
    /** Base URL of the key-management API. @default - scanApiUrl */
    keysApiUrl: z.optional(vendorUrl()),
    /** Base URL of the breach-report API. @default - scanApiUrl */
    breachApiUrl: z.optional(vendorUrl()),
    /** The organisation's UUID, used in the key-management API's paths. */
    orgUuid: z.optional(
      nonEmptyString().check(
        z.refine((value) => UUID_PATTERN.test(value), {
          error: (issue) => `must be a UUID (got ${describeValue(issue.input)})`,
        }),
      ),
    ),
    /** `single`: one secret holds the org key for all three APIs; `per-api`: one secret each. */
    keys: z._default(oneOf(['single', 'per-api']), 'single'),
  }),
  z.transform(({ scanApiUrl = VENDOR_URL_PLACEHOLDER, keysApiUrl, breachApiUrl, orgUuid, keys }) => ({
    scanApiUrl,
    keysApiUrl: keysApiUrl ?? scanApiUrl,
    breachApiUrl: breachApiUrl ?? scanApiUrl,
    keys,
    ...(orgUuid === undefined ? {} : { orgUuid }),
  })),
);

const STATUS_STATES = ['pending', 'running', 'succeeded', 'failed'] as const;

/** Vendor status words mapped to pipeline states; matching is case-insensitive. */
export const statusVocabularySchema = section({
  pending: stringList({ nonEmpty: true, missing: 'is required when statusVocabulary is set' }),
  running: stringList({ nonEmpty: true, missing: 'is required when statusVocabulary is set' }),
  succeeded: stringList({ nonEmpty: true, missing: 'is required when statusVocabulary is set' }),
  failed: stringList({ nonEmpty: true, missing: 'is required when statusVocabulary is set' }),
}).check(
  z.superRefine((vocabulary, context) => {
    // One word in two states would make the classifier ambiguous.
    const seen = new Map<string, string>();
    for (const state of STATUS_STATES) {
      for (const word of vocabulary[state]) {
        const other = seen.get(word.toLowerCase());
        if (other !== undefined && other !== state) {
          context.addIssue({
            code: 'custom',
            path: [state],
            message: `repeats ${describeValue(word)}, already listed under ${other}`,
          });
        }
        seen.set(word.toLowerCase(), state);
      }
    }
  }),
);

export const scanSchema = section({
  /** Delete the scan at the vendor once its manifest is written. @default false */
  deleteAtVendorAfterManifest: z._default(strictBoolean(), false),
  /** Overrides the handlers' built-in status words (`STATUS_VOCABULARY`). */
  statusVocabulary: z.optional(statusVocabularySchema),
  /**
   * Special-use suffixes scanned anyway, e.g. `["test"]` for a lab: `local`, `internal`, `invalid`,
   * `test`, `example`. `localhost` and `metadata.google.internal` are never scanned. @default []
   */
  allowSpecialUseDomains: z._default(
    z.pipe(
      z.array(z.string(), {
        error: (issue) => `must be an array of strings (got ${describeValue(issue.input)})`,
      }),
      z.transform((suffixes: string[], context) => {
        try {
          return checkAllowedSpecialUse(suffixes, 'allowSpecialUseDomains');
        } catch (error) {
          context.issues.push({
            code: 'custom',
            message: (error as InvalidInputError).reason,
            input: suffixes,
          });
          return z.NEVER;
        }
      }),
    ),
    [],
  ),
  /**
   * Domains of one list scanned at once (Distributed Map MaxConcurrency); DEFAULT_SCAN_CONCURRENCY
   * says how the default was chosen. @default 2500
   */
  maxConcurrency: z._default(boundedNumber(SCAN_CONCURRENCY_BOUNDS), DEFAULT_SCAN_CONCURRENCY),
  /**
   * A scan output (report, logs, debug) is cut past this many bytes, counted after gzip/br decoding
   * as it streams (`SCAN_MAX_OUTPUT_BYTES`): the fetch fails with VendorBodyTooLargeError and
   * nothing is stored. @default 1 GiB
   */
  maxOutputBytes: z._default(boundedNumber(SCAN_OUTPUT_LIMIT.bounds), SCAN_OUTPUT_LIMIT.default),
  /**
   * A gzip/deflate/br-coded scan output is cut once it has decoded to more than this many times
   * the bytes received, past its first MiB (`SCAN_MAX_DECODING_RATIO`): the fetch fails with
   * VendorDecodingRatioError and nothing is stored. @default 100
   */
  maxDecodingRatio: z._default(boundedNumber(SCAN_DECODING_LIMIT.bounds), SCAN_DECODING_LIMIT.default),
  /** Scheduled reconciliation of the vendor's scans with the archive, and its statistics. */
  reconciliation: z._default(scanReconciliationSchema, () => scanReconciliationSchema.parse({})),
});

export const intakeSchema = section({
  /** Key prefix in the input bucket under which an upload starts a list run. @default 'incoming/' */
  prefix: z._default(
    z.string({ error: (issue) => `must be a non-empty string (got ${describeValue(issue.input)})` }).check(
      z.superRefine((prefix, context) => {
        const problem = intakePrefixProblem(prefix);
        if (problem) context.addIssue({ code: 'custom', message: problem });
      }),
    ),
    'incoming/',
  ),
  /** Key suffixes that count as domain lists (matched case-insensitively). @default DEFAULT_DOMAIN_LIST_SUFFIXES */
  suffixes: z._default(
    stringList({ nonEmpty: true }).check(
      z.superRefine((suffixes, context) => {
        const bad = suffixes.findIndex((suffix) => !DOMAIN_LIST_SUFFIX_PATTERN.test(suffix));
        if (bad >= 0) {
          context.addIssue({
            code: 'custom',
            path: [bad],
            message: `must start with '.' and be lower-case letters, digits, '.', '_' or '-' (got ${describeValue(suffixes[bad])})`,
          });
        }
      }),
    ),
    () => [...DEFAULT_DOMAIN_LIST_SUFFIXES],
  ),
  /** A list object larger than this is refused before it is read, with a summary saying why. @default 20 MiB */
  maxListBytes: z._default(boundedNumber(LIST_SIZE_LIMIT.bounds), LIST_SIZE_LIMIT.default),
});

/**
 * Inline domains (a named list or a schedule's), each checked with the validator the handlers and
 * the CLI use, under the configured special-use allowance: a domain a scheduled run would refuse
 * fails the synth instead of every run.
 */
export function inlineDomainsSchema(allowSpecialUse: readonly string[]) {
  return stringList({ nonEmpty: true }).check(
    z.superRefine((domains, context) => {
      domains.forEach((domain, index) => {
        try {
          normalizeDomain(domain, 'domain', { allowSpecialUse });
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error;
          const hint = error.reason.includes('special-use top-level domain')
            ? ` (allow it with ${ROOT}.scan.allowSpecialUseDomains)`
            : '';
          context.addIssue({ code: 'custom', path: [index], message: `${error.reason}${hint}` });
        }
      });
    }),
  );
}

/** A named domain list: an object in the input bucket, or inline domains (exactly one). */
export const domainListSchemaFor = (allowSpecialUse: readonly string[]) =>
  section({
    /** Key of the list object in the input bucket; must end with one of intake.suffixes. */
    objectKey: z.optional(
      nonEmptyString().check(
        z.refine((key) => !key.startsWith('/'), {
          error: (issue) => `must not start with '/' (got ${describeValue(issue.input)})`,
        }),
      ),
    ),
    /** The domains themselves. */
    domains: z.optional(inlineDomainsSchema(allowSpecialUse)),
  }).check(
    z.superRefine((entry, context) => {
      if ((entry.objectKey === undefined) === (entry.domains === undefined)) {
        context.addIssue({ code: 'custom', message: 'must set exactly one of objectKey and domains' });
      }
    }),
  );

export const scheduleSchemaFor = (allowSpecialUse: readonly string[]) =>
  section({
    ...scheduleFields,
    /** Name of an entry of `domainLists`. Exactly one of domainList and domains is set. */
    domainList: z.optional(nonEmptyString()),
    /** Inline domains. Exactly one of domainList and domains is set. */
    domains: z.optional(inlineDomainsSchema(allowSpecialUse)),
  }).check(
    z.superRefine((schedule, context) => {
      if ((schedule.domainList === undefined) === (schedule.domains === undefined)) {
        context.addIssue({ code: 'custom', message: 'must set exactly one of domainList and domains' });
      }
    }),
  );

/** The poll section, named `pipeline.poll.<setting>` in messages. */
export const pollNamer: PollSettingNamer = (field) => `${ROOT}.poll${field === undefined ? '' : `.${field}`}`;
export const pollSchema = pollSettingsSchema(pollNamer);

export const logRetentionDaysSchema = boundedNumber({ min: 1, max: 9999, integer: true }).check(
  z.refine((days) => LOG_RETENTION_DAYS.includes(days), {
    error: (issue) =>
      `must be one of CloudWatch's retention values ${LOG_RETENTION_DAYS.join(', ')} (got ${describeValue(issue.input)})`,
  }),
);

export const removalPolicySchema = oneOf(['retain', 'destroy']);

/**
 * The Lambda runtime of every function. Node.js 24 by default; Node.js 22 is kept for a team
 * that has not moved yet (Lambda deprecates it on 2027-04-30:
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtimes.html).
 */
export const LAMBDA_RUNTIMES = ['nodejs24.x', 'nodejs22.x'] as const;
export const lambdaRuntimeSchema = oneOf(LAMBDA_RUNTIMES);
/**
 * Whether functions ship source maps and run with `--enable-source-maps`: stack traces then name the
 * TypeScript file and line, at the price of a larger asset (and a larger package). Off by default.
 */
export const lambdaSourceMapsSchema = z.boolean({
  error: (issue) => `must be true or false (got ${describeValue(issue.input)})`,
});

/** The top level: which sections exist (their contents are checked section by section). */
export const rootSchema = section(
  Object.fromEntries(
    [
      'vendor',
      'poll',
      'scan',
      'intake',
      'breach',
      'rotation',
      'notifications',
      'alarms',
      'domainLists',
      'schedules',
      'logRetentionDays',
      'removalPolicy',
      'lambdaRuntime',
      'lambdaSourceMaps',
      'stack',
      // The JSON Schema a configuration file names for editors (config/pipeline.schema.json).
      '$schema',
    ].map((key) => [key, z.optional(z.unknown())]),
  ),
);

/** The shapes without any allowance, for the inferred types. */
export const domainListSchema = domainListSchemaFor([]);
export const scheduleSchema = scheduleSchemaFor([]);

export type VendorConfig = z.output<typeof vendorSchema>;
/** How the organisation's vendor API key(s) are stored. */
export type VendorKeyMode = VendorConfig['keys'];
export type StatusVocabularyConfig = z.output<typeof statusVocabularySchema>;
export type PollConfig = z.output<typeof pollSchema>;
export type ScanConfig = z.output<typeof scanSchema>;
export type IntakeConfig = z.output<typeof intakeSchema>;
/** A named domain list that schedules refer to: an object in the input bucket, or inline domains. */
export type DomainListDefinition = { readonly objectKey: string } | { readonly domains: readonly string[] };
export type ScheduleConfig = Omit<z.output<typeof scheduleSchema>, 'domains'> & {
  readonly domains?: readonly string[];
};
export type DataRemovalPolicy = z.output<typeof removalPolicySchema>;
export type LambdaRuntimeName = z.output<typeof lambdaRuntimeSchema>;

export interface PipelineConfig {
  readonly vendor: VendorConfig;
  readonly poll: PollConfig;
  readonly scan: ScanConfig;
  readonly intake: IntakeConfig;
  readonly breach: BreachConfig;
  readonly rotation: RotationConfig;
  readonly notifications: NotificationsConfig;
  readonly alarms: AlarmsConfig;
  /** Named domain lists that schedules refer to. @default {} */
  readonly domainLists: Readonly<Record<string, DomainListDefinition>>;
  /** EventBridge Scheduler schedules that start list runs. @default [] */
  readonly schedules: readonly ScheduleConfig[];
  /** Retention of every log group, in days; one of {@link LOG_RETENTION_DAYS}. @default 90 */
  readonly logRetentionDays: number;
  /** What happens to the data buckets and log groups when the stack is deleted (`destroy`: test stacks only). @default 'retain' */
  readonly removalPolicy: DataRemovalPolicy;
  /** The Lambda runtime of every function; the bundles' esbuild target follows it. @default 'nodejs24.x' */
  readonly lambdaRuntime: LambdaRuntimeName;
  /** Functions ship source maps and run with `--enable-source-maps`. @default false */
  readonly lambdaSourceMaps: boolean;
  /** The stack's name, account and Region. */
  readonly stack: StackConfig;
}

/** What a user writes in cdk.json or a config file: every section and setting optional. */
export type PipelineConfigInput = {
  readonly vendor?: z.input<typeof vendorSchema>;
  readonly poll?: z.input<typeof pollSchema>;
  readonly scan?: z.input<typeof scanSchema>;
  readonly intake?: z.input<typeof intakeSchema>;
  readonly breach?: z.input<typeof breachSchema>;
  readonly rotation?: z.input<typeof rotationSchema>;
  readonly notifications?: z.input<typeof notificationsSchema>;
  readonly alarms?: z.input<typeof alarmsSchema>;
  readonly domainLists?: Readonly<Record<string, DomainListDefinition>>;
  readonly schedules?: readonly z.input<typeof scheduleSchema>[];
  readonly logRetentionDays?: number;
  readonly removalPolicy?: DataRemovalPolicy;
  readonly lambdaRuntime?: LambdaRuntimeName;
  readonly lambdaSourceMaps?: boolean;
  readonly stack?: z.input<typeof stackSchema>;
  /** The JSON Schema editors check the file against; ignored by the pipeline. */
  readonly $schema?: string;
};
