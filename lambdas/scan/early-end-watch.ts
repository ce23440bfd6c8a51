/**
 * The early-end watcher: releases the wait of a scan that ended long before its execution planned
 * to poll again, outside the execution, where checks cost no state transitions.
 *
 * While ScanDomain waits (its `WaitForScan` callback task), the task has written one small record,
 * `scans/waiting/<scanUuid>/<startedAt>/wait-<attempt>-<waitSeconds>`, whose body is the task token.
 * The key alone tells the watcher which scan waits, how old it is and when the execution polls by
 * itself: a pass needs one listing, and reads a body only to release a wait. The watcher keeps when
 * it last checked a scan in the key of an empty marker beside it, `.../checked-<age in ms>`.
 *
 * A scan is checked often enough that an end is seen within max(60 s, 25 %) of its duration: the
 * gap between two checks never exceeds max(minGap, gapFraction x the age at the earlier one), less a
 * margin for the release to reach the execution. When the vendor says the scan ended (the configured
 * vocabulary's succeeded or failed), SendTaskSuccess ends the wait and the execution's own
 * PollScanStatus confirms the status. A scan still running is never released; a vendor error or 429
 * skips the scan for this pass and never fails it. A token Step Functions no longer knows (the wait
 * ended by itself) means the record is stale: it is removed.
 *
 * Without the watcher the execution still polls on its own schedule: only early ends are later.
 */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { SendTaskSuccessCommand } from '@aws-sdk/client-sfn';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import {
  checkMarkerKey,
  parseWaitingKey,
  WAITING_PREFIX,
  type WaitingKey,
} from '#lambdas/scan/waiting-records';

export interface EarlyEndSchedule {
  /** The shortest promised lag, in seconds. @default 60 */
  readonly minGapSeconds: number;
  /** The promised lag as a fraction of the scan's age. @default 0.25 */
  readonly gapFraction: number;
  /** Seconds between two passes (two per invocation, the invocations a minute apart). @default 30 */
  readonly passIntervalSeconds: number;
  /** Kept free of the promise for the release and the execution's own poll. @default 5 */
  readonly releaseMarginSeconds: number;
}

export const EARLY_END_SCHEDULE: EarlyEndSchedule = Object.freeze({
  minGapSeconds: 60,
  gapFraction: 0.25,
  passIntervalSeconds: 30,
  releaseMarginSeconds: 5,
});

/** Vendor status calls in flight at once: a minute's checks of a large list, without a burst. */
export const EARLY_END_CONCURRENCY = 8;
/** No check starts this close to the end of the invocation (the poll function's timeout). */
export const EARLY_END_BUDGET_MARGIN_MS = 15_000;
/** The longest gap allowed after a check at `lastCheckedAgeSeconds` (the scan's start counts as one at 0). */
export function allowedCheckGap(lastCheckedAgeSeconds: number, schedule: EarlyEndSchedule): number {
  return (
    Math.max(schedule.minGapSeconds, schedule.gapFraction * lastCheckedAgeSeconds) -
    schedule.releaseMarginSeconds
  );
}

/**
 * Whether a pass at `ageSeconds` must check the scan: waiting for the next pass would leave a gap
 * longer than allowed since the last check, so the check happens at this, the earlier, pass.
 */
export function earlyEndCheckDue(
  ageSeconds: number,
  lastCheckedAgeSeconds: number | undefined,
  schedule: EarlyEndSchedule,
): boolean {
  const last = lastCheckedAgeSeconds ?? 0;
  return ageSeconds + schedule.passIntervalSeconds - last > allowedCheckGap(last, schedule);
}

/**
 * The age of the watcher's next check of a scan, when its passes come at ages `firstPassAge + k x
 * passIntervalSeconds` (k = 0, 1, ...) and it last checked at `lastCheckedAgeSeconds` (undefined:
 * never). What {@link earlyEndCheckDue} decides pass by pass, in one step: the bench and the lag
 * property use it.
 */
