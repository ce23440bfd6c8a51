/**
 * How long scans take, learned from the scans that succeeded: one small JSON object in the results
 * bucket that WriteManifest updates and StartScan reads, so the poll loop can wait until shortly
 * before a scan is expected to end (poll-schedule.ts).
 *
 * The object is a cache, never a record: reading it can only make polling cheaper. Whatever it holds
 * (missing, unreadable, oversized, not JSON, wrong shape) is ignored with one log line and the scan
 * polls as if nothing were learned; updating it never fails a scan. It stays bounded: a few recent
 * durations per domain, the most recently scanned domains first to stay, and at most
 * {@link MAX_LEARNED_DURATIONS_BYTES} in all. Domains are not personal data; nothing else is kept.
 *
 * Updates are conditional writes (If-Match on the ETag read, If-None-Match: * to create), so two
 * manifests written at once never overwrite each other's sample unseen: the loser reads again and
 * retries, and after {@link UPDATE_ATTEMPTS} conflicts its sample is dropped with a log line.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 */
import { GetObjectCommand, type GetObjectCommandOutput, PutObjectCommand } from '@aws-sdk/client-s3';
import * as z from 'zod/mini';
import { jsonDepthExceeds } from '#lambdas/platform/json-depth';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import { isMissingObject } from '#lambdas/platform/s3/json-objects';
import { isPreconditionFailure } from '#lambdas/platform/s3/promote';
import type { ExpectedDuration, PollState } from '#lambdas/scan/contracts';
import type { ScanDeps } from '#lambdas/scan/deps';
import { POLL_BOUNDS } from '#lambdas/scan/poll-schedule';

/** Outside `scans/`, so nothing that walks the scans' folders ever meets it. */
export const LEARNED_DURATIONS_KEY = 'learned/scan-durations.json';
/** The object is refused when larger, and kept smaller when written (oldest domains go first). */
export const MAX_LEARNED_DURATIONS_BYTES = 128 * 1024;
/** Recent durations kept per domain. */
export const SAMPLES_PER_DOMAIN = 8;
/** Recent durations kept across all domains (the fallback for a domain not yet learned). */
export const OVERALL_SAMPLES = 16;
/**
 * A window of recent durations wider than this ratio (longest / shortest) is no expectation: the
 * scan polls as if nothing were learned rather than densely across a wide range.
 */
export const MAX_WINDOW_RATIO = 2;
/** Conditional writes tried per update before the sample is dropped. */
export const UPDATE_ATTEMPTS = 3;

const durationSchema = z
  .number()
  .check(
    z.refine(
      (value) => Number.isSafeInteger(value) && value >= 1 && value <= POLL_BOUNDS.deadlineSeconds.max,
    ),
  );
const learnedDurationsSchema = z.strictObject({
  schemaVersion: z.literal(1),
  overall: z.array(durationSchema).check(z.maxLength(OVERALL_SAMPLES)),
  domains: z.record(
    z.string().check(z.maxLength(253)),
    z.array(durationSchema).check(z.maxLength(SAMPLES_PER_DOMAIN)),
  ),
});

export type LearnedDurations = z.infer<typeof learnedDurationsSchema>;

export const NOTHING_LEARNED: LearnedDurations = Object.freeze({
  schemaVersion: 1,
  overall: [],
  domains: {},
});

/** How deep the learned object may nest: its own shape is 3 deep. */
const LEARNED_DURATIONS_MAX_DEPTH = 4;

type Loaded =
  | { readonly kind: 'missing' }
  | { readonly kind: 'read'; readonly durations: LearnedDurations; readonly etag: string | undefined }
  | { readonly kind: 'unreadable'; readonly reason: string; readonly etag: string | undefined }
  | { readonly kind: 'failed'; readonly reason: string };

type StoreDeps = Pick<ScanDeps, 's3' | 'settings' | 'logger'>;

