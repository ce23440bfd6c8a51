/**
 * The pipeline's typed configuration: one object, validated once, read by the CDK app
 * (bin/security-pipeline.ts) and by the local runner (local/**).
 *
 * Plain TypeScript on purpose: no aws-cdk-lib import, so the local runner can load it without
 * pulling in the CDK. Every error names the setting it is about, e.g.
 * `pipeline.poll.maxWaitSeconds must be >= minWaitSeconds (got 10 < 15)`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DOMAIN_LIST_SUFFIX_PATTERN } from '#core/domain-list';
import { InvalidInputError } from '#core/errors';
import { normalizeDomain } from '#core/validation';
// The handlers' own poll arithmetic (plain TypeScript, no AWS imports): synth must refuse exactly
// the poll settings a handler would refuse at cold start.
import {
  estimateHistoryEvents,
  pollSettingsProblems,
  STEP_FUNCTIONS_HISTORY_EVENT_LIMIT,
  worstCaseLoopIterations,
} from '../lambdas/core/scan/poll-schedule.ts';

// ---------------------------------------------------------------------------------------------
// Shape
// ---------------------------------------------------------------------------------------------

/** How the organisation's vendor API key(s) are stored. */
export type VendorKeyMode = 'single' | 'per-api';

/** The three vendor APIs. */
export type VendorApiName = 'scan' | 'keys' | 'breach';

export interface VendorConfig {
  /**
   * Base URL of the vendor's scanning API. https only (http is accepted for loopback hosts, for the
   * simulator). Set it before a real deploy: the default is a placeholder and synth warns about it.
   * @default 'https://vendor.example.com' (placeholder)
   */
  readonly scanApiUrl: string;
  /**
   * Base URL of the key-management API.
   * @default - scanApiUrl
   */
  readonly keysApiUrl: string;
  /**
   * Base URL of the breach-report API.
   * @default - scanApiUrl
   */
  readonly breachApiUrl: string;
  /**
   * The organisation's UUID, used in the key-management API's paths (key rotation, roadmap part 4).
   * @default - none
   */
  readonly orgUuid?: string;
  /**
   * `single`: one Secrets Manager secret holds the org key for all three APIs.
   * `per-api`: three secrets, one per API.
   * @default 'single'
   */
  readonly keys: VendorKeyMode;
}

/** Vendor status words mapped to pipeline states; matching is case-insensitive. */
export interface StatusVocabularyConfig {
  readonly pending: readonly string[];
  readonly running: readonly string[];
  readonly succeeded: readonly string[];
  readonly failed: readonly string[];
}

/** The adaptive wait/poll loop of the per-domain state machine. */
export interface PollConfig {
  /**
   * First wait after starting a scan, in seconds (1..3600).
   * @default 15
   */
  readonly minWaitSeconds: number;
  /**
   * Largest wait between two status polls, in seconds (minWaitSeconds..3600).
   * @default 300
   */
  readonly maxWaitSeconds: number;
  /**
   * Each wait is the previous one times this factor, capped at maxWaitSeconds (1..4).
   * @default 1.5
   */
  readonly growthFactor: number;
  /**
   * A scan still unfinished after this many seconds is marked timed out (60..604800, 7 days).
   * @default 86400
   */
  readonly deadlineSeconds: number;
}

export interface ScanConfig {
  /**
   * Delete the scan at the vendor once its manifest is written. A failed delete never fails the scan.
   * @default false
   */
  readonly deleteAtVendorAfterManifest: boolean;
  /**
   * Overrides the built-in status words (passed to the handlers as `STATUS_VOCABULARY`).
   * @default - the handlers' built-in vocabulary
   */
  readonly statusVocabulary?: StatusVocabularyConfig;
  /**
   * How many domains of one list are scanned at the same time (Distributed Map MaxConcurrency, 1..1000).
   * @default 10
   */
  readonly maxConcurrency: number;
}

export interface IntakeConfig {
  /**
   * Key prefix in the input bucket under which an uploaded object starts a list run.
   * Non-empty, no leading `/`, ends with `/`.
   * @default 'incoming/'
   */
  readonly prefix: string;
  /**
   * Lower-case key suffixes that count as domain lists (other uploads are ignored).
   * @default ['.txt', '.csv']
   */
  readonly suffixes: readonly string[];
}

/** A named domain list that schedules refer to: an object in the input bucket, or inline domains. */
export type DomainListDefinition =
  | {
      /** Key of the list object in the input bucket; must end with one of intake.suffixes. */
      readonly objectKey: string;
    }
  | {
      /** The domains themselves (the list handler validates each one). */
      readonly domains: readonly string[];
    };

