/**
 * How long scans take, learned from the scans that succeeded, so the poll loop can wait until
 * shortly before a scan is expected to end (poll-schedule.ts).
 *
 * One small object per domain (`learned/scan-durations/domains/<labels reversed>.json`) holds that
 * domain's recent durations. WriteManifest updates only its own domain's object, so scans of
 * different domains never contend, however many finish at once, and the record grows with the
 * list (100,000 domains are 100,000 objects of a few hundred bytes), never past a cap. StartScan
 * reads one object (one GET); a domain with no record of its own reads the records of the domains
 * next to it in key order (one LIST and at most {@link NEIGHBOURS} GETs, once per new domain).
 * The labels are reversed in the key so those neighbours are the same organisation's domains first
 * (`com.example.a` beside `com.example.b`).
 *
 * A record is a cache, never the scan's outcome: whatever is stored (missing, unreadable, oversized,
 * wrong shape) is ignored with one log line and the scan polls as if nothing were learned; updating
 * it never fails a scan. Domains are not personal data; nothing else is kept.
 *
 * Two scans of the same domain finishing together update its record with conditional writes
 * (If-Match on the ETag read, If-None-Match: * to create), so neither overwrites the other's sample
 * unseen: the loser reads again and retries after a jittered pause.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { isMissingObject } from '#lambdas/platform/s3/json-objects';
import { isPreconditionFailure } from '#lambdas/platform/s3/promote';
import type { ExpectedDuration, PollState } from '#lambdas/scan/contracts';
import type { ScanDeps } from '#lambdas/scan/deps';
import {
  type DurationRecord,
  type LoadedRecord,
  loadRecord,
  NO_SAMPLES,
  serializeRecord,
} from '#lambdas/scan/learned-record';
import { POLL_BOUNDS } from '#lambdas/scan/poll-schedule';

/** Outside `scans/`, so nothing that walks the scans' folders ever meets these objects. */
export const LEARNED_DURATIONS_PREFIX = 'learned/scan-durations/domains/';
const RECORD_SUFFIX = '.json';
/** Recent durations kept per domain. */
export const SAMPLES_PER_DOMAIN = 8;
/** Records of neighbouring domains a domain with none of its own learns from. */
export const NEIGHBOURS = 8;
/**
 * An expectation spans at most this ratio (longest / shortest). Samples spread wider (a list of
 * 10-minute and 2-hour domains) give the window holding the most of them, not "nothing learned":
 * a scan that ends outside it is still noticed within the unlearned lag (poll-schedule.ts).
 */
export const MAX_WINDOW_RATIO = 2;
/**
 * Conditional writes tried per update. Only scans of one domain contend, so a few rounds settle
 * them; the pause before each retry is jittered so they do not collide again.
 */
export const UPDATE_ATTEMPTS = 10;
/** The longest pause between two attempts of one update, in milliseconds. */
export const MAX_RETRY_PAUSE_MS = 1_000;

type StoreDeps = Pick<ScanDeps, 's3' | 'settings' | 'logger'> & Partial<Pick<ScanDeps, 'sleep' | 'random'>>;

/** A domain's labels reversed (`a.example.com` -> `com.example.a`), so one organisation's records sit together. */
export function learnedDurationsKey(domain: string): string {
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(domain) || domain.length > 253) {
    throw new Error(
      `learned durations: not a normalised domain name: ${JSON.stringify(domain.slice(0, 64))}`,
    );
  }
  return `${LEARNED_DURATIONS_PREFIX}${domain.split('.').reverse().join('.')}${RECORD_SUFFIX}`;
}

/**
 * What StartScan expects of a scan of `domain`: its own recent durations, else its neighbours'.
 * Never throws: anything wrong with a record means "nothing learned" from it, logged once.
 */
