/**
 * The adaptive wait of the per-domain poll loop (WaitForScan -> PollScanStatus -> ScanFinished?).
 *
 * The wait is chosen for the lag it promises. A scan that ends just after a poll at age t is noticed
 * at the next poll, so the wait after that poll is the worst lag of every end time in between: a
 * wait of at most max(minWaitSeconds, f x t) keeps the lag within max(minWaitSeconds, f x duration)
 * for every end time, while each poll comes at (1 + f) times the age of the one before.
 *
 * - Before anything is learned, f = growthFactor - 1 (25 % by default), capped at maxWaitSeconds.
 * - With a learned expectation (learned-durations.ts), the first poll comes shortly before the
 *   shortest recent duration, polls are dense (f = 10 %) until past the longest one, and the
 *   unlearned schedule takes over after that (or after MAX_DENSE_POLLS dense polls). A scan that
 *   ends far earlier than learned (a vendor that fails fast, a domain that shrank) is noticed by
 *   the early-end watcher (early-end-watch.ts), which releases the wait outside the execution,
 *   where its checks cost no state transitions; without the watcher, it is noticed at that first
 *   poll.
 *
 * The loop ends at `deadlineSeconds` at the latest, which also bounds the execution history (Step
 * Functions refuses to go past 25,000 events in a standard execution).
 */
import * as z from 'zod/mini';
import type { NumberBounds, SettingProblem } from '#lambdas/platform/input/schema';
import { boundedNumber, problemsOf } from '#lambdas/platform/input/schema';
import type { ExpectedDuration, PollState } from '#lambdas/scan/contracts';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';

export interface PollSettings {
  /** Shortest wait, and the first one before anything is learned (POLL_MIN_WAIT_SECONDS). @default 60 */
  readonly minWaitSeconds: number;
  /** Largest wait after a poll, in seconds (POLL_MAX_WAIT_SECONDS). @default 300 */
  readonly maxWaitSeconds: number;
  /**
   * Before anything is learned, each poll comes at most this multiple of the age of the one before
   * (POLL_GROWTH_FACTOR): the lag stays within (factor - 1) of the duration. @default 1.25
   */
  readonly growthFactor: number;
  /** The scan counts as timed out once it is this old (SCAN_DEADLINE_SECONDS). @default 86400 */
  readonly deadlineSeconds: number;
}

export const DEFAULT_POLL_SETTINGS: PollSettings = Object.freeze({
  minWaitSeconds: 60,
  maxWaitSeconds: 300,
  growthFactor: 1.25,
  deadlineSeconds: 86_400,
});

/** Step Functions' hard limit on the events of one standard execution. */
export const STEP_FUNCTIONS_HISTORY_EVENT_LIMIT = 25_000;

/**
 * History events of one loop iteration: the WaitForScan callback task (TaskStateEntered,
 * TaskScheduled, TaskStarted, TaskSubmitted, TaskTimedOut or TaskSucceeded, TaskStateExited, and
 * one to spare for its caught timeout), PollScanStatus (TaskStateEntered, TaskScheduled, TaskStarted,
 * TaskSucceeded, TaskStateExited) and the Choice (ChoiceStateEntered/Exited). Retries add more.
 */
export const HISTORY_EVENTS_PER_POLL_ITERATION = 14;

/**
 * Everything outside the loop, generously: execution start/end, StartScan, the Parallel with three
 * fetch tasks, the manifest, the optional delete, and the failure path's Pass/Task/Fail states.
 */
export const HISTORY_EVENTS_OUTSIDE_LOOP = 80;

/** The lag promised once a duration is learned, as a fraction of the scan's age (10 %). */
export const LEARNED_LAG_FRACTION = 0.1;
/** A learned scan's first poll comes this fraction before the shortest recent duration. */
export const LEARNED_LEAD_FRACTION = 0.1;
/** Dense polling lasts until the age passes the longest recent duration times this. */
export const LEARNED_TAIL_FACTOR = 1.25;
/**
 * At most this many polls are scheduled densely, whatever the learned expectation says: the
 * worst case stays within {@link worstCaseLoopIterations} plus these (see estimateHistoryEvents).
 */
export const MAX_DENSE_POLLS = 16;