export interface ScheduleConfig {
  /** Unique name, `[A-Za-z0-9_-]{1,64}`; appears in the list run's input and its S3 results path. */
  readonly name: string;
  /** EventBridge Scheduler expression: `cron(m h dom mon dow year)`, `rate(n unit)` or `at(yyyy-mm-ddThh:mm:ss)`. */
  readonly expression: string;
  /**
   * IANA time zone the expression is evaluated in.
   * @default 'UTC'
   */
  readonly timeZone: string;
  /** Name of an entry of `domainLists`. Exactly one of domainList and domains is set. */
  readonly domainList?: string;
  /** Inline domains. Exactly one of domainList and domains is set. */
  readonly domains?: readonly string[];
  /**
   * Scheduler's flexible time window in minutes (0 = off, 1..1440).
   * @default 15
   */
  readonly flexibleWindowMinutes: number;
  /**
   * Retries of a failed StartExecution before the event goes to the dead-letter queue (0..185).
   * @default 3
   */
  readonly maxRetryAttempts: number;
  /**
   * Give up on an undelivered fire after this many seconds (60..86400).
   * @default 3600
   */
  readonly maxEventAgeSeconds: number;
  /**
   * A disabled schedule is deployed but does not fire.
   * @default true
   */
  readonly enabled: boolean;
}

export type DataRemovalPolicy = 'retain' | 'destroy';

export interface PipelineConfig {
  readonly vendor: VendorConfig;
  readonly poll: PollConfig;
  readonly scan: ScanConfig;
  readonly intake: IntakeConfig;
  /**
   * Named domain lists that schedules refer to.
   * @default {}
   */
  readonly domainLists: Readonly<Record<string, DomainListDefinition>>;
  /**
   * EventBridge Scheduler schedules that start list runs.
   * @default []
   */
  readonly schedules: readonly ScheduleConfig[];
  /**
   * Retention of every log group (Lambda, state machines), in days; one of CloudWatch's values
   * (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
   * 3288, 3653, or 9999 for never expire).
   * @default 90
   */
  readonly logRetentionDays: number;
  /**
   * What happens to the data buckets (input, results, access logs) when the stack is deleted.
   * `destroy` empties and deletes them: for throw-away test stacks only.
   * @default 'retain'
   */
  readonly removalPolicy: DataRemovalPolicy;
}

/** Recursively optional: what a user writes in cdk.json or a config file. */
export type PipelineConfigInput = {
  readonly vendor?: Partial<VendorConfig>;
  readonly poll?: Partial<PollConfig>;
  readonly scan?: Partial<ScanConfig>;
  readonly intake?: Partial<IntakeConfig>;
  readonly domainLists?: Readonly<Record<string, DomainListDefinition>>;
  readonly schedules?: readonly (Partial<ScheduleConfig> & Pick<ScheduleConfig, 'name' | 'expression'>)[];
  readonly logRetentionDays?: number;
  readonly removalPolicy?: DataRemovalPolicy;
};

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

/**
 * Placeholder vendor URL. It lets `cdk synth` run with no configuration at all; the stack adds a
 * synth warning while it is in use, because nothing deployed with it can reach the vendor.
 */
export const VENDOR_URL_PLACEHOLDER = 'https://vendor.example.com';

/** Defaults of every schedule setting that may be left out. */
export const DEFAULT_SCHEDULE_SETTINGS = {
  timeZone: 'UTC',
  flexibleWindowMinutes: 15,
  maxRetryAttempts: 3,
  maxEventAgeSeconds: 3600,
  enabled: true,
} as const satisfies Partial<ScheduleConfig>;

/** The configuration used when nothing is set. */
export const DEFAULT_PIPELINE_CONFIG: PipelineConfig = {
  vendor: {
    scanApiUrl: VENDOR_URL_PLACEHOLDER,
    keysApiUrl: VENDOR_URL_PLACEHOLDER,
    breachApiUrl: VENDOR_URL_PLACEHOLDER,
    keys: 'single',
  },
  poll: { minWaitSeconds: 15, maxWaitSeconds: 300, growthFactor: 1.5, deadlineSeconds: 86_400 },
  scan: { deleteAtVendorAfterManifest: false, maxConcurrency: 10 },
  intake: { prefix: 'incoming/', suffixes: ['.txt', '.csv'] },
  domainLists: {},
  schedules: [],
  logRetentionDays: 90,
  removalPolicy: 'retain',
};

/** CloudWatch Logs retention values (CDK's `RetentionDays`; 9999 = never expire). */
export const LOG_RETENTION_DAYS: readonly number[] = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
  9999,
];

/** EventBridge Scheduler's limit on a target's Input. */
const MAX_SCHEDULE_INPUT_CHARS = 8192;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

export interface ConfigIssue {
  /** Dotted path of the setting, e.g. `pipeline.poll.maxWaitSeconds` or `pipeline.schedules[0]`. */
  readonly setting: string;
  readonly problem: string;
}

/** Every problem found in one configuration, each naming its setting. */
export class PipelineConfigError extends Error {
  readonly source: string;
  readonly issues: readonly ConfigIssue[];

