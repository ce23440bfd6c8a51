import { describe, expect, it } from 'vitest';
import type { ExpectedDuration } from '#lambdas/scan/contracts';
import {
  advancePoll,
  DEFAULT_POLL_SETTINGS,
  estimateHistoryEvents,
  firstLearnedPollAge,
  initialPollState,
  LEARNED_LEAD_FRACTION,
  LEARNED_TAIL_FACTOR,
  MAX_DENSE_POLLS,
  type PollSettings,
  pollSettingsProblems,
  STEP_FUNCTIONS_HISTORY_EVENT_LIMIT,
  waitAfterPollAt,
  worstCaseLoopIterations,
} from '#lambdas/scan/poll-schedule';

const START = new Date('2026-11-20T10:00:00.000Z');
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);

/** The ages of every poll of a scan that never ends (the schedule does not depend on the end). */
function pollAges(settings: PollSettings, expected?: ExpectedDuration): number[] {
  let poll = initialPollState(START, settings, expected);
  const ages: number[] = [];
  while (!poll.deadlineExceeded) {
    // The wall clock at the scheduled age: polls take no time.
    poll = advancePoll(poll, at(poll.waitedSeconds + poll.nextWaitSeconds), settings);
    ages.push(poll.ageAtLastPollSeconds ?? Number.NaN);
  }
  return ages;
}

/** End times (whole seconds, from..to) whose lag exceeds `allowance(end)`, as [end, lag] pairs. */
function lagViolations(
  ages: readonly number[],
  from: number,
  to: number,
  allowance: (endSeconds: number) => number,
): [number, number][] {
  const violations: [number, number][] = [];
  let next = 0;
  for (let end = from; end <= to; end++) {
    while (next < ages.length && (ages[next] as number) < end) next++;
    const noticed = ages[next];
    if (noticed === undefined) break;
    if (noticed - end > allowance(end)) violations.push([end, noticed - end]);
  }
  return violations;
}

const within =
  (fraction: number, floor = 60) =>
  (end: number) =>
    Math.max(floor, fraction * end);

describe('waitAfterPollAt', () => {
  it.each([
    [0, 60],
    [120, 60],
    [240, 60],
    [300, 75],
    [1000, 250],
    [1200, 300],
    [86_000, 300],
  ])(
    'waits after a poll at %i s -> %i s with the default settings (25 %% of the age, 60..300)',
    (age, wait) => {
      expect(waitAfterPollAt(age, DEFAULT_POLL_SETTINGS.growthFactor - 1, DEFAULT_POLL_SETTINGS)).toBe(wait);
    },
  );

  it('returns whole seconds of at least 1 for fractional settings', () => {
    const settings = { minWaitSeconds: 1, maxWaitSeconds: 10, growthFactor: 1.3 };
    for (const age of [0, 0.5, 3.7, 11, 29, 1e9]) {
      const wait = waitAfterPollAt(age, 0.3, settings);
      expect(Number.isInteger(wait)).toBe(true);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(10);
    }
  });

  it('keeps the minimum for ever when the growth factor is 1 (fixed polling)', () => {
    const settings: PollSettings = {
      minWaitSeconds: 30,
      maxWaitSeconds: 300,
      growthFactor: 1,
      deadlineSeconds: 600,
    };
    const ages = pollAges(settings);
    expect(ages.slice(0, 3)).toEqual([30, 60, 90]);
    expect(ages.at(-1)).toBe(600);
  });
});

