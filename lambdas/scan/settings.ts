/**
 * Settings of the scan workflow steps, from the environment (Lambda) or from code (local runner,
 * tests). One validation path for both, so a local run refuses what a deployment would refuse.
 * Settings other workflows share (uploads, special-use allowance) are in
 * `#lambdas/platform/runtime/settings`.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { numberFromText } from '#lambdas/platform/input/schema';
import { checkAllowedSpecialUse } from '#lambdas/platform/input/validation';
import { type Env, optionalEnv, readBucketEnv } from '#lambdas/platform/runtime/env';
import {
  allowSpecialUseFromEnv,
  checkUploadSettings,
  DEFAULT_UPLOAD_SETTINGS,
  type UploadSettings,
} from '#lambdas/platform/runtime/settings';
import { ENV } from '#lambdas/platform/runtime/variables';
import {
  DEFAULT_POLL_SETTINGS,
  POLL_BOUNDS,
  POLL_VARIABLES,
  type PollSettings,
  pollSettingsProblems,
} from '#lambdas/scan/poll-schedule';
import { type ListFields, parseListFields } from '#lambdas/scan/reconcile-settings';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
// Not the vendor barrel: it would bundle the HTTP client into functions that never call the vendor.
import { parseStatusVocabulary } from '#lambdas/vendor-api/scan/status';
import type { StatusVocabulary } from '#lambdas/vendor-api/scan/types';

export interface ScanSettings {
  /** RESULTS_BUCKET: scan outputs, manifests and failure records. */
  readonly resultsBucket: string;
  readonly poll: PollSettings;
  /** STATUS_VOCABULARY; undefined means the vendor client's default words. */
  readonly statusVocabulary: StatusVocabulary | undefined;
  readonly upload: UploadSettings;
  /** Special-use suffixes StartScan accepts anyway (ALLOW_SPECIAL_USE_DOMAINS, `scan.allowSpecialUseDomains`). */
  readonly allowSpecialUse: readonly string[];
  /**
   * Where `GET /scans` keeps its list and fields (SCAN_LIST_FIELDS, `scan.reconciliation.listFields`),
   * for StartScan's settling; `{}` searches the common names, as reconciliation does.
   */
  readonly listFields: ListFields;
  /** A scan output is cut past this many bytes, counted after decoding (SCAN_MAX_OUTPUT_BYTES, `scan.maxOutputBytes`). */
  readonly maxOutputBytes: number;
  /** A content-coded output is cut once it decodes past this ratio (SCAN_MAX_DECODING_RATIO, `scan.maxDecodingRatio`). */
  readonly maxDecodingRatio: number;
}

const GiB = 1024 ** 3;

/**
 * The byte cap of one scan output (report, logs or debug), counted after any Content-Encoding is
 * removed and enforced as the body streams, as breach downloads are: a gzip bomb of 1 MB on the
 * wire is cut at the cap instead of filling the bucket. 1 GiB by default: a real report is
 * kilobytes to a few megabytes, and at the slower measured upload rate an output of about 3 GiB
 * already comes near FetchReport's 15-minute timeout (docs/testing-and-benchmarks.md), so nothing
 * the fetch could store in time is cut. At most S3's 5 TiB object size; raise it for a vendor
 * whose outputs are known to be larger.
 */
export const SCAN_OUTPUT_LIMIT = {
  variable: SCAN_VARIABLES.maxOutputBytes,
  bounds: { min: 1024 * 1024, max: 5 * 1024 * GiB, integer: true },
  default: GiB,
} as const;

/**
 * How far a content-coded (gzip, deflate, br) scan output may inflate: decoded bytes over the bytes
 * received, past the first MiB. The byte cap alone let a 1 MB gzip answer be stored as a 1 GiB
 * report; 100 is a report ZIP entry's bound too, above what text compresses to in practice
 * (10:1 to 20:1 for logs and JSON).
 */
export const SCAN_DECODING_LIMIT = {
  variable: SCAN_VARIABLES.maxDecodingRatio,
  bounds: { min: 2, max: 100_000, integer: true },
  default: 100,
} as const;

export interface ScanSettingsInput {
  readonly resultsBucket: string;
  readonly poll?: Partial<PollSettings>;
  readonly statusVocabulary?: StatusVocabulary;
  readonly upload?: Partial<UploadSettings>;
  readonly allowSpecialUse?: readonly string[];
  readonly listFields?: ListFields;
  /** @default SCAN_OUTPUT_LIMIT.default */
  readonly maxOutputBytes?: number;
  /** @default SCAN_DECODING_LIMIT.default */
  readonly maxDecodingRatio?: number;
}

/**
 * Complete, validated settings from partial ones (defaults fill the gaps). Throws a
 * ConfigurationError naming the setting by its environment variable.
 */