  constructor(source: string, issues: readonly ConfigIssue[]) {
    const lines = issues.map((issue) => `  - ${issue.setting} ${issue.problem}`);
    super(`Invalid pipeline configuration (${source}):\n${lines.join('\n')}`);
    this.name = 'PipelineConfigError';
    this.source = source;
    this.issues = issues;
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

type RawObject = Record<string, unknown>;

/** Collects issues so one run reports every problem, not just the first. */
class Checker {
  readonly issues: ConfigIssue[] = [];

  add(setting: string, problem: string): void {
    this.issues.push({ setting, problem });
  }

  /** An optional nested object; anything else is reported. */
  object(value: unknown, setting: string): RawObject | undefined {
    if (value === undefined) return undefined;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      this.add(setting, `must be an object (got ${describe(value)})`);
      return undefined;
    }
    return value as RawObject;
  }

  /** Typos (`scanApiURL`) would otherwise silently fall back to a default. */
  knownKeys(raw: RawObject | undefined, setting: string, known: readonly string[]): void {
    if (!raw) return;
    for (const key of Object.keys(raw)) {
      if (!known.includes(key)) {
        this.add(`${setting}.${key}`, `is not a known setting (known: ${known.join(', ')})`);
      }
    }
  }

  number(
    value: unknown,
    setting: string,
    fallback: number,
    bounds: { min: number; max: number; integer?: boolean },
  ): number {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.add(setting, `must be a number (got ${describe(value)})`);
      return fallback;
    }
    if (bounds.integer && !Number.isInteger(value)) {
      this.add(setting, `must be a whole number (got ${value})`);
      return fallback;
    }
    if (value < bounds.min || value > bounds.max) {
      this.add(setting, `must be between ${bounds.min} and ${bounds.max} (got ${value})`);
      return fallback;
    }
    return value;
  }

  boolean(value: unknown, setting: string, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') {
      this.add(setting, `must be true or false (got ${describe(value)})`);
      return fallback;
    }
    return value;
  }

  string(value: unknown, setting: string): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim().length === 0) {
      this.add(setting, `must be a non-empty string (got ${describe(value)})`);
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(value: unknown, setting: string, allowed: readonly T[], fallback: T): T {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
      this.add(setting, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')} (got ${describe(value)})`);
      return fallback;
    }
    return value as T;
  }

  stringArray(value: unknown, setting: string, options: { nonEmpty: boolean }): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.add(setting, `must be an array of strings (got ${describe(value)})`);
      return undefined;
    }
    if (options.nonEmpty && value.length === 0) {
      this.add(setting, 'must not be empty');
      return undefined;
    }
    const bad = value.findIndex((v) => typeof v !== 'string' || v.trim().length === 0);
    if (bad >= 0) {
      this.add(`${setting}[${bad}]`, `must be a non-empty string (got ${describe(value[bad])})`);
      return undefined;
    }
    return value as string[];
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

const ROOT = 'pipeline';
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Merges `raw` onto {@link DEFAULT_PIPELINE_CONFIG} and validates the result.
 * @param raw the user's settings (an object, or undefined for all defaults)
 * @param source where they came from, for the error message (a file name, "context 'pipeline'")
 * @throws PipelineConfigError listing every problem, each naming its setting
 */
export function parsePipelineConfig(raw: unknown, source: string): PipelineConfig {
  const check = new Checker();
  const root = raw === undefined || raw === null ? {} : check.object(raw, ROOT);
  if (!root) throw new PipelineConfigError(source, check.issues);
  check.knownKeys(root, ROOT, [
    'vendor',
    'poll',
    'scan',
    'intake',
    'domainLists',
    'schedules',
    'logRetentionDays',
    'removalPolicy',
  ]);

  const vendor = parseVendor(check, root.vendor);
  const poll = parsePoll(check, root.poll);
  const scan = parseScan(check, root.scan);
  const intake = parseIntake(check, root.intake);
  const domainLists = parseDomainLists(check, root.domainLists, intake);
  const schedules = parseSchedules(check, root.schedules, domainLists);

  const logRetentionDays = check.number(
    root.logRetentionDays,
    `${ROOT}.logRetentionDays`,
    DEFAULT_PIPELINE_CONFIG.logRetentionDays,
    { min: 1, max: 9999, integer: true },
  );
  if (!LOG_RETENTION_DAYS.includes(logRetentionDays)) {
    check.add(
      `${ROOT}.logRetentionDays`,
      `must be one of CloudWatch's retention values ${LOG_RETENTION_DAYS.join(', ')} (got ${logRetentionDays})`,
    );
  }
  const removalPolicy = check.oneOf(
    root.removalPolicy,
    `${ROOT}.removalPolicy`,
    ['retain', 'destroy'],
    DEFAULT_PIPELINE_CONFIG.removalPolicy,
  );

  if (check.issues.length > 0) throw new PipelineConfigError(source, check.issues);
  return { vendor, poll, scan, intake, domainLists, schedules, logRetentionDays, removalPolicy };
}