/** The age of the first learned poll: shortly before the shortest recent duration, never before the minimum wait. */
export function firstLearnedPollAge(
  expected: ExpectedDuration,
  settings: Pick<PollSettings, 'minWaitSeconds'>,
) {
  return Math.max(
    settings.minWaitSeconds,
    Math.floor((1 - LEARNED_LEAD_FRACTION) * expected.earliestSeconds),
  );
}

/**
 * The wait after a poll at `ageSeconds`: `lagFraction` of the age, within the minimum and maximum
 * wait, whole seconds (Wait states want integers), never below 1.
 */
export function waitAfterPollAt(
  ageSeconds: number,
  lagFraction: number,
  settings: Pick<PollSettings, 'minWaitSeconds' | 'maxWaitSeconds'>,
): number {
  const proportional = Math.floor(Math.max(0, lagFraction) * Math.max(0, ageSeconds));
  const bounded = Math.min(settings.maxWaitSeconds, Math.max(settings.minWaitSeconds, proportional));
  return Math.max(1, Math.floor(bounded));
}

/**
 * The poll state StartScan returns: nothing polled yet. Unlearned, the first wait is the minimum;
 * with an expectation, it lasts until the first learned poll (never sooner than an unlearned
 * scan's first poll).
 */
export function initialPollState(
  startedAt: Date,
  settings: PollSettings,
  expected?: ExpectedDuration,
): PollState {
  const firstWait =
    expected === undefined
      ? waitAfterPollAt(0, settings.growthFactor - 1, settings)
      : firstLearnedPollAge(expected, settings);
  return {
    attempt: 0,
    nextWaitSeconds: clampToRemaining(firstWait, settings.deadlineSeconds),
    waitedSeconds: 0,
    startedAt: startedAt.toISOString(),
    deadlineExceeded: false,
    ...(expected === undefined ? {} : { expected }),
  };
}

/**
 * The poll state after one more status poll made at `now`; `releasedAtAgeSeconds` when the
 * early-end watcher ended the wait before its end (the age at which it saw the scan end).
 *
 * `waitedSeconds` adds the wait that preceded this poll, so it is the scan's age as the state machine
 * scheduled it. The deadline uses max(wall-clock age, waitedSeconds): on AWS the wall clock is the
 * larger (Lambda time adds up), while a local run with overridden (shortened) waits only reaches the
 * deadline through waitedSeconds. Both therefore take the same number of polls to time out.
 *
 * The next wait is cut to what is left before the deadline, so the last poll happens at the
 * deadline instead of up to one maximum wait after it. The ages of this poll and the one before
 * are kept: between them is when the scan ended, which WriteManifest learns from.
 */
export function advancePoll(
  poll: PollState,
  now: Date,
  settings: PollSettings,
  releasedAtAgeSeconds?: number,
): PollState {
  const attempt = poll.attempt + 1;
  const planned = poll.waitedSeconds + poll.nextWaitSeconds;
  // A wait the early-end watcher ended lasted until the age it saw the end at, within the plan.
  const waitedSeconds =
    releasedAtAgeSeconds === undefined
      ? planned
      : Math.min(planned, Math.max(poll.waitedSeconds, Math.floor(releasedAtAgeSeconds)));
  const ageSeconds = Math.max(wallClockAgeSeconds(poll.startedAt, now), waitedSeconds);
  const deadlineExceeded = ageSeconds >= settings.deadlineSeconds;
  const nextWait =
    nextPlannedWait(poll.expected, ageSeconds, settings) ??
    waitAfterPollAt(
      ageSeconds,
      inDensePhase(poll.expected, attempt, ageSeconds) ? LEARNED_LAG_FRACTION : settings.growthFactor - 1,
      settings,
    );
  return {
    attempt,
    nextWaitSeconds: clampToRemaining(nextWait, settings.deadlineSeconds - ageSeconds),
    waitedSeconds,
    startedAt: poll.startedAt,
    deadlineExceeded,
    ageAtLastPollSeconds: ageSeconds,
    ageAtPreviousPollSeconds: poll.ageAtLastPollSeconds ?? 0,
    ...(poll.expected === undefined ? {} : { expected: poll.expected }),
  };
}