export async function expectedDurationOf(
  deps: StoreDeps,
  domain: string,
): Promise<ExpectedDuration | undefined> {
  const key = keyOrLog(deps, domain);
  if (key === undefined) return undefined;
  const own = usable(deps, await loadRecord(deps, key));
  if (own.length > 0) return expectationFrom(own, 'domain');
  const neighbours = await neighbourKeys(deps, key);
  const records = await Promise.all(
    neighbours.map(async (next) => usable(deps, await loadRecord(deps, next))),
  );
  // Each neighbour counts once (its latest duration), however often it was scanned.
  const latest = records.flatMap((samples) => samples.slice(-1));
  return latest.length > 0 ? expectationFrom(latest, 'neighbours') : undefined;
}

/** The record's key, or undefined (logged) for a name no record may have: learning never fails a scan. */
function keyOrLog(deps: StoreDeps, domain: string): string | undefined {
  try {
    return learnedDurationsKey(domain);
  } catch {
    deps.logger.warn('Learned scan durations not used: the domain name is not a normalised one', {
      domainLength: domain.length,
    });
    return undefined;
  }
}

/** The samples of a loaded record, logging why a stored one is ignored. */
function usable(deps: StoreDeps, loaded: LoadedRecord): readonly number[] {
  if (loaded.kind === 'read') return loaded.record.samples;
  if (loaded.kind !== 'missing') {
    deps.logger.warn('Learned scan durations ignored: the scan polls as if nothing were learned from them', {
      key: loaded.key,
      reason: loaded.reason,
    });
  }
  return [];
}

/**
 * Up to {@link NEIGHBOURS} records after `key` in key order, wrapping to the first ones when `key`
 * is near the end. Never throws: a listing that fails is a log line and no neighbours.
 */
async function neighbourKeys(deps: StoreDeps, key: string): Promise<string[]> {
  const list = async (startAfter: string | undefined) => {
    const page = await deps.s3.send(
      new ListObjectsV2Command({
        Bucket: deps.settings.resultsBucket,
        Prefix: LEARNED_DURATIONS_PREFIX,
        MaxKeys: NEIGHBOURS,
        ...(startAfter === undefined ? {} : { StartAfter: startAfter }),
      }),
    );
    return (page.Contents ?? [])
      .map((entry) => entry.Key)
      .filter((name): name is string => name?.endsWith(RECORD_SUFFIX) === true && name !== key);
  };
  try {
    const after = await list(key);
    if (after.length >= NEIGHBOURS) return after;
    const first = await list(undefined);
    return [...new Set([...after, ...first])].slice(0, NEIGHBOURS);
  } catch (error) {
    deps.logger.warn(
      'Learned scan durations of neighbouring domains not listed: the scan polls as if nothing were learned',
      {
        prefix: LEARNED_DURATIONS_PREFIX,
        error: errorName(error),
      },
    );
    return [];
  }
}

/**
 * The window of `samples` that holds the most of them while spanning at most
 * {@link MAX_WINDOW_RATIO}; of equal ones, the shortest durations (an earlier first poll only costs
 * a poll, a later one costs lag).
 */
export function expectationFrom(
  samples: readonly number[],
  basis: ExpectedDuration['basis'],
): ExpectedDuration | undefined {
  const sorted = [...samples].sort((a, b) => a - b);
  let best: { earliestSeconds: number; latestSeconds: number; count: number } | undefined;
  let end = 0;
  for (let start = 0; start < sorted.length; start++) {
    const earliest = sorted[start] as number;
    end = Math.max(end, start);
    while (end + 1 < sorted.length && (sorted[end + 1] as number) <= earliest * MAX_WINDOW_RATIO) end++;
    const count = end - start + 1;
    if (best === undefined || count > best.count) {
      best = { earliestSeconds: earliest, latestSeconds: sorted[end] as number, count };
    }
  }
  return best && { earliestSeconds: best.earliestSeconds, latestSeconds: best.latestSeconds, basis };
}

/**
 * The duration a finished scan teaches: it was still running at the poll before the last and done
 * at the last, so the middle of the two is off by at most half a poll interval. Undefined when the
 * poll state says nothing usable.
 */