function parseVendor(check: Checker, value: unknown): VendorConfig {
  const at = `${ROOT}.vendor`;
  const raw = check.object(value, at) ?? {};
  check.knownKeys(raw, at, ['scanApiUrl', 'keysApiUrl', 'breachApiUrl', 'orgUuid', 'keys']);
  const scanApiUrl = vendorUrl(check, raw.scanApiUrl, `${at}.scanApiUrl`) ?? VENDOR_URL_PLACEHOLDER;
  const keysApiUrl = vendorUrl(check, raw.keysApiUrl, `${at}.keysApiUrl`) ?? scanApiUrl;
  const breachApiUrl = vendorUrl(check, raw.breachApiUrl, `${at}.breachApiUrl`) ?? scanApiUrl;
  const orgUuid = check.string(raw.orgUuid, `${at}.orgUuid`);
  if (orgUuid !== undefined && !UUID_PATTERN.test(orgUuid)) {
    check.add(`${at}.orgUuid`, `must be a UUID (got ${describe(orgUuid)})`);
  }
  const keys = check.oneOf(raw.keys, `${at}.keys`, ['single', 'per-api'], 'single');
  return { scanApiUrl, keysApiUrl, breachApiUrl, keys, ...(orgUuid === undefined ? {} : { orgUuid }) };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** https only; plain http would send the org key in clear, except to the local simulator. */
function vendorUrl(check: Checker, value: unknown, setting: string): string | undefined {
  const text = check.string(value, setting);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    check.add(setting, `must be an absolute URL (got ${describe(text)})`);
    return undefined;
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname) || /^127(\.\d{1,3}){3}$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    check.add(setting, `must use https (http is allowed only for loopback hosts) (got ${describe(text)})`);
    return undefined;
  }
  if (url.username || url.password) {
    check.add(setting, 'must not contain credentials: the API key lives in Secrets Manager');
    return undefined;
  }
  if (url.search || url.hash) {
    check.add(setting, `must be a base URL without query or fragment (got ${describe(text)})`);
    return undefined;
  }
  return text;
}

function parsePoll(check: Checker, value: unknown): PollConfig {
  const at = `${ROOT}.poll`;
  const raw = check.object(value, at) ?? {};
  check.knownKeys(raw, at, ['minWaitSeconds', 'maxWaitSeconds', 'growthFactor', 'deadlineSeconds']);
  const defaults = DEFAULT_PIPELINE_CONFIG.poll;
  const minWaitSeconds = check.number(raw.minWaitSeconds, `${at}.minWaitSeconds`, defaults.minWaitSeconds, {
    min: 1,
    max: 3600,
    integer: true,
  });
  const maxWaitSeconds = check.number(raw.maxWaitSeconds, `${at}.maxWaitSeconds`, defaults.maxWaitSeconds, {
    min: 1,
    max: 3600,
    integer: true,
  });
  const growthFactor = check.number(raw.growthFactor, `${at}.growthFactor`, defaults.growthFactor, {
    min: 1,
    max: 4,
  });
  const deadlineSeconds = check.number(
    raw.deadlineSeconds,
    `${at}.deadlineSeconds`,
    defaults.deadlineSeconds,
    { min: 60, max: 604_800, integer: true },
  );
  const poll = { minWaitSeconds, maxWaitSeconds, growthFactor, deadlineSeconds };
  if (maxWaitSeconds < minWaitSeconds) {
    check.add(
      `${at}.maxWaitSeconds`,
      `must be >= minWaitSeconds (got ${maxWaitSeconds} < ${minWaitSeconds})`,
    );
    return poll;
  }
  // A Standard execution fails at 25,000 history events; like the handlers, keep half of that
  // for retries and whatever the estimate does not see.
  const events = estimateHistoryEvents(poll);
  const budget = STEP_FUNCTIONS_HISTORY_EVENT_LIMIT / 2;
  if (events > budget) {
    check.add(
      at,
      `makes a worst-case poll loop of ${worstCaseLoopIterations(poll)} polls (~${events} execution history events), ` +
        `over the budget of ${budget} (half of Step Functions' ${STEP_FUNCTIONS_HISTORY_EVENT_LIMIT}-event limit): ` +
        `raise ${at}.maxWaitSeconds (${maxWaitSeconds}) or ${at}.growthFactor (${growthFactor}), ` +
        `or lower ${at}.deadlineSeconds (${deadlineSeconds})`,
    );
    return poll;
  }
  // Anything else the handlers would refuse at cold start (names translated to settings).
  for (const problem of pollSettingsProblems(poll)) {
    check.add(`${at}.${POLL_SETTING_BY_VARIABLE[problem.setting] ?? problem.setting}`, problem.problem);
  }
  return poll;
}

const POLL_SETTING_BY_VARIABLE: Record<string, keyof PollConfig> = {
  POLL_MIN_WAIT_SECONDS: 'minWaitSeconds',
  POLL_MAX_WAIT_SECONDS: 'maxWaitSeconds',
  POLL_GROWTH_FACTOR: 'growthFactor',
  SCAN_DEADLINE_SECONDS: 'deadlineSeconds',
};

