/**
 * Settings more than one workflow reads: how outputs are uploaded to S3 and which special-use
 * domain suffixes are allowed. Each workflow's own settings live in its folder (scan's in
 * `#lambdas/scan/settings`).
 */
import { ConfigurationError } from '#lambdas/platform/errors';
import { ALLOW_SPECIAL_USE_VARIABLE, checkAllowedSpecialUse } from '#lambdas/platform/input/validation';
import { type Env, optionalEnv } from '#lambdas/platform/runtime/env';

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

export const DEFAULT_UPLOAD_SETTINGS: UploadSettings = Object.freeze({
  partSizeBytes: 8 * 1024 * 1024,
  queueSize: 2,
});

/** S3's smallest multipart part (all but the last). */
const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
/** S3's largest multipart part. */
const MAX_PART_SIZE_BYTES = 5 * 1024 * 1024 * 1024;

/** Upload settings held to S3's multipart limits; throws a ConfigurationError naming the setting. */
export function checkUploadSettings(upload: UploadSettings): UploadSettings {
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
  return upload;
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