export function nextCheckAge(
  lastCheckedAgeSeconds: number | undefined,
  firstPassAge: number,
  schedule: EarlyEndSchedule,
): number {
  const interval = schedule.passIntervalSeconds;
  const last = lastCheckedAgeSeconds ?? Number.NEGATIVE_INFINITY;
  // No pass before the latest one at which a check could not yet be due.
  const earliest =
    (lastCheckedAgeSeconds ?? 0) + allowedCheckGap(lastCheckedAgeSeconds ?? 0, schedule) - interval;
  let k = Math.max(0, Math.floor((Math.max(earliest, last) - firstPassAge) / interval));
  for (; ; k++) {
    const age = firstPassAge + k * interval;
    if (age > last && earlyEndCheckDue(age, lastCheckedAgeSeconds, schedule)) return age;
  }
}

/** The part of the SFN client the watcher uses: SendTaskSuccess only. */
export interface TaskResponder {
  send(command: SendTaskSuccessCommand): Promise<unknown>;
}

export interface EarlyEndWatchDeps {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly scanClient: Pick<ScanApi, 'getStatus'>;
  readonly sfn: TaskResponder;
  readonly logger: PipelineLogger;
  readonly clock: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  readonly schedule: EarlyEndSchedule;
  /** Vendor status calls in flight at once. */
  readonly concurrency: number;
  /** No check starts once this much of the invocation has passed (below the Lambda timeout). */
  readonly timeBudgetMs: number;
  /** Passes per invocation, passIntervalSeconds apart. */
  readonly passes: number;
}

export interface PassReport {
  readonly waiting: number;
  readonly checked: number;
  readonly released: number;
  readonly staleRemoved: number;
  /** The vendor answered 429: the remaining checks wait for the next pass. */
  readonly throttled: boolean;
}

/** Errors of SendTaskSuccess that mean the wait is over already: its record is stale. */
const STALE_TOKEN_ERRORS = new Set(['TaskTimedOut', 'InvalidToken', 'TaskDoesNotExist']);

interface ScanGroup {
  wait?: Extract<WaitingKey, { kind: 'wait' }>;
  checked?: Extract<WaitingKey, { kind: 'checked' }>;
  superseded: string[];
}