function parseScan(check: Checker, value: unknown): ScanConfig {
  const at = `${ROOT}.scan`;
  const raw = check.object(value, at) ?? {};
  check.knownKeys(raw, at, ['deleteAtVendorAfterManifest', 'statusVocabulary', 'maxConcurrency']);
  const defaults = DEFAULT_PIPELINE_CONFIG.scan;
  const deleteAtVendorAfterManifest = check.boolean(
    raw.deleteAtVendorAfterManifest,
    `${at}.deleteAtVendorAfterManifest`,
    defaults.deleteAtVendorAfterManifest,
  );
  const maxConcurrency = check.number(raw.maxConcurrency, `${at}.maxConcurrency`, defaults.maxConcurrency, {
    min: 1,
    max: 1000,
    integer: true,
  });
  const statusVocabulary = parseVocabulary(check, raw.statusVocabulary, `${at}.statusVocabulary`);
  return {
    deleteAtVendorAfterManifest,
    maxConcurrency,
    ...(statusVocabulary === undefined ? {} : { statusVocabulary }),
  };
}

function parseVocabulary(check: Checker, value: unknown, at: string): StatusVocabularyConfig | undefined {
  const raw = check.object(value, at);
  if (!raw) return undefined;
  const states = ['pending', 'running', 'succeeded', 'failed'] as const;
  check.knownKeys(raw, at, states);
  const vocabulary: Record<(typeof states)[number], string[]> = {
    pending: [],
    running: [],
    succeeded: [],
    failed: [],
  };
  const seen = new Map<string, string>();
  for (const state of states) {
    const words = check.stringArray(raw[state], `${at}.${state}`, { nonEmpty: true });
    if (words === undefined) {
      if (raw[state] === undefined) check.add(`${at}.${state}`, 'is required when statusVocabulary is set');
      continue;
    }
    vocabulary[state] = words;
    // Matching is case-insensitive, so one word in two states would make the classifier ambiguous.
    for (const word of words) {
      const lower = word.toLowerCase();
      const other = seen.get(lower);
      if (other !== undefined && other !== state) {
        check.add(`${at}.${state}`, `repeats ${describe(word)}, already listed under ${other}`);
      }
      seen.set(lower, state);
    }
  }
  return vocabulary;
}

function parseIntake(check: Checker, value: unknown): IntakeConfig {
  const at = `${ROOT}.intake`;
  const raw = check.object(value, at) ?? {};
  check.knownKeys(raw, at, ['prefix', 'suffixes']);
  const defaults = DEFAULT_PIPELINE_CONFIG.intake;
  let prefix = defaults.prefix;
  if (raw.prefix !== undefined) {
    const given = raw.prefix;
    if (typeof given !== 'string' || given.length === 0) {
      check.add(`${at}.prefix`, `must be a non-empty string (got ${describe(given)})`);
    } else if (given.startsWith('/')) {
      check.add(
        `${at}.prefix`,
        `must not start with '/' (S3 keys have no leading slash) (got ${describe(given)})`,
      );
    } else if (!given.endsWith('/')) {
      check.add(`${at}.prefix`, `must end with '/' (got ${describe(given)})`);
    } else if (/[*?\\]/.test(given) || given.includes('//')) {
      // '*' and '\' are special in EventBridge wildcard patterns; '//' is almost certainly a typo.
      check.add(`${at}.prefix`, `must not contain '*', '?', '\\' or '//' (got ${describe(given)})`);
    } else {
      prefix = given;
    }
  }
  let suffixes: readonly string[] = defaults.suffixes;
  const given = check.stringArray(raw.suffixes, `${at}.suffixes`, { nonEmpty: true });
  if (given !== undefined) {
    const bad = given.findIndex((s) => !DOMAIN_LIST_SUFFIX_PATTERN.test(s));
    if (bad >= 0) {
      check.add(
        `${at}.suffixes[${bad}]`,
        `must start with '.' and be lower-case letters, digits, '.', '_' or '-' (got ${describe(given[bad])})`,
      );
    } else {
      suffixes = given;
    }
  }
  return { prefix, suffixes };
}