export function learnedSampleSeconds(poll: PollState): number | undefined {
  const last = poll.ageAtLastPollSeconds ?? poll.waitedSeconds;
  const previous = Math.min(poll.ageAtPreviousPollSeconds ?? last, last);
  const sample = Math.round((previous + last) / 2);
  return sample >= 1 && sample <= POLL_BOUNDS.deadlineSeconds.max ? sample : undefined;
}

/** `record` with one more sample, keeping the most recent {@link SAMPLES_PER_DOMAIN}. */
export function withSample(record: DurationRecord, seconds: number): DurationRecord {
  return { schemaVersion: 1, samples: [...record.samples, seconds].slice(-SAMPLES_PER_DOMAIN) };
}

/**
 * WriteManifest's one call: add this scan's duration to its domain's record. Never throws (the
 * manifest is already written); a failure is a log line and the sample is lost, which only makes a
 * later poll costlier.
 */
export async function learnScanDuration(deps: StoreDeps, domain: string, poll: PollState): Promise<void> {
  const seconds = learnedSampleSeconds(poll);
  if (seconds === undefined) return;
  const key = keyOrLog(deps, domain);
  if (key === undefined) return;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = deps.random ?? Math.random;
  for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt += 1) {
    if (attempt > 1) {
      await sleep(Math.floor(random() * Math.min(MAX_RETRY_PAUSE_MS, 20 * 2 ** attempt)));
    }
    const loaded = await loadRecord(deps, key);
    if (loaded.kind === 'unreadable') {
      // Replaced (conditionally on what was read): a record that can't be read teaches nothing.
      deps.logger.warn('Learned scan durations ignored: they are replaced by this scan alone', {
        key,
        reason: loaded.reason,
      });
    }
    const base = loaded.kind === 'read' ? loaded.record : NO_SAMPLES;
    // A failed read (AccessDenied is also what S3 answers for a missing key without s3:ListBucket)
    // creates only if there is nothing: If-None-Match never overwrites an object unseen.
    const etag = loaded.kind === 'read' || loaded.kind === 'unreadable' ? loaded.etag : undefined;
    const body = serializeRecord(withSample(base, seconds));
    const outcome = await put(deps, key, body, etag);
    if (outcome === 'stored') {
      deps.logger.debug('Scan duration learned', { learnedSeconds: seconds, attempt });
      return;
    }
    // A refusal (no such bucket, access denied) stays; anything else (a 5xx, a timeout, a reset)
    // is tried again like a conflict.
    if (outcome !== 'conflict' && (outcome.permanent || attempt === UPDATE_ATTEMPTS)) {
      deps.logger.warn('Scan duration not learned: the learned durations could not be written', {
        key,
        error: outcome.error,
      });
      return;
    }
  }
  deps.logger.warn('Scan duration not learned: other scans of the domain kept updating its durations', {
    key,
    attempts: UPDATE_ATTEMPTS,
  });
}

async function put(
  deps: StoreDeps,
  key: string,
  body: Buffer,
  etag: string | undefined,
): Promise<'stored' | 'conflict' | { error: string; permanent: boolean }> {
  try {
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.settings.resultsBucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: 'application/json',
        ...(etag === undefined ? { IfNoneMatch: '*' } : { IfMatch: etag }),
      }),
    );
    return 'stored';
  } catch (error) {
    if (isWriteConflict(error)) return 'conflict';
    const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
    const permanent =
      errorName(error) === 'NoSuchBucket' || (status !== undefined && status >= 400 && status < 500);
    return { error: errorName(error), permanent };
  }
}

/**
 * 412 PreconditionFailed: the object changed (or appeared) since it was read. 409
 * ConditionalRequestConflict: another conditional write to the key is in progress. 404 on If-Match:
 * it was deleted meanwhile. Each means "read again".
 */
function isWriteConflict(error: unknown): boolean {
  return isPreconditionFailure(error) || (isMissingObject(error) && errorName(error) !== 'NoSuchBucket');
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