describe('the lag promise over a sweep of end times', () => {
  it('notices every unlearned end time (1 s to 24 h) within max(60 s, 25 %) with the default settings', () => {
    const ages = pollAges(DEFAULT_POLL_SETTINGS);
    expect(lagViolations(ages, 1, DEFAULT_POLL_SETTINGS.deadlineSeconds, within(0.25))).toEqual([]);
    // The promise is tight: 10 % would not hold before anything is learned.
    expect(lagViolations(ages, 1, 3600, within(0.1)).length).toBeGreaterThan(0);
  });

  it('keeps the unlearned promise for other growth factors: max(minimum wait, factor - 1)', () => {
    for (const growthFactor of [1.1, 1.5, 2]) {
      const settings: PollSettings = {
        minWaitSeconds: 20,
        maxWaitSeconds: 3600,
        growthFactor,
        deadlineSeconds: 86_400,
      };
      const violations = lagViolations(pollAges(settings), 1, 86_400, within(growthFactor - 1, 20));
      expect({ growthFactor, violations }).toEqual({ growthFactor, violations: [] });
    }
  });

  it.each([
    // [earliest, latest] learned, in seconds: one value, a spread, the widest window trusted.
    [60, 60],
    [270, 330],
    [1620, 1980],
    [900, 1800],
    [450, 900],
    [19_440, 23_760],
  ])(
    'notices every end time within max(60 s, 10 %%) from the first poll to the tail, learned %i..%i s',
    (earliest, latest) => {
      const expected: ExpectedDuration = {
        earliestSeconds: earliest,
        latestSeconds: latest,
        basis: 'domain',
      };
      const ages = pollAges(DEFAULT_POLL_SETTINGS, expected);
      const firstPoll = firstLearnedPollAge(expected, DEFAULT_POLL_SETTINGS);
      expect(firstPoll).toBe(Math.max(60, Math.floor(earliest * (1 - LEARNED_LEAD_FRACTION))));
      expect(ages).toContain(firstPoll);
      const tail = Math.floor(latest * LEARNED_TAIL_FACTOR);
      expect(lagViolations(ages, firstPoll, tail, within(0.1))).toEqual([]);
      // Past the tail (a scan running longer than ever seen), the unlearned promise still holds.
      expect(lagViolations(ages, firstPoll, DEFAULT_POLL_SETTINGS.deadlineSeconds, within(0.25))).toEqual([]);
    },
  );

  it('makes a learned 30-minute scan cheap: at most 6 polls for every end time within 10 % of 30 min', () => {
    const ages = pollAges(DEFAULT_POLL_SETTINGS, {
      earliestSeconds: 1620,
      latestSeconds: 1980,
      basis: 'domain',
    });
    const pollsUntil = (end: number) => ages.findIndex((age) => age >= end) + 1;
    for (let end = 1620; end <= 1980; end++) expect(pollsUntil(end)).toBeLessThanOrEqual(6);
  });

  it('never polls a learned scan more than MAX_DENSE_POLLS beyond the unlearned worst case', () => {
    const settings: PollSettings = { ...DEFAULT_POLL_SETTINGS, deadlineSeconds: 20_000 };
    const unlearned = worstCaseLoopIterations(settings);
    for (const earliest of [1, 7, 60, 333, 1000, 5000, 19_999, 40_000]) {
      for (const ratio of [1, 1.5, 2]) {
        const expected: ExpectedDuration = {
          earliestSeconds: earliest,
          latestSeconds: Math.round(earliest * ratio),
          basis: 'neighbours',
        };
        expect(pollAges(settings, expected).length).toBeLessThanOrEqual(unlearned + MAX_DENSE_POLLS);
      }
    }
  });
});

describe('an end far earlier than learned', () => {
  const learnedAt = (seconds: number): ExpectedDuration => ({
    earliestSeconds: Math.round(seconds * 0.9),
    latestSeconds: Math.round(seconds * 1.1),
    basis: 'domain',
  });

  it('makes no poll before the first learned one: the early-end watcher, outside the execution, notices early ends', () => {
    for (const seconds of [1800, 7200, 6 * 3600]) {
      const expected = learnedAt(seconds);
      const ages = pollAges(DEFAULT_POLL_SETTINGS, expected);
      expect(ages[0], `learned at ${seconds} s`).toBe(firstLearnedPollAge(expected, DEFAULT_POLL_SETTINGS));
      expect(initialPollState(START, DEFAULT_POLL_SETTINGS, expected).nextWaitSeconds).toBe(ages[0]);
    }
  });

  it('counts a wait the watcher ended early as lasting until the end it saw, not the planned wait', () => {
    // Prepare: learned at 6 h, the first wait planned to 17,496 s; the watcher saw the end at 130 s
    const expected = learnedAt(6 * 3600);
    const start = initialPollState(START, DEFAULT_POLL_SETTINGS, expected);

    // Act
    const released = advancePoll(start, START, DEFAULT_POLL_SETTINGS, 130.6);
    const elapsed = advancePoll(start, START, DEFAULT_POLL_SETTINGS);

    // Assess: the learned duration and the deadline see the real age
    expect(start.nextWaitSeconds).toBe(17_496);
    expect(released).toMatchObject({ waitedSeconds: 130, ageAtLastPollSeconds: 130, attempt: 1 });
    // A scan that was not over after all waits out the rest of the plan.
    expect(released.nextWaitSeconds).toBe(17_496 - 130);
    expect(elapsed).toMatchObject({ waitedSeconds: 17_496, ageAtLastPollSeconds: 17_496 });
    // Never past the plan, never before the previous poll.
    expect(advancePoll(start, START, DEFAULT_POLL_SETTINGS, 99_999).waitedSeconds).toBe(17_496);
    expect(advancePoll(released, START, DEFAULT_POLL_SETTINGS, 5).waitedSeconds).toBe(130);
  });
});