function parseDomainLists(
  check: Checker,
  value: unknown,
  intake: IntakeConfig,
): Record<string, DomainListDefinition> {
  const at = `${ROOT}.domainLists`;
  const raw = check.object(value, at) ?? {};
  const lists: Record<string, DomainListDefinition> = {};
  for (const [name, entryValue] of Object.entries(raw)) {
    const setting = `${at}.${name}`;
    if (!NAME_PATTERN.test(name)) {
      check.add(setting, `has an invalid name: use 1-64 of A-Z, a-z, 0-9, '_' and '-'`);
      continue;
    }
    const entry = check.object(entryValue, setting);
    if (!entry) continue;
    check.knownKeys(entry, setting, ['objectKey', 'domains']);
    const hasKey = entry.objectKey !== undefined;
    const hasDomains = entry.domains !== undefined;
    if (hasKey === hasDomains) {
      check.add(setting, 'must set exactly one of objectKey and domains');
      continue;
    }
    if (hasKey) {
      const objectKey = check.string(entry.objectKey, `${setting}.objectKey`);
      if (objectKey === undefined) continue;
      if (objectKey.startsWith('/')) {
        check.add(`${setting}.objectKey`, `must not start with '/' (got ${describe(objectKey)})`);
        continue;
      }
      // The list handler refuses other keys, so fail here rather than at 3 a.m. on the first fire.
      if (!intake.suffixes.some((suffix) => objectKey.toLowerCase().endsWith(suffix))) {
        check.add(
          `${setting}.objectKey`,
          `must end with one of ${intake.suffixes.join(', ')} (pipeline.intake.suffixes) (got ${describe(objectKey)})`,
        );
        continue;
      }
      lists[name] = { objectKey };
    } else {
      const domains = inlineDomains(check, entry.domains, `${setting}.domains`);
      if (domains !== undefined) lists[name] = { domains };
    }
  }
  return lists;
}

function inlineDomains(check: Checker, value: unknown, setting: string): string[] | undefined {
  const domains = check.stringArray(value, setting, { nonEmpty: true });
  if (domains === undefined) return undefined;
  // The validator the handlers and the CLI use, so a domain that would be refused at run time (a
  // special-use name, a bad A-label) fails the synth instead of every scheduled run.
  let valid = true;
  domains.forEach((domain, index) => {
    try {
      normalizeDomain(domain, `${setting}[${index}]`);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      check.add(`${setting}[${index}]`, error.reason);
      valid = false;
    }
  });
  return valid ? domains : undefined;
}

function parseSchedules(
  check: Checker,
  value: unknown,
  domainLists: Record<string, DomainListDefinition>,
): ScheduleConfig[] {
  const at = `${ROOT}.schedules`;
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    check.add(at, `must be an array (got ${describe(value)})`);
    return [];
  }
  const schedules: ScheduleConfig[] = [];
  const names = new Set<string>();
  value.forEach((entryValue, index) => {
    const entry = check.object(entryValue, `${at}[${index}]`);
    if (!entry) return;
    const name = typeof entry.name === 'string' ? entry.name : undefined;
    if (name === undefined || !NAME_PATTERN.test(name)) {
      check.add(
        `${at}[${index}].name`,
        `must be 1-64 of A-Z, a-z, 0-9, '_' and '-' (got ${describe(entry.name)})`,
      );
      return;
    }
    // Errors name the schedule, which is what the operator searches their config for.
    const setting = `schedule '${name}'`;
    if (names.has(name)) {
      check.add(setting, `is defined more than once (${at}[${index}]): schedule names must be unique`);
      return;
    }
    names.add(name);
    const schedule = parseSchedule(check, entry, name, setting, domainLists);
    if (schedule) schedules.push(schedule);
  });
  return schedules;
}

function parseSchedule(
  check: Checker,
  entry: RawObject,
  name: string,
  setting: string,
  domainLists: Record<string, DomainListDefinition>,
): ScheduleConfig | undefined {
  const before = check.issues.length;
  check.knownKeys(entry, setting, [
    'name',
    'expression',
    'timeZone',
    'domainList',
    'domains',
    'flexibleWindowMinutes',
    'maxRetryAttempts',
    'maxEventAgeSeconds',
    'enabled',
  ]);
  const expression = check.string(entry.expression, `${setting} expression`);
  if (expression === undefined) {
    if (entry.expression === undefined) check.add(`${setting} expression`, 'is required');
  } else {
    const problem = scheduleExpressionProblem(expression);
    if (problem) check.add(`${setting} expression`, `${problem} (got ${describe(expression)})`);
  }

  const timeZone = check.string(entry.timeZone, `${setting} timeZone`) ?? DEFAULT_SCHEDULE_SETTINGS.timeZone;
  if (!isKnownTimeZone(timeZone)) {
    check.add(
      `${setting} timeZone`,
      `is not an IANA time zone such as Europe/Berlin (got ${describe(timeZone)})`,
    );
  }

  const domainList = check.string(entry.domainList, `${setting} domainList`);
  const hasDomains = entry.domains !== undefined;
  let domains: string[] | undefined;
  if ((entry.domainList !== undefined) === hasDomains) {
    check.add(setting, 'must set exactly one of domainList and domains');
  } else if (domainList !== undefined && domainLists[domainList] === undefined) {
    check.add(
      setting,
      `refers to unknown domain list '${domainList}' (define it under pipeline.domainLists)`,
    );
  } else if (hasDomains) {
    domains = inlineDomains(check, entry.domains, `${setting} domains`);
  }

  const flexibleWindowMinutes = check.number(
    entry.flexibleWindowMinutes,
    `${setting} flexibleWindowMinutes`,
    DEFAULT_SCHEDULE_SETTINGS.flexibleWindowMinutes,
    { min: 0, max: 1440, integer: true },
  );
  const maxRetryAttempts = check.number(
    entry.maxRetryAttempts,
    `${setting} maxRetryAttempts`,
    DEFAULT_SCHEDULE_SETTINGS.maxRetryAttempts,
    { min: 0, max: 185, integer: true },
  );
  const maxEventAgeSeconds = check.number(
    entry.maxEventAgeSeconds,
    `${setting} maxEventAgeSeconds`,
    DEFAULT_SCHEDULE_SETTINGS.maxEventAgeSeconds,
    { min: 60, max: 86_400, integer: true },
  );
  const enabled = check.boolean(entry.enabled, `${setting} enabled`, DEFAULT_SCHEDULE_SETTINGS.enabled);

  if (check.issues.length > before || expression === undefined) return undefined;
  const schedule: ScheduleConfig = {
    name,
    expression,
    timeZone,
    flexibleWindowMinutes,
    maxRetryAttempts,
    maxEventAgeSeconds,
    enabled,
    ...(domainList === undefined ? {} : { domainList }),
    ...(domains === undefined ? {} : { domains }),
  };
  if (domains !== undefined) {
    // The inline list travels in the schedule's target Input, which Scheduler caps.
    const size = JSON.stringify({
      source: { type: 'schedule', scheduleName: name, scheduledTime: '', domains },
    }).length;
    if (size > MAX_SCHEDULE_INPUT_CHARS - 200) {
      check.add(
        `${setting} domains`,
        `make a ${size}-character input; EventBridge Scheduler allows ${MAX_SCHEDULE_INPUT_CHARS}: ` +
          'put the list in the input bucket and use domainList with objectKey',
      );
      return undefined;
    }
  }
  return schedule;
}