/** Before the first learned poll (a released wait polls early), the wait that is left until it. */
function nextPlannedWait(
  expected: ExpectedDuration | undefined,
  ageSeconds: number,
  settings: PollSettings,
): number | undefined {
  if (expected === undefined) return undefined;
  const first = firstLearnedPollAge(expected, settings);
  return first > ageSeconds ? first - ageSeconds : undefined;
}

/** Whether the wait after poll number `attempt` (at `ageSeconds`) is scheduled densely. */
function inDensePhase(expected: ExpectedDuration | undefined, attempt: number, ageSeconds: number): boolean {
  if (expected === undefined) return false;
  return attempt < MAX_DENSE_POLLS && ageSeconds < expected.latestSeconds * LEARNED_TAIL_FACTOR;
}

/**
 * Loop iterations (Wait + Poll + Choice) of an unlearned scan that never finishes, assuming polls
 * take no time. Real executions reach the deadline sooner (wall clock). A learned scan makes at
 * most {@link MAX_DENSE_POLLS} more: after its dense polls the unlearned waits take over from a
 * later age, and since the unlearned wait never shrinks as the age grows, they reach the deadline
 * in no more polls than from the start.
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
    const settled = poll.nextWaitSeconds >= settings.maxWaitSeconds || settings.growthFactor <= 1;
    if (settled || step >= 10_000) {
      const remaining = settings.deadlineSeconds - poll.waitedSeconds;
      return poll.attempt + Math.ceil(remaining / poll.nextWaitSeconds);
    }
  }
}

/**
 * An upper estimate of the history events of the longest possible execution without retries,
 * learned or not (the dense polls of a learned expectation included).
 * `extraEventsPerIteration` lets a caller add what its Retry policy may cost per poll (a retried
 * task adds TaskFailed + TaskScheduled + TaskStarted: 3 events a retry).
 */
export function estimateHistoryEvents(
  settings: PollSettings,
  options?: { extraEventsPerIteration?: number },
): number {
  const perIteration = HISTORY_EVENTS_PER_POLL_ITERATION + (options?.extraEventsPerIteration ?? 0);
  const learnedExtra = MAX_DENSE_POLLS;
  return HISTORY_EVENTS_OUTSIDE_LOOP + (worstCaseLoopIterations(settings) + learnedExtra) * perIteration;
}

/** The poll settings' environment variables (docs/contracts.md), by setting. */
export const POLL_VARIABLES = SCAN_VARIABLES.poll satisfies Record<keyof PollSettings, string>;

/**
 * The only bounds of the poll settings: the configuration (synth), the handlers' environment (cold
 * start) and the local runner's flags all validate through {@link pollSettingsSchema}.
 *
 * - Waits are whole seconds because Wait states take integers; an hour is the longest useful wait.
 * - A growth factor above 4 lets the lag reach three times the duration, which defeats the point.
 * - The deadline stops at 7 days: a vendor scan that runs longer is stuck, and the history budget
 *   below would need waits close to an hour anyway. Short deadlines serve local runs and tests.
 */
export const POLL_BOUNDS = {
  minWaitSeconds: { min: 1, max: 3600, integer: true },
  maxWaitSeconds: { min: 1, max: 3600, integer: true },
  growthFactor: { min: 1, max: 4 },
  deadlineSeconds: { min: 1, max: 604_800, integer: true },
} as const satisfies Record<keyof PollSettings, NumberBounds>;

/**
 * History events one execution may spend on its poll loop: half of Step Functions' limit, leaving
 * the rest for retries and whatever the estimate does not see.
 */
export const POLL_HISTORY_EVENT_BUDGET = STEP_FUNCTIONS_HISTORY_EVENT_LIMIT / 2;

/**
 * Names a poll setting for its reader: a field, or `undefined` for the settings as a whole (the
 * history budget, which the deadline, the maximum wait and the growth factor share).
 */
export type PollSettingNamer = (field: keyof PollSettings | undefined) => string;

/**
 * The poll settings as one schema: each bound of {@link POLL_BOUNDS}, the defaults, the maximum
 * wait not below the minimum, and the worst-case loop within {@link POLL_HISTORY_EVENT_BUDGET}.
 * Unknown keys are refused. `nameOf` names the settings inside cross-field messages.
 */
