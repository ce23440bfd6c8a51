import { describe, expect, it } from 'vitest';
import {
  advancePoll,
  DEFAULT_POLL_SETTINGS,
  estimateHistoryEvents,
  initialPollState,
  nextWaitSeconds,
  type PollSettings,
  pollSettingsProblems,
  STEP_FUNCTIONS_HISTORY_EVENT_LIMIT,
  worstCaseLoopIterations,
} from '#lambdas/scan/poll-schedule';

const START = new Date('2026-11-20T10:00:00.000Z');
const at = (seconds: number) => new Date(START.getTime() + seconds * 1000);

describe('nextWaitSeconds', () => {
  it.each([
    [0, 15],
    [1, 22],
    [2, 33],
    [3, 50],
    [4, 75],
    [5, 113],
    [6, 170],
    [7, 256],
    [8, 300],
    [9, 300],
    [500, 300],
    [5000, 300],
  ])('waits %i -> %i s with the default settings (geometric from 15, capped at 300)', (attempt, expected) => {
    expect(nextWaitSeconds(attempt, DEFAULT_POLL_SETTINGS)).toBe(expected);
  });

  it('returns whole seconds of at least 1 for fractional settings', () => {
    // Prepare
    const settings = { minWaitSeconds: 1, maxWaitSeconds: 10, growthFactor: 1.3 };

    // Act
    const waits = Array.from({ length: 12 }, (_, attempt) => nextWaitSeconds(attempt, settings));

    // Assess
    for (const wait of waits) {
      expect(Number.isInteger(wait)).toBe(true);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(10);
    }
    expect(waits.at(-1)).toBe(10);
  });

  it('keeps the minimum for ever when the growth factor is 1', () => {
    const settings = { minWaitSeconds: 30, maxWaitSeconds: 300, growthFactor: 1 };
    expect([0, 1, 50].map((a) => nextWaitSeconds(a, settings))).toEqual([30, 30, 30]);
  });
});

describe('initialPollState / advancePoll', () => {
  it('starts with no polls and the minimum wait', () => {
    expect(initialPollState(START, DEFAULT_POLL_SETTINGS)).toEqual({
      attempt: 0,
      nextWaitSeconds: 15,
      waitedSeconds: 0,
      startedAt: '2026-11-20T10:00:00.000Z',
      deadlineExceeded: false,
    });
  });

  it('adds the wait that preceded a poll to waitedSeconds and schedules the next, longer one', () => {
    // Prepare
    const first = initialPollState(START, DEFAULT_POLL_SETTINGS);

    // Act
    const second = advancePoll(first, at(16), DEFAULT_POLL_SETTINGS);
    const third = advancePoll(second, at(40), DEFAULT_POLL_SETTINGS);

    // Assess
    expect(second).toMatchObject({
      attempt: 1,
      waitedSeconds: 15,
      nextWaitSeconds: 22,
      deadlineExceeded: false,
    });
    expect(third).toMatchObject({
      attempt: 2,
      waitedSeconds: 37,
      nextWaitSeconds: 33,
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
    expect(next.waitedSeconds).toBe(15);
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

    // Assess: 8 growing waits (734 s) then 300 s waits to 86,400 s.
    expect(iterations).toBe(8 + Math.ceil((86_400 - 734) / 300));
    expect(events).toBeGreaterThan(2_000);
    expect(events).toBeLessThan(4_000);
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
