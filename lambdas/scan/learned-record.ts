/**
 * One domain's learned scan durations as stored: `{ "schemaVersion": 1, "samples": [seconds…] }`,
 * read with every bound (bytes, depth, shape) before it is trusted. learned-durations.ts decides
 * what to learn and expect from it.
 */
import { GetObjectCommand, type GetObjectCommandOutput } from '@aws-sdk/client-s3';
import * as z from 'zod/mini';
import { jsonDepthExceeds } from '#lambdas/platform/input/json-depth';
import { isMissingObject } from '#lambdas/platform/s3/json-objects';
import type { ScanDeps } from '#lambdas/scan/deps';
import { POLL_BOUNDS } from '#lambdas/scan/poll-schedule';

/** Samples a stored record may hold: what a writer keeps (8), with room for a later, larger choice. */
export const MAX_RECORD_SAMPLES = 32;
/** A record is refused when larger: 32 samples of 6 digits are about 250 bytes. */
export const MAX_RECORD_BYTES = 4 * 1024;
/** How deep a record may nest: its own shape is 2 deep. */
const MAX_RECORD_DEPTH = 3;

const durationSchema = z
  .number()
  .check(
    z.refine(
      (value) => Number.isSafeInteger(value) && value >= 1 && value <= POLL_BOUNDS.deadlineSeconds.max,
    ),
  );
const recordSchema = z.strictObject({
  schemaVersion: z.literal(1),
  samples: z.array(durationSchema).check(z.maxLength(MAX_RECORD_SAMPLES)),
});

export type DurationRecord = z.infer<typeof recordSchema>;

export const NO_SAMPLES: DurationRecord = Object.freeze({ schemaVersion: 1, samples: [] });

export type LoadedRecord =
  | { readonly kind: 'missing' }
  | { readonly kind: 'read'; readonly record: DurationRecord; readonly etag: string | undefined }
  | {
      readonly kind: 'unreadable';
      readonly key: string;
      readonly reason: string;
      readonly etag: string | undefined;
    }
  | { readonly kind: 'failed'; readonly key: string; readonly reason: string };

type ReadDeps = Pick<ScanDeps, 's3' | 'settings'>;

/** Reads the record at `key`; never throws. */
export async function loadRecord(deps: ReadDeps, key: string): Promise<LoadedRecord> {
  let answer: GetObjectCommandOutput;
  try {
    answer = await deps.s3.send(new GetObjectCommand({ Bucket: deps.settings.resultsBucket, Key: key }));
  } catch (error) {
    // A missing bucket (also a 404) is a failure, not "nothing learned yet".
    if (isMissingObject(error) && errorName(error) !== 'NoSuchBucket') return { kind: 'missing' };
    return { kind: 'failed', key, reason: errorName(error) };
  }
  const etag = answer.ETag;
  const unreadable = (reason: string): LoadedRecord => ({ kind: 'unreadable', key, reason, etag });
  if ((answer.ContentLength ?? 0) > MAX_RECORD_BYTES) {
    (answer.Body as { destroy?: () => void } | undefined)?.destroy?.();
    return unreadable(`larger than ${MAX_RECORD_BYTES} bytes`);
  }
  try {
    const text = (await answer.Body?.transformToString('utf-8')) ?? '';
    if (Buffer.byteLength(text) > MAX_RECORD_BYTES)
      return unreadable(`larger than ${MAX_RECORD_BYTES} bytes`);
    // Deeper text is not ours, and is refused before JSON.parse and zod recurse into it.
    if (jsonDepthExceeds(text, MAX_RECORD_DEPTH)) return unreadable(`nested deeper than ${MAX_RECORD_DEPTH}`);
    const parsed = recordSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return unreadable('not the learned-durations shape');
    return { kind: 'read', record: parsed.data, etag };
  } catch (error) {
    return unreadable(`not JSON (${errorName(error)})`);
  }
}

export function serializeRecord(record: DurationRecord): Buffer {
  return Buffer.from(JSON.stringify(record), 'utf8');
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