/** Reads the object; never throws. An ignored object or a failed read is logged here. */
async function load(deps: StoreDeps): Promise<Loaded> {
  let answer: GetObjectCommandOutput;
  try {
    answer = await deps.s3.send(
      new GetObjectCommand({ Bucket: deps.settings.resultsBucket, Key: LEARNED_DURATIONS_KEY }),
    );
  } catch (error) {
    if (isNoSuchKey(error)) return { kind: 'missing' };
    return { kind: 'failed', reason: errorName(error) };
  }
  const etag = answer.ETag;
  if ((answer.ContentLength ?? 0) > MAX_LEARNED_DURATIONS_BYTES) {
    (answer.Body as { destroy?: () => void } | undefined)?.destroy?.();
    return { kind: 'unreadable', reason: `larger than ${MAX_LEARNED_DURATIONS_BYTES} bytes`, etag };
  }
  try {
    const text = (await answer.Body?.transformToString('utf-8')) ?? '';
    if (Buffer.byteLength(text) > MAX_LEARNED_DURATIONS_BYTES) {
      return { kind: 'unreadable', reason: `larger than ${MAX_LEARNED_DURATIONS_BYTES} bytes`, etag };
    }
    // The shape nests 3 deep ({ domains: { name: [seconds] } }); deeper text is not ours, and is
    // refused before JSON.parse and zod recurse into it.
    if (jsonDepthExceeds(text, LEARNED_DURATIONS_MAX_DEPTH)) {
      return { kind: 'unreadable', reason: `nested deeper than ${LEARNED_DURATIONS_MAX_DEPTH}`, etag };
    }
    const parsed = learnedDurationsSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return { kind: 'unreadable', reason: 'not the learned-durations shape', etag };
    return { kind: 'read', durations: parsed.data, etag };
  } catch (error) {
    return { kind: 'unreadable', reason: `not JSON (${errorName(error)})`, etag };
  }
}

/**
 * What StartScan expects of a scan of `domain`: this domain's recent durations, else all domains'.
 * Never throws: anything wrong with the object means "nothing learned", logged once.
 */
export async function expectedDurationOf(
  deps: StoreDeps,
  domain: string,
): Promise<ExpectedDuration | undefined> {
  const loaded = await load(deps);
  if (loaded.kind === 'failed' || loaded.kind === 'unreadable') {
    logIgnored(deps.logger, loaded.reason, 'the scan polls as if nothing were learned');
    return undefined;
  }
  return loaded.kind === 'read' ? expectationFrom(loaded.durations, domain) : undefined;
}

/** The window of recent durations of `domain` (or of all domains), if it is narrow enough to trust. */
export function expectationFrom(durations: LearnedDurations, domain: string): ExpectedDuration | undefined {
  const own = durations.domains[domain] ?? [];
  const [samples, basis] =
    own.length > 0 ? [own, 'domain' as const] : [durations.overall, 'overall' as const];
  if (samples.length === 0) return undefined;
  const earliestSeconds = Math.min(...samples);
  const latestSeconds = Math.max(...samples);
  if (latestSeconds > earliestSeconds * MAX_WINDOW_RATIO) return undefined;
  return { earliestSeconds, latestSeconds, basis };
}

/**
 * The duration a finished scan teaches: it was still running at the poll before the last and done
 * at the last, so the middle of the two is off by at most half a poll interval (10 % dense, 25 %
 * unlearned, of the age). Undefined when the poll state says nothing usable.
 */
export function learnedSampleSeconds(poll: PollState): number | undefined {
  const last = poll.ageAtLastPollSeconds ?? poll.waitedSeconds;
  const previous = Math.min(poll.ageAtPreviousPollSeconds ?? last, last);
  const sample = Math.round((previous + last) / 2);
  return sample >= 1 && sample <= POLL_BOUNDS.deadlineSeconds.max ? sample : undefined;
}