describe('initialPollState / advancePoll', () => {
  it('starts with no polls and the minimum wait', () => {
    expect(initialPollState(START, DEFAULT_POLL_SETTINGS)).toEqual({
      attempt: 0,
      nextWaitSeconds: 60,
      waitedSeconds: 0,
      startedAt: '2026-11-20T10:00:00.000Z',
      deadlineExceeded: false,
    });
  });

  it('adds the wait that preceded a poll to waitedSeconds and schedules the next, longer one', () => {
    // Prepare
    const first = initialPollState(START, DEFAULT_POLL_SETTINGS);

    // Act
    const second = advancePoll(first, at(61), DEFAULT_POLL_SETTINGS);
    const third = advancePoll(second, at(400), DEFAULT_POLL_SETTINGS);

    // Assess: the wall clock (400 s) is older than the scheduled 120 s, so it sets the next wait.
    expect(second).toMatchObject({
      attempt: 1,
      waitedSeconds: 60,
      nextWaitSeconds: 60,
      ageAtLastPollSeconds: 61,
      ageAtPreviousPollSeconds: 0,
      deadlineExceeded: false,
    });
    expect(third).toMatchObject({
      attempt: 2,
      waitedSeconds: 120,
      nextWaitSeconds: 100,
      ageAtLastPollSeconds: 400,
      ageAtPreviousPollSeconds: 61,
      deadlineExceeded: false,
    });
    expect(third.startedAt).toBe(first.startedAt);
  });

  it('exceeds the deadline by wall-clock age even when the scheduled waits are short (real AWS)', () => {
    // Prepare
    const settings: PollSettings = { ...DEFAULT_POLL_SETTINGS, deadlineSeconds: 600 };
    const poll = initialPollState(START, settings);

    // Act
    const next = advancePoll(poll, at(601), settings);

    // Assess
    expect(next.waitedSeconds).toBe(60);
    expect(next.deadlineExceeded).toBe(true);
  });

  it('exceeds the deadline by waitedSeconds even when no wall-clock time passed (local overridden waits)', () => {
    // Prepare
    const settings: PollSettings = {
      minWaitSeconds: 10,
      maxWaitSeconds: 10,
      growthFactor: 1,
      deadlineSeconds: 30,
    };
    let poll = initialPollState(START, settings);

    // Act
    const states = [];
    for (let i = 0; i < 3; i++) {
      poll = advancePoll(poll, START, settings);
      states.push(poll.deadlineExceeded);
    }

    // Assess
    expect(states).toEqual([false, false, true]);
    expect(poll.waitedSeconds).toBe(30);
  });

  it('shortens the last wait so the final poll lands on the deadline, not one maximum wait after it', () => {
    // Prepare
    const settings: PollSettings = {
      minWaitSeconds: 100,
      maxWaitSeconds: 100,
      growthFactor: 1,
      deadlineSeconds: 250,
    };
    let poll = initialPollState(START, settings);

    // Act
    poll = advancePoll(poll, START, settings);
    poll = advancePoll(poll, START, settings);

    // Assess
    expect(poll.waitedSeconds).toBe(200);
    expect(poll.nextWaitSeconds).toBe(50);
    expect(advancePoll(poll, START, settings)).toMatchObject({ waitedSeconds: 250, deadlineExceeded: true });
  });
});

describe('history budget', () => {
  it('keeps a 24 h scan with the default settings far below the 25,000-event limit', () => {
    // Act
    const iterations = worstCaseLoopIterations(DEFAULT_POLL_SETTINGS);
    const events = estimateHistoryEvents(DEFAULT_POLL_SETTINGS);

    // Assess: 12 growing waits (60 s .. 1,426 s) then 300 s waits to 86,400 s.
    expect(iterations).toBe(12 + Math.ceil((86_400 - 1426) / 300));
    expect(events).toBeGreaterThan(2_000);
    expect(events).toBeLessThan(5_000);
    expect(events).toBeLessThan(STEP_FUNCTIONS_HISTORY_EVENT_LIMIT / 5);
  });

  it('counts exactly the polls the loop makes until the deadline', () => {
    // Prepare
    const settings: PollSettings = {
      minWaitSeconds: 5,
      maxWaitSeconds: 60,
      growthFactor: 2,
      deadlineSeconds: 1000,
    };
    let poll = initialPollState(START, settings);
    let polls = 0;

    // Act
    while (!poll.deadlineExceeded) {
      poll = advancePoll(poll, START, settings);
      polls++;
    }

    // Assess
    expect(worstCaseLoopIterations(settings)).toBe(polls);
  });

  it('stays fast and bounded for absurd settings (1 s waits for a year)', () => {
    const settings: PollSettings = {
      minWaitSeconds: 1,
      maxWaitSeconds: 1,
      growthFactor: 1,
      deadlineSeconds: 31_536_000,
    };
    expect(worstCaseLoopIterations(settings)).toBe(31_536_000);
  });

  it('rejects settings whose worst case would come close to the history limit, naming the variable', () => {
    // Prepare
    const settings: PollSettings = {
      minWaitSeconds: 5,
      maxWaitSeconds: 10,
      growthFactor: 1.5,
      deadlineSeconds: 86_400,
    };

    // Act
    const problems = pollSettingsProblems(settings);

    // Assess
    expect(problems).toHaveLength(1);
    expect(problems[0]?.setting).toBe('SCAN_DEADLINE_SECONDS');
    expect(problems[0]?.problem).toMatch(/history events/);
  });

  it('accepts the default settings', () => {
    expect(pollSettingsProblems(DEFAULT_POLL_SETTINGS)).toEqual([]);
  });

  it('names the variable of an inconsistent setting', () => {
    const problems = pollSettingsProblems({ ...DEFAULT_POLL_SETTINGS, minWaitSeconds: 400 });
    expect(problems.map((p) => p.setting)).toEqual(['POLL_MAX_WAIT_SECONDS']);
  });
});