export function pollSettingsSchema(nameOf: PollSettingNamer) {
  return z
    .strictObject({
      minWaitSeconds: z._default(
        boundedNumber(POLL_BOUNDS.minWaitSeconds),
        DEFAULT_POLL_SETTINGS.minWaitSeconds,
      ),
      maxWaitSeconds: z._default(
        boundedNumber(POLL_BOUNDS.maxWaitSeconds),
        DEFAULT_POLL_SETTINGS.maxWaitSeconds,
      ),
      growthFactor: z._default(boundedNumber(POLL_BOUNDS.growthFactor), DEFAULT_POLL_SETTINGS.growthFactor),
      deadlineSeconds: z._default(
        boundedNumber(POLL_BOUNDS.deadlineSeconds),
        DEFAULT_POLL_SETTINGS.deadlineSeconds,
      ),
    })
    .check(
      z.superRefine((poll, context) => {
        if (poll.maxWaitSeconds < poll.minWaitSeconds) {
          context.addIssue({
            code: 'custom',
            path: ['maxWaitSeconds'],
            message: `must be >= ${nameOf('minWaitSeconds')} (got ${poll.maxWaitSeconds} < ${poll.minWaitSeconds})`,
          });
          return;
        }
        const events = estimateHistoryEvents(poll);
        if (events > POLL_HISTORY_EVENT_BUDGET) {
          context.addIssue({
            code: 'custom',
            path: [],
            message:
              `with ${nameOf('minWaitSeconds')} ${poll.minWaitSeconds}, ${nameOf('maxWaitSeconds')} ${poll.maxWaitSeconds}, ` +
              `${nameOf('growthFactor')} ${poll.growthFactor} and ${nameOf('deadlineSeconds')} ${poll.deadlineSeconds} ` +
              `makes a worst-case poll loop of ${worstCaseLoopIterations(poll)} polls (~${events} execution history events), ` +
              `over the budget of ${POLL_HISTORY_EVENT_BUDGET} (half of Step Functions' ${STEP_FUNCTIONS_HISTORY_EVENT_LIMIT}-event limit): ` +
              `raise ${nameOf('maxWaitSeconds')} (${poll.maxWaitSeconds}) or ${nameOf('growthFactor')} (${poll.growthFactor}), ` +
              `or lower ${nameOf('deadlineSeconds')} (${poll.deadlineSeconds}) to at most ${largestDeadlineWithinBudget(poll)}`,
          });
        }
      }),
    );
}

/**
 * The largest deadline (whole seconds, within {@link POLL_BOUNDS}) whose worst-case loop stays within
 * the history budget for these waits. Used to tell a user what would work, and by the local runner
 * to pick a deadline when only the waits were given.
 */
export function largestDeadlineWithinBudget(
  waits: Pick<PollSettings, 'minWaitSeconds' | 'maxWaitSeconds' | 'growthFactor'>,
): number {
  const fits = (deadlineSeconds: number): boolean =>
    estimateHistoryEvents({ ...waits, deadlineSeconds }) <= POLL_HISTORY_EVENT_BUDGET;
  let low: number = POLL_BOUNDS.deadlineSeconds.min;
  let high: number = POLL_BOUNDS.deadlineSeconds.max;
  if (fits(high)) return high;
  if (!fits(low)) return low;
  // The event estimate grows with the deadline, so a binary search finds the edge.
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * Problems with a set of poll settings, as `{ setting, problem }` pairs (empty when valid), named by
 * their environment variables: what a cold start reports, and what code-built settings refuse.
 */
export function pollSettingsProblems(settings: PollSettings): SettingProblem[] {
  const result = pollSettingsSchema(nameByVariable).safeParse(settings);
  return result.success
    ? []
    : problemsOf(result.error, ([field]) => nameByVariable(field as keyof PollSettings));
}

/** Poll settings named by their environment variables; the history budget is the deadline's. */
export function nameByVariable(field: keyof PollSettings | undefined): string {
  return field === undefined ? POLL_VARIABLES.deadlineSeconds : POLL_VARIABLES[field];
}

function wallClockAgeSeconds(startedAt: string, now: Date): number {
  const started = Date.parse(startedAt);
  if (Number.isNaN(started)) return 0;
  return Math.max(0, Math.floor((now.getTime() - started) / 1000));
}

function clampToRemaining(wait: number, remainingSeconds: number): number {
  return Math.max(1, Math.min(wait, Math.ceil(remainingSeconds)));
}
