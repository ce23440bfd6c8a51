/**
 * The adaptive wait of the per-domain poll loop (WaitForScan -> PollScanStatus -> ScanFinished?).
 *
 * Waits grow geometrically from `minWaitSeconds` to `maxWaitSeconds`: early polls catch fast scans
 * quickly, and a day-long scan costs a few hundred polls instead of thousands. The loop ends at
 * `deadlineSeconds` at the latest, which also bounds the execution history (Step Functions refuses
 * to go past 25,000 events in a standard execution).
 */
import type { PollState } from '#core/scan/contracts';

export interface PollSettings {
  /** First wait, in seconds (POLL_MIN_WAIT_SECONDS). @default 15 */
  readonly minWaitSeconds: number;
  /** Largest wait, in seconds (POLL_MAX_WAIT_SECONDS). @default 300 */
  readonly maxWaitSeconds: number;
  /** Each wait is the previous one times this (POLL_GROWTH_FACTOR). @default 1.5 */
  readonly growthFactor: number;
  /** The scan counts as timed out once it is this old (SCAN_DEADLINE_SECONDS). @default 86400 */
  readonly deadlineSeconds: number;
}

export const DEFAULT_POLL_SETTINGS: PollSettings = Object.freeze({
  minWaitSeconds: 15,
  maxWaitSeconds: 300,
  growthFactor: 1.5,
  deadlineSeconds: 86_400,
});

/** Step Functions' hard limit on the events of one standard execution. */
export const STEP_FUNCTIONS_HISTORY_EVENT_LIMIT = 25_000;

/**
 * History events of one loop iteration: WaitStateEntered/Exited, TaskStateEntered, TaskScheduled,
 * TaskStarted, TaskSucceeded, TaskStateExited, ChoiceStateEntered/Exited. Retries add more.
 */
export const HISTORY_EVENTS_PER_POLL_ITERATION = 9;

/**
 * Everything outside the loop, generously: execution start/end, StartScan, the Parallel with three
 * fetch tasks, the manifest, the optional delete, and the failure path's Pass/Task/Fail states.
 */
export const HISTORY_EVENTS_OUTSIDE_LOOP = 80;

/**
 * The wait before poll number `attempt + 1` (attempt 0 = the wait after StartScan): geometric from the
 * minimum, capped at the maximum, whole seconds (Wait states want integers), never below 1.
 */
export function nextWaitSeconds(
  attempt: number,
  settings: Pick<PollSettings, 'minWaitSeconds' | 'maxWaitSeconds' | 'growthFactor'>,
): number {
  const { minWaitSeconds, maxWaitSeconds, growthFactor } = settings;
  const exponent = Math.max(0, Math.floor(attempt));
  // growthFactor ** exponent overflows to Infinity for long loops; the cap still applies.
  const grown = Math.floor(minWaitSeconds * growthFactor ** exponent);
  const capped = Math.min(maxWaitSeconds, Number.isFinite(grown) ? grown : maxWaitSeconds);
  return Math.max(1, Math.floor(capped));
}

/** The poll state StartScan returns: nothing polled yet, the first wait is the minimum. */
export function initialPollState(startedAt: Date, settings: PollSettings): PollState {
  return {
    attempt: 0,
    nextWaitSeconds: clampToRemaining(nextWaitSeconds(0, settings), settings.deadlineSeconds),
    waitedSeconds: 0,
    startedAt: startedAt.toISOString(),
    deadlineExceeded: false,
  };
}

/**
 * The poll state after one more status poll made at `now`.
 *
 * `waitedSeconds` adds the wait that preceded this poll, so it is the scan's age as the state machine
 * scheduled it. The deadline uses max(wall-clock age, waitedSeconds): on AWS the wall clock is the
 * larger (Lambda time adds up), while a local run with overridden (shortened) waits only reaches the
 * deadline through waitedSeconds. Both therefore take the same number of polls to time out.
 *
 * The next wait is cut to what is left before the deadline, so the last poll happens at the
 * deadline instead of up to one maximum wait after it.
 */
export function advancePoll(poll: PollState, now: Date, settings: PollSettings): PollState {
  const attempt = poll.attempt + 1;
  const waitedSeconds = poll.waitedSeconds + poll.nextWaitSeconds;
  const ageSeconds = Math.max(wallClockAgeSeconds(poll.startedAt, now), waitedSeconds);
  const deadlineExceeded = ageSeconds >= settings.deadlineSeconds;
  return {
    attempt,
    nextWaitSeconds: clampToRemaining(
      nextWaitSeconds(attempt, settings),
      settings.deadlineSeconds - ageSeconds,
    ),
    waitedSeconds,
    startedAt: poll.startedAt,
    deadlineExceeded,
  };
}