export function createScanSettings(input: ScanSettingsInput): ScanSettings {
  if (typeof input.resultsBucket !== 'string' || input.resultsBucket.trim() === '') {
    throw new ConfigurationError(ENV.resultsBucket, 'is required but not set');
  }
  const poll: PollSettings = { ...DEFAULT_POLL_SETTINGS, ...definedOnly(input.poll ?? {}) };
  const [problem] = pollSettingsProblems(poll);
  if (problem) throw new ConfigurationError(problem.setting, problem.problem);
  const upload = checkUploadSettings({ ...DEFAULT_UPLOAD_SETTINGS, ...definedOnly(input.upload ?? {}) });
  const maxOutputBytes = input.maxOutputBytes ?? SCAN_OUTPUT_LIMIT.default;
  const cap = numberFromText(SCAN_OUTPUT_LIMIT.bounds).safeParse(String(maxOutputBytes));
  if (!cap.success) {
    throw new ConfigurationError(SCAN_OUTPUT_LIMIT.variable, cap.error.issues[0]?.message ?? 'is invalid');
  }
  const ratio = readDecodingRatio(String(input.maxDecodingRatio ?? SCAN_DECODING_LIMIT.default));
  return Object.freeze({
    resultsBucket: input.resultsBucket.trim(),
    poll: Object.freeze(poll),
    statusVocabulary: input.statusVocabulary,
    upload: Object.freeze(upload),
    allowSpecialUse: Object.freeze(checkAllowedSpecialUse(input.allowSpecialUse ?? [], 'allowSpecialUse')),
    listFields: Object.freeze({ ...input.listFields }),
    maxOutputBytes: cap.data,
    maxDecodingRatio: ratio,
  });
}

/** Settings from the Lambda environment (see docs/contracts.md for the variables). */
export function scanSettingsFromEnv(env: Env): ScanSettings {
  const resultsBucket = readBucketEnv(env, ENV.resultsBucket);
  const poll = pollSettingsFromEnv(env);
  const vocabularyJson = optionalEnv(env, SCAN_VARIABLES.statusVocabulary);
  const statusVocabulary =
    vocabularyJson === undefined
      ? undefined
      : parseStatusVocabulary(vocabularyJson, SCAN_VARIABLES.statusVocabulary);
  const listFieldsJson = optionalEnv(env, SCAN_VARIABLES.listFields);
  const maxOutputBytes = optionalEnv(env, SCAN_VARIABLES.maxOutputBytes);
  const maxDecodingRatio = optionalEnv(env, SCAN_VARIABLES.maxDecodingRatio);
  return createScanSettings({
    ...(maxOutputBytes === undefined ? {} : { maxOutputBytes: readOutputCap(maxOutputBytes) }),
    ...(maxDecodingRatio === undefined ? {} : { maxDecodingRatio: readDecodingRatio(maxDecodingRatio) }),
    resultsBucket,
    poll,
    ...(statusVocabulary ? { statusVocabulary } : {}),
    allowSpecialUse: allowSpecialUseFromEnv(env),
    ...(listFieldsJson === undefined
      ? {}
      : { listFields: parseListFields(listFieldsJson, SCAN_VARIABLES.listFields) }),
  });
}

/**
 * The poll settings from their variables, each held to the bounds in `POLL_BOUNDS` (the ones synth
 * applies to the configuration); unset variables take the defaults. The cross-field rules (maximum
 * not below minimum, history budget) follow in `createScanSettings`.
 */
function pollSettingsFromEnv(env: Env): Partial<PollSettings> {
  const poll: Partial<Record<keyof PollSettings, number>> = {};
  for (const field of Object.keys(POLL_VARIABLES) as (keyof PollSettings)[]) {
    const variable = POLL_VARIABLES[field];
    const raw = optionalEnv(env, variable);
    if (raw === undefined) continue;
    const parsed = numberFromText(POLL_BOUNDS[field]).safeParse(raw);
    if (!parsed.success)
      throw new ConfigurationError(variable, parsed.error.issues[0]?.message ?? 'is invalid');
    poll[field] = parsed.data;
  }
  return poll;
}

function readOutputCap(raw: string): number {
  const parsed = numberFromText(SCAN_OUTPUT_LIMIT.bounds).safeParse(raw);
  if (!parsed.success) {
    throw new ConfigurationError(SCAN_OUTPUT_LIMIT.variable, parsed.error.issues[0]?.message ?? 'is invalid');
  }
  return parsed.data;
}

function readDecodingRatio(raw: string): number {
  const parsed = numberFromText(SCAN_DECODING_LIMIT.bounds).safeParse(raw);
  if (!parsed.success) {
    throw new ConfigurationError(
      SCAN_DECODING_LIMIT.variable,
      parsed.error.issues[0]?.message ?? 'is invalid',
    );
  }
  return parsed.data;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** How StartScan settles a start whose answer was lost (start-scan.ts explains the rounds). */
export interface StartSettleSettings {
  /** Starts sent in one invocation, the first included. */
  readonly maxStarts: number;
  /** Listings read before concluding that no scan was created. */
  readonly looks: number;
  /** Wait between two looks: how far behind a start the listing may lag. */
  readonly lagWaitMs: number;
  /** How far the vendor's clock may be behind ours when it stamps a scan's creation. */
  readonly clockSkewMs: number;
  /** Backoff before a repeated start: the transport's policy (full jitter, doubling). */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Time one start may take (the transport's request timeout and a margin); none is sent with less left. */
  readonly startReserveMs: number;
}

export const DEFAULT_START_SETTLE: StartSettleSettings = Object.freeze({
  maxStarts: 3,
  looks: 2,
  lagWaitMs: 2_000,
  clockSkewMs: 5_000,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  startReserveMs: 35_000,
});