async function listWaiting(deps: EarlyEndWatchDeps): Promise<Map<string, ScanGroup>> {
  const groups = new Map<string, ScanGroup>();
  let token: string | undefined;
  do {
    const page = await deps.s3.send(
      new ListObjectsV2Command({ Bucket: deps.bucket, Prefix: WAITING_PREFIX, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      const parsed = object.Key === undefined ? undefined : parseWaitingKey(object.Key);
      if (!parsed) continue;
      const id = `${parsed.scanUuid}/${parsed.startedAt}`;
      const group = groups.get(id) ?? { superseded: [] };
      groups.set(id, group);
      // Only the newest wait and the latest check count; older ones are left over from earlier polls.
      if (parsed.kind === 'wait') {
        if (group.wait && group.wait.attempt >= parsed.attempt) group.superseded.push(parsed.key);
        else {
          if (group.wait) group.superseded.push(group.wait.key);
          group.wait = parsed;
        }
      } else if (group.checked && group.checked.ageSeconds >= parsed.ageSeconds) {
        group.superseded.push(parsed.key);
      } else {
        if (group.checked) group.superseded.push(group.checked.key);
        group.checked = parsed;
      }
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return groups;
}

async function removeKeys(deps: EarlyEndWatchDeps, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    await deps.s3.send(
      new DeleteObjectsCommand({
        Bucket: deps.bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
}

/** One pass over every waiting scan. */
export async function watchEarlyEndsOnce(deps: EarlyEndWatchDeps, budgetEndsAt: number): Promise<PassReport> {
  const groups = await listWaiting(deps);
  const leftovers = [...groups.values()].flatMap((group) =>
    group.wait ? group.superseded : [...group.superseded, ...(group.checked ? [group.checked.key] : [])],
  );
  if (leftovers.length > 0) await removeKeys(deps, leftovers);
  const now = deps.clock().getTime();
  const due = [...groups.values()]
    .filter(
      (group): group is ScanGroup & { wait: NonNullable<ScanGroup['wait']> } => group.wait !== undefined,
    )
    .map((group) => ({ group, ageSeconds: Math.max(0, (now - Date.parse(group.wait.startedAt)) / 1000) }))
    .filter(({ group, ageSeconds }) => earlyEndCheckDue(ageSeconds, group.checked?.ageSeconds, deps.schedule))
    // The tightest promises first: scans never checked, then those last checked youngest.
    .sort((a, b) => (a.group.checked?.ageSeconds ?? 0) - (b.group.checked?.ageSeconds ?? 0));

  let checked = 0;
  let released = 0;
  let staleRemoved = 0;
  let throttled = false;
  const queue = [...due];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (throttled || deps.clock().getTime() >= budgetEndsAt) return;
      const { group, ageSeconds } = next;
      const { wait } = group;
      let state: string;
      try {
        state = (await deps.scanClient.getStatus(wait.scanUuid)).state;
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'VendorThrottledError') throttled = true;
        deps.logger.warn('Early-end check skipped: the vendor status could not be read', {
          scanUuid: wait.scanUuid,
          error: name,
        });
        continue;
      }
      checked += 1;
      const keys = [wait.key, ...(group.checked ? [group.checked.key] : [])];
      if (state !== 'succeeded' && state !== 'failed') {
        await deps.s3.send(
          new PutObjectCommand({
            Bucket: deps.bucket,
            Key: checkMarkerKey(wait.scanUuid, wait.startedAt, ageSeconds),
            Body: '',
          }),
        );
        if (group.checked) await removeKeys(deps, [group.checked.key]);
        continue;
      }
      const outcome = await release(deps, wait.key, ageSeconds);
      if (outcome === 'released') released += 1;
      if (outcome === 'stale') staleRemoved += 1;
      if (outcome !== 'kept') await removeKeys(deps, keys);
      deps.logger.info('Early-end check found the scan ended', {
        scanUuid: wait.scanUuid,
        state,
        ageSeconds,
        waitReleased: outcome === 'released',
      });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, deps.concurrency) }, worker));
  return {
    waiting: [...groups.values()].filter((group) => group.wait).length,
    checked,
    released,
    staleRemoved,
    throttled,
  };
}

/** Ends the wait whose token the record holds; the token itself is never logged. */
async function release(
  deps: EarlyEndWatchDeps,
  key: string,
  ageSeconds: number,
): Promise<'released' | 'stale' | 'kept'> {
  let taskToken: string;
  try {
    const object = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: key }));
    taskToken = (await object.Body?.transformToString('utf8'))?.trim() ?? '';
  } catch (error) {
    // Gone already: the execution moved on and another pass removed it.
    if ((error as Error).name === 'NoSuchKey') return 'stale';
    throw error;
  }
  if (taskToken === '') return 'stale';
  try {
    await deps.sfn.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify({ ageSeconds }) }));
    return 'released';
  } catch (error) {
    const name = (error as Error).name;
    if (STALE_TOKEN_ERRORS.has(name)) return 'stale';
    deps.logger.warn('Early-end release failed; the execution polls on its own schedule', { error: name });
    return 'kept';
  }
}

/** `passes` passes, passIntervalSeconds apart, within the time budget. */
export async function watchEarlyEnds(deps: EarlyEndWatchDeps): Promise<PassReport[]> {
  const started = deps.clock().getTime();
  const budgetEndsAt = started + deps.timeBudgetMs;
  const reports: PassReport[] = [];
  for (let pass = 0; pass < deps.passes; pass++) {
    if (pass > 0) {
      const nextAt = started + pass * deps.schedule.passIntervalSeconds * 1000;
      if (nextAt >= budgetEndsAt) break;
      await deps.sleep(Math.max(0, nextAt - deps.clock().getTime()));
    }
    reports.push(await watchEarlyEndsOnce(deps, budgetEndsAt));
  }
  return reports;
}

/** The watcher's deps from the scan steps' deps (the results bucket, the scan client, the clock). */
export function earlyEndWatchDeps(
  deps: Pick<ScanDeps, 's3' | 'scanClient' | 'logger' | 'clock' | 'settings'>,
  sfn: TaskResponder,
  options: { readonly timeBudgetMs: number; readonly sleep: (ms: number) => Promise<void> },
): EarlyEndWatchDeps {
  return {
    s3: deps.s3,
    bucket: deps.settings.resultsBucket,
    scanClient: deps.scanClient,
    sfn,
    logger: deps.logger,
    clock: deps.clock,
    sleep: options.sleep,
    schedule: EARLY_END_SCHEDULE,
    concurrency: EARLY_END_CONCURRENCY,
    timeBudgetMs: options.timeBudgetMs,
    passes: 2,
  };
}