let timeZones: Set<string> | undefined;

function isKnownTimeZone(zone: string): boolean {
  timeZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
  return timeZones.has(zone);
}

// ---------------------------------------------------------------------------------------------
// Schedule expressions (EventBridge Scheduler syntax)
// ---------------------------------------------------------------------------------------------

/** Returns what is wrong with a Scheduler expression, or undefined when it is valid. */
export function scheduleExpressionProblem(expression: string): string | undefined {
  const match = /^(cron|rate|at)\((.*)\)$/.exec(expression.trim());
  if (!match) return "must be 'cron(...)', 'rate(...)' or 'at(...)'";
  const [, kind, body = ''] = match;
  if (kind === 'rate') return rateProblem(body);
  if (kind === 'at') return atProblem(body);
  return cronProblem(body);
}

function rateProblem(body: string): string | undefined {
  const match = /^(\d+) (minute|minutes|hour|hours|day|days)$/.exec(body.trim());
  if (!match) return "must be 'rate(<n> minute|minutes|hour|hours|day|days)'";
  const value = Number(match[1]);
  const unit = match[2] ?? '';
  if (value < 1) return 'rate value must be a positive whole number';
  const plural = unit.endsWith('s');
  if (value === 1 && plural) return `rate of 1 needs the singular unit '${unit.slice(0, -1)}'`;
  if (value !== 1 && !plural) return `rate of ${value} needs the plural unit '${unit}s'`;
  return undefined;
}

function atProblem(body: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(body);
  if (!match) return "must be 'at(yyyy-mm-ddThh:mm:ss)'";
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return 'at(...) is not a real date and time';
  }
  return undefined;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names for 1-based values (JAN=1, SUN=1). */
  readonly names?: readonly string[];
}

const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS },
  { name: 'year', min: 1970, max: 2199 },
];

function cronProblem(body: string): string | undefined {
  const parts = body.trim().split(/\s+/);
  if (parts.length !== 6) {
    return `cron needs 6 fields (minutes hours day-of-month month day-of-week year), got ${parts.length}`;
  }
  const dayOfMonth = parts[2] ?? '';
  const dayOfWeek = parts[4] ?? '';
  if ((dayOfMonth === '?') === (dayOfWeek === '?')) {
    return "cron needs '?' in exactly one of day-of-month and day-of-week";
  }
  for (const [index, field] of CRON_FIELDS.entries()) {
    const value = parts[index] ?? '';
    const problem = cronFieldProblem(field, value);
    if (problem) return `cron ${field.name} field '${value}' ${problem}`;
  }
  return undefined;
}

