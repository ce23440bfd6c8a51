/**
 * Links between failure records and the scans reconciliation archived.
 *
 * A start whose answer was lost (a timeout or reset after the request was sent) is recorded as
 * ScanRejected under `rejected-<hash>/failure.json`, without a uuid: the vendor may or may not have
 * created the scan. When reconciliation later archives an orphan of the same domain created within
 * the match window of that record, the two are linked: the manifest lists the record, and the
 * record gains `reconciledScan` (every other field kept as it was; the bucket is versioned).
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import { isMissingObject } from '#lambdas/platform/s3/json-objects';
import { isRecord } from '#lambdas/vendor-api/transport/json';
import type { FailureRecord } from './record-scan-failure.ts';

/** Rejections that prove the vendor did nothing: nothing to link an orphan to. */
const NOTHING_STARTED = new Set([
  'InvalidInputError',
  'ConfigurationError',
  'VendorAuthError',
  'VendorThrottledError',
  // 4xx: the vendor refused the request (5xx is VendorUnavailableError, which stays ambiguous).
  'VendorHttpError',
]);

export interface ReconciledScanLink {
  readonly scanUuid: string;
  readonly manifestKey: string;
  readonly linkedAt: string;
}

/** A failure record as reconciliation reads it: the stored fields, plus the link once made. */
export type LinkedFailureRecord = FailureRecord & { readonly reconciledScan?: ReconciledScanLink };

export interface RejectedStart {
  readonly key: string;
  readonly recordedAt: Date;
  /** The scan already linked to it, by an earlier run. */
  readonly linkedScanUuid: string | undefined;
}

interface Storage {
  readonly s3: S3Client;
  readonly settings: { readonly resultsBucket: string };
}

/** The ScanRejected records among `keys` that may stand for a scan the vendor created. */
export async function readRejectedStarts(deps: Storage, keys: readonly string[]): Promise<RejectedStart[]> {
  const starts: RejectedStart[] = [];
  for (const key of keys) {
    const record = (await readFailureRecord(deps, key))?.record;
    if (record === undefined || record.failure !== 'ScanRejected') continue;
    if (NOTHING_STARTED.has(record.outcome?.error?.name ?? '')) continue;
    const recordedAt = new Date(record.recordedAt);
    if (Number.isNaN(recordedAt.getTime())) continue;
    starts.push({ key, recordedAt, linkedScanUuid: record.reconciledScan?.scanUuid });
  }
  return starts;
}

/**
 * The rejected start that stands for the scan `uuid` created at `createdAt`: one already linked to
 * it, else the unlinked one (and not taken in this run) closest in time within `windowMs`.
 */
export function matchRejectedStart(
  starts: readonly RejectedStart[],
  uuid: string,
  createdAt: Date | undefined,
  windowMs: number,
  taken: ReadonlySet<string>,
): RejectedStart | undefined {
  const linked = starts.find((start) => start.linkedScanUuid === uuid);
  if (linked !== undefined || createdAt === undefined) return linked;
  let best: RejectedStart | undefined;
  for (const start of starts) {
    if (start.linkedScanUuid !== undefined || taken.has(start.key)) continue;
    const distance = Math.abs(start.recordedAt.getTime() - createdAt.getTime());
    if (distance > windowMs) continue;
    if (best === undefined || distance < Math.abs(best.recordedAt.getTime() - createdAt.getTime()))
      best = start;
  }
  return best;
}

/**
 * Adds `reconciledScan` to the failure record at `key`. Idempotent: a record already linked to this
 * scan is left untouched; one linked to another scan is never re-pointed.
 */
export async function linkFailureRecord(
  deps: Storage,
  key: string,
  link: ReconciledScanLink,
): Promise<'linked' | 'already-linked' | 'linked-elsewhere' | 'missing'> {
  const stored = await readFailureRecord(deps, key);
  if (stored === undefined) return 'missing';
  const { record, metadata, contentType } = stored;
  const existing = record.reconciledScan;
  if (existing !== undefined)
    return existing.scanUuid === link.scanUuid ? 'already-linked' : 'linked-elsewhere';
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.settings.resultsBucket,
      Key: key,
      Body: `${jsonText({ ...record, reconciledScan: link }, 2)}\n`,
      ContentType: contentType ?? 'application/json',
      // The domain and scan-uuid metadata RecordFailure wrote stay with the record.
      Metadata: metadata,
    }),
  );
  return 'linked';
}

interface StoredFailureRecord {
  readonly record: LinkedFailureRecord;
  readonly metadata: Record<string, string> | undefined;
  readonly contentType: string | undefined;
}

async function readFailureRecord(deps: Storage, key: string): Promise<StoredFailureRecord | undefined> {
  let text: string | undefined;
  let metadata: Record<string, string> | undefined;
  let contentType: string | undefined;
  try {
    const object = await deps.s3.send(
      new GetObjectCommand({ Bucket: deps.settings.resultsBucket, Key: key }),
    );
    text = await object.Body?.transformToString('utf-8');
    metadata = object.Metadata;
    contentType = object.ContentType;
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    if (!isRecord(parsed) || parsed.schemaVersion !== 1) return undefined;
    return { record: parsed as unknown as LinkedFailureRecord, metadata, contentType };
  } catch {
    // A record that is not JSON was not written by RecordFailure: not ours to link or rewrite.
    return undefined;
  }
}
