/**
 * Settings of the scan workflow steps, from the environment (Lambda) or from code (local runner,
 * tests). One validation path for both, so a local run refuses what a deployment would refuse.
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { type Env, optionalEnv, readBucketEnv } from '#lambdas/platform/runtime/env';
import { ENV } from '#lambdas/platform/runtime/variables';
import { numberFromText } from '#lambdas/platform/schema';
import { ALLOW_SPECIAL_USE_VARIABLE, checkAllowedSpecialUse } from '#lambdas/platform/validation';
// Not the vendor barrel: it would bundle the HTTP client into functions that never call the vendor.
import { parseStatusVocabulary } from '#lambdas/platform/vendor-api/status';
import type { StatusVocabulary } from '#lambdas/platform/vendor-api/types';
import {
  DEFAULT_POLL_SETTINGS,
  POLL_BOUNDS,
  POLL_VARIABLES,
  type PollSettings,
  pollSettingsProblems,
} from '#lambdas/scan/poll-schedule';

export interface UploadSettings {
  /** Multipart part size; memory use is about (queueSize + 2) parts. @default 8 MiB */
  readonly partSizeBytes: number;
  /** Parts uploaded concurrently. @default 2 */
  readonly queueSize: number;
  /**
   * Part size of the server-side copy that adds the sha256 to a multipart output (5 MiB to 5 GiB).
   * @default 512 MiB (lambdas/platform/s3/promote.ts)
   */
  readonly copyPartSizeBytes?: number;
}

export interface ScanSettings {
  /** RESULTS_BUCKET: scan outputs, manifests and failure records. */
  readonly resultsBucket: string;
  readonly poll: PollSettings;
  /** STATUS_VOCABULARY; undefined means the vendor client's default words. */
  readonly statusVocabulary: StatusVocabulary | undefined;
  readonly upload: UploadSettings;
  /** Special-use suffixes StartScan accepts anyway (ALLOW_SPECIAL_USE_DOMAINS, `scan.allowSpecialUseDomains`). */
  readonly allowSpecialUse: readonly string[];
}

export const DEFAULT_UPLOAD_SETTINGS: UploadSettings = Object.freeze({
  partSizeBytes: 8 * 1024 * 1024,
  queueSize: 2,
});

/** S3's smallest multipart part (all but the last). */
const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
/** S3's largest multipart part. */
const MAX_PART_SIZE_BYTES = 5 * 1024 * 1024 * 1024;

export interface ScanSettingsInput {
  readonly resultsBucket: string;
  readonly poll?: Partial<PollSettings>;
  readonly statusVocabulary?: StatusVocabulary;
  readonly upload?: Partial<UploadSettings>;
  readonly allowSpecialUse?: readonly string[];
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
  const upload: UploadSettings = { ...DEFAULT_UPLOAD_SETTINGS, ...definedOnly(input.upload ?? {}) };
  if (!Number.isInteger(upload.partSizeBytes) || upload.partSizeBytes < MIN_PART_SIZE_BYTES) {
    throw new ConfigurationError(
      'upload.partSizeBytes',
      `must be a whole number of bytes >= ${MIN_PART_SIZE_BYTES} (S3's minimum part size), got ${upload.partSizeBytes}`,
    );
  }
  if (
    upload.copyPartSizeBytes !== undefined &&
    (!Number.isInteger(upload.copyPartSizeBytes) ||
      upload.copyPartSizeBytes < MIN_PART_SIZE_BYTES ||
      upload.copyPartSizeBytes > MAX_PART_SIZE_BYTES)
  ) {
    throw new ConfigurationError(
      'upload.copyPartSizeBytes',
      `must be a whole number of bytes between ${MIN_PART_SIZE_BYTES} and ${MAX_PART_SIZE_BYTES} (S3's part limits), got ${upload.copyPartSizeBytes}`,
    );
  }
  if (!Number.isInteger(upload.queueSize) || upload.queueSize < 1 || upload.queueSize > 16) {
    throw new ConfigurationError(
      'upload.queueSize',
      `must be a whole number between 1 and 16, got ${upload.queueSize}`,
    );
  }
  return Object.freeze({
    resultsBucket: input.resultsBucket.trim(),
    poll: Object.freeze(poll),
    statusVocabulary: input.statusVocabulary,
    upload: Object.freeze(upload),
    allowSpecialUse: Object.freeze(checkAllowedSpecialUse(input.allowSpecialUse ?? [], 'allowSpecialUse')),
  });
}

/** Settings from the Lambda environment (see docs/contracts.md for the variables). */
export function scanSettingsFromEnv(env: Env): ScanSettings {
  const resultsBucket = readBucketEnv(env, ENV.resultsBucket);
  const poll = pollSettingsFromEnv(env);
  const vocabularyJson = optionalEnv(env, ENV.statusVocabulary);
  const statusVocabulary =
    vocabularyJson === undefined ? undefined : parseStatusVocabulary(vocabularyJson, ENV.statusVocabulary);
  return createScanSettings({
    resultsBucket,
    poll,
    ...(statusVocabulary ? { statusVocabulary } : {}),
    allowSpecialUse: allowSpecialUseFromEnv(env),
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

/** ALLOW_SPECIAL_USE_DOMAINS: comma-separated suffixes such as `test,internal`. */
export function allowSpecialUseFromEnv(env: Env): string[] {
  const raw = optionalEnv(env, ALLOW_SPECIAL_USE_VARIABLE);
  if (raw === undefined) return [];
  try {
    return checkAllowedSpecialUse(raw.split(','), ALLOW_SPECIAL_USE_VARIABLE);
  } catch (error) {
    throw new ConfigurationError(ALLOW_SPECIAL_USE_VARIABLE, (error as Error).message);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