/**
 * Loop iterations (Wait + Poll + Choice) of a scan that never finishes, assuming polls take no time:
 * the most the state machine can ever run. Real executions reach the deadline sooner (wall clock).
 */
export function worstCaseLoopIterations(settings: PollSettings): number {
  // The epoch clock never advances here, so only waitedSeconds drives the deadline. Simulate while
  // the waits still grow, then count the constant ones arithmetically so that odd settings (a
  // one-second wait and a year-long deadline) cannot make this loop for long. Past 10,000 growing
  // steps the current (smaller) wait is assumed constant: an over-estimate, which is the safe side.
  let poll = initialPollState(new Date(0), settings);
  for (let step = 0; ; step++) {
    poll = advancePoll(poll, new Date(0), settings);
    if (poll.deadlineExceeded) return poll.attempt;
    const settled =
      nextWaitSeconds(poll.attempt, settings) >= settings.maxWaitSeconds || settings.growthFactor <= 1;
    if (settled || step >= 10_000) {
      const remaining = settings.deadlineSeconds - poll.waitedSeconds;
      return poll.attempt + Math.ceil(remaining / poll.nextWaitSeconds);
    }
  }
}

/**
 * An upper estimate of the history events of the longest possible execution without retries.
 * `extraEventsPerIteration` lets a caller add what its Retry policy may cost per poll (a retried
 * task adds TaskFailed + TaskScheduled + TaskStarted: 3 events a retry).
 */
export function estimateHistoryEvents(
  settings: PollSettings,
  options?: { extraEventsPerIteration?: number },
): number {
  const perIteration = HISTORY_EVENTS_PER_POLL_ITERATION + (options?.extraEventsPerIteration ?? 0);
  return HISTORY_EVENTS_OUTSIDE_LOOP + worstCaseLoopIterations(settings) * perIteration;
}

/**
 * Problems with a set of poll settings, as `{ setting, problem }` pairs (empty when valid). The
 * setting names are the environment variables, so configuration errors point at what to change.
 */
export function pollSettingsProblems(settings: PollSettings): { setting: string; problem: string }[] {
  const problems: { setting: string; problem: string }[] = [];
  const { minWaitSeconds, maxWaitSeconds, growthFactor, deadlineSeconds } = settings;
  if (!Number.isInteger(minWaitSeconds) || minWaitSeconds < 1) {
    problems.push({
      setting: 'POLL_MIN_WAIT_SECONDS',
      problem: `must be a whole number >= 1, got ${minWaitSeconds}`,
    });
  }
  if (!Number.isInteger(maxWaitSeconds) || maxWaitSeconds < minWaitSeconds) {
    problems.push({
      setting: 'POLL_MAX_WAIT_SECONDS',
      problem: `must be a whole number >= POLL_MIN_WAIT_SECONDS (${minWaitSeconds}), got ${maxWaitSeconds}`,
    });
  }
  if (!Number.isFinite(growthFactor) || growthFactor < 1) {
    problems.push({ setting: 'POLL_GROWTH_FACTOR', problem: `must be a number >= 1, got ${growthFactor}` });
  }
  if (!Number.isInteger(deadlineSeconds) || deadlineSeconds < 1) {
    problems.push({
      setting: 'SCAN_DEADLINE_SECONDS',
      problem: `must be a whole number >= 1, got ${deadlineSeconds}`,
    });
  }
  if (problems.length === 0) {
    const events = estimateHistoryEvents(settings);
    // Leave half of the limit for retries and anything the estimate does not see.
    if (events > STEP_FUNCTIONS_HISTORY_EVENT_LIMIT / 2) {
      problems.push({
        setting: 'SCAN_DEADLINE_SECONDS',
        problem: `with waits of ${minWaitSeconds}..${maxWaitSeconds} s a scan may need about ${events} history events, too close to Step Functions' limit of ${STEP_FUNCTIONS_HISTORY_EVENT_LIMIT}: raise POLL_MAX_WAIT_SECONDS or lower the deadline`,
      });
    }
  }
  return problems;
}

function wallClockAgeSeconds(startedAt: string, now: Date): number {
  const started = Date.parse(startedAt);
  if (Number.isNaN(started)) return 0;
  return Math.max(0, Math.floor((now.getTime() - started) / 1000));
}

function clampToRemaining(wait: number, remainingSeconds: number): number {
  return Math.max(1, Math.min(wait, Math.ceil(remainingSeconds)));
}