/** `durations` with one more sample for `domain`, bounded in samples and bytes. */
export function withSample(durations: LearnedDurations, domain: string, seconds: number): LearnedDurations {
  const recent = (list: readonly number[], keep: number) => [...list, seconds].slice(-keep);
  // Re-inserting moves the domain to the end, so the domains dropped first are the least recent.
  const entries = Object.entries(durations.domains).filter(([name]) => name !== domain);
  entries.push([domain, recent(durations.domains[domain] ?? [], SAMPLES_PER_DOMAIN)]);
  const overall = recent(durations.overall, OVERALL_SAMPLES);
  // Bytes are counted once, then per dropped entry ("name":[...] and its comma), not re-serialized.
  let bytes = serialize({ schemaVersion: 1, overall, domains: Object.fromEntries(entries) }).length;
  let first = 0;
  while (bytes > MAX_LEARNED_DURATIONS_BYTES && first < entries.length - 1) {
    const [name, samples] = entries[first] as [string, number[]];
    bytes -= Buffer.byteLength(`${JSON.stringify(name)}:${JSON.stringify(samples)},`);
    first += 1;
  }
  return { schemaVersion: 1, overall, domains: Object.fromEntries(entries.slice(first)) };
}

function serialize(durations: LearnedDurations): Buffer {
  return Buffer.from(JSON.stringify(durations), 'utf8');
}

/**
 * WriteManifest's one call: add this scan's duration. Never throws (the manifest is already
 * written); a failure is a log line and the sample is lost, which only makes a later poll costlier.
 */
export async function learnScanDuration(deps: StoreDeps, domain: string, poll: PollState): Promise<void> {
  const seconds = learnedSampleSeconds(poll);
  if (seconds === undefined) return;
  for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt += 1) {
    const loaded = await load(deps);
    if (loaded.kind === 'unreadable') {
      // Replaced (conditionally on what was read): a cache that can't be read teaches nothing.
      logIgnored(deps.logger, loaded.reason, 'it is replaced by one holding this scan alone');
    }
    const base = loaded.kind === 'read' ? loaded.durations : NOTHING_LEARNED;
    // A failed read (AccessDenied is also what S3 answers for a missing key without s3:ListBucket)
    // creates only if there is nothing: If-None-Match never overwrites an object unseen.
    const etag = loaded.kind === 'read' || loaded.kind === 'unreadable' ? loaded.etag : undefined;
    const body = serialize(withSample(base, domain, seconds));
    try {
      await deps.s3.send(
        new PutObjectCommand({
          Bucket: deps.settings.resultsBucket,
          Key: LEARNED_DURATIONS_KEY,
          Body: body,
          ContentLength: body.length,
          ContentType: 'application/json',
          ...(etag === undefined ? { IfNoneMatch: '*' } : { IfMatch: etag }),
        }),
      );
      deps.logger.debug('Scan duration learned', { learnedSeconds: seconds, attempt });
      return;
    } catch (error) {
      if (!isWriteConflict(error)) {
        deps.logger.warn('Scan duration not learned: the learned durations could not be written', {
          key: LEARNED_DURATIONS_KEY,
          error: errorName(error),
        });
        return;
      }
    }
  }
  deps.logger.warn('Scan duration not learned: other scans kept updating the learned durations', {
    key: LEARNED_DURATIONS_KEY,
    attempts: UPDATE_ATTEMPTS,
  });
}

/**
 * 412 PreconditionFailed: the object changed (or appeared) since it was read. 409
 * ConditionalRequestConflict: another conditional write to the key is in progress. 404 on If-Match:
 * it was deleted meanwhile. Each means "read again".
 */
function isWriteConflict(error: unknown): boolean {
  return isPreconditionFailure(error) || isNoSuchKey(error);
}

/** No such object; a missing bucket (also a 404) is a failure, not "nothing learned yet". */
function isNoSuchKey(error: unknown): boolean {
  return isMissingObject(error) && errorName(error) !== 'NoSuchBucket';
}

function logIgnored(logger: PipelineLogger, reason: string, consequence: string): void {
  logger.warn(`Learned scan durations ignored: ${consequence}`, { key: LEARNED_DURATIONS_KEY, reason });
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