function cronFieldProblem(field: CronField, value: string): string | undefined {
  if (value === '?') {
    return field.name === 'day-of-month' || field.name === 'day-of-week'
      ? undefined
      : "may not be '?' (only day-of-month or day-of-week may)";
  }
  // Day-specific forms stand alone: L, LW, 15W (day-of-month); L, 6L, 3#2 (day-of-week).
  if (field.name === 'day-of-month' && /^(L|LW|\d{1,2}W)$/.test(value)) {
    const day = Number.parseInt(value, 10);
    return Number.isNaN(day) || (day >= 1 && day <= 31) ? undefined : 'is out of range 1-31';
  }
  if (field.name === 'day-of-week') {
    const special = /^(?:L|(\w{1,3})L|(\w{1,3})#(\d))$/.exec(value);
    if (special) {
      const day = special[1] ?? special[2];
      if (day !== undefined && cronValue(field, day) === undefined) return 'names an unknown day of week';
      if (special[3] !== undefined && (Number(special[3]) < 1 || Number(special[3]) > 5)) {
        return "uses '#' with a week outside 1-5";
      }
      return undefined;
    }
  }
  for (const item of value.split(',')) {
    const problem = cronItemProblem(field, item);
    if (problem) return problem;
  }
  return undefined;
}

function cronItemProblem(field: CronField, item: string): string | undefined {
  const [range = '', step, ...extra] = item.split('/');
  if (extra.length > 0) return "has more than one '/'";
  if (step !== undefined && !/^\d+$/.test(step)) return `has a non-numeric step '${step}'`;
  if (step !== undefined && Number(step) < 1) return 'has a zero step';
  if (range === '*') return undefined;
  const [from = '', to, ...more] = range.split('-');
  if (more.length > 0) return `has an invalid range '${range}'`;
  const start = cronValue(field, from);
  if (start === undefined) return `has '${from}' outside ${field.min}-${field.max}`;
  if (to !== undefined) {
    const end = cronValue(field, to);
    if (end === undefined) return `has '${to}' outside ${field.min}-${field.max}`;
  }
  return undefined;
}

function cronValue(field: CronField, text: string): number | undefined {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= field.min && value <= field.max ? value : undefined;
}

// ---------------------------------------------------------------------------------------------
// Loading (CDK context)
// ---------------------------------------------------------------------------------------------

/** The two context keys the app reads. */
export interface PipelineContext {
  /** Context `pipeline`: the settings as an object (cdk.json) or a JSON string (`-c pipeline=...`). */
  readonly pipeline?: unknown;
  /** Context `pipelineConfigFile`: path of a JSON file with the settings, relative to the working directory. */
  readonly pipelineConfigFile?: unknown;
}

/**
 * Reads the configuration from CDK context: either `pipeline` (object or JSON string) or a file
 * named by `pipelineConfigFile`; neither means all defaults.
 * @throws PipelineConfigError naming the setting (or the context key) that is wrong
 */
export function loadPipelineConfig(context: PipelineContext, cwd: string = process.cwd()): PipelineConfig {
  const { pipeline, pipelineConfigFile } = context;
  if (pipeline !== undefined && pipelineConfigFile !== undefined) {
    throw new PipelineConfigError('CDK context', [
      { setting: 'pipeline', problem: 'and pipelineConfigFile are both set: use one of them' },
    ]);
  }
  if (pipelineConfigFile !== undefined) {
    if (typeof pipelineConfigFile !== 'string' || pipelineConfigFile.length === 0) {
      throw new PipelineConfigError('CDK context', [
        {
          setting: 'pipelineConfigFile',
          problem: `must be a file path (got ${describe(pipelineConfigFile)})`,
        },
      ]);
    }
    const path = resolve(cwd, pipelineConfigFile);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new PipelineConfigError(pipelineConfigFile, [
        { setting: 'pipelineConfigFile', problem: `cannot be read (${code}): ${path}` },
      ]);
    }
    return parsePipelineConfig(parseJson(text, pipelineConfigFile, 'pipelineConfigFile'), pipelineConfigFile);
  }
  if (typeof pipeline === 'string') {
    return parsePipelineConfig(parseJson(pipeline, "context 'pipeline'", 'pipeline'), "context 'pipeline'");
  }
  return parsePipelineConfig(pipeline, "context 'pipeline'");
}

function parseJson(text: string, source: string, setting: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PipelineConfigError(source, [
      { setting, problem: `is not valid JSON: ${(error as Error).message}` },
    ]);
  }
}

// ---------------------------------------------------------------------------------------------
// Handler environment derived from the configuration (shared with the local runner)
// ---------------------------------------------------------------------------------------------

/** The poll-loop variables the start and poll handlers read (docs/contracts.md). */
export function pollEnvironment(poll: PollConfig): Record<string, string> {
  return {
    POLL_MIN_WAIT_SECONDS: String(poll.minWaitSeconds),
    POLL_MAX_WAIT_SECONDS: String(poll.maxWaitSeconds),
    POLL_GROWTH_FACTOR: String(poll.growthFactor),
    SCAN_DEADLINE_SECONDS: String(poll.deadlineSeconds),
  };
}

/** `STATUS_VOCABULARY` when a vocabulary is configured; nothing otherwise (handlers use their own). */
export function statusVocabularyEnvironment(
  vocabulary: StatusVocabularyConfig | undefined,
): Record<string, string> {
  return vocabulary === undefined ? {} : { STATUS_VOCABULARY: JSON.stringify(vocabulary) };
}
