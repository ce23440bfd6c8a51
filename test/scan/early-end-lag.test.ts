/**
 * The lag promise against the real end, whatever was learned: a scan learned at D that ends at any
 * e in [1 s, 3 D] is noticed within max(60 s, 25 % of e), and within max(60 s, 10 % of e) when e is
 * within ±10 % of D. Noticed means the first of: the execution's own poll at or after e (its
 * schedule, poll-schedule.ts), or the early-end watcher's first check at or after e (its passes
 * every 30 s, each a little late, deciding with earlyEndCheckDue) plus the release reaching the
 * execution. Generated with a fixed seed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EARLY_END_SCHEDULE, earlyEndCheckDue } from '#lambdas/scan/early-end-watch';
import { advancePoll, DEFAULT_POLL_SETTINGS, initialPollState } from '#lambdas/scan/poll-schedule';

const START = new Date('2026-11-20T10:00:00.000Z');

/** The execution's first poll at or after `endSeconds` (polls take no time; the clock stays at START). */
function executionNotices(learnedSeconds: number, endSeconds: number): number {
  const expected = {
    earliestSeconds: learnedSeconds,
    latestSeconds: learnedSeconds,
    basis: 'domain' as const,
  };
  let poll = initialPollState(START, DEFAULT_POLL_SETTINGS, expected);
  for (;;) {
    poll = advancePoll(poll, START, DEFAULT_POLL_SETTINGS);
    const age = poll.ageAtLastPollSeconds ?? 0;
    if (age >= endSeconds || poll.deadlineExceeded) return age;
  }
}

interface WatcherTiming {
  /** The scan's age at the watcher's first pass after its start, in [0, 30). */
  readonly phaseSeconds: number;
  /** How late each pass comes after its 30 s slot (invocation jitter, cold start), per pass. */
  readonly lateness: readonly number[];
  /** From the check to the execution's poll (SendTaskSuccess, the next state). */
  readonly releaseSeconds: number;
}

/** When the watcher's release reaches the execution: its first check at or after `endSeconds`. */
function watcherNotices(endSeconds: number, timing: WatcherTiming): number {
  let lastChecked: number | undefined;
  for (let pass = 0; ; pass++) {
    const late = timing.lateness[pass % timing.lateness.length] ?? 0;
    const age = timing.phaseSeconds + pass * EARLY_END_SCHEDULE.passIntervalSeconds + late;
    if (!earlyEndCheckDue(age, lastChecked, EARLY_END_SCHEDULE)) continue;
    if (age >= endSeconds) return age + timing.releaseSeconds;
    lastChecked = age;
  }
}

const allowance = (fraction: number, endSeconds: number) => Math.max(60, fraction * endSeconds);

describe('an end noticed within its allowance, whatever was learned', () => {
  it('holds for every learned duration, end time and watcher timing drawn', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 60, max: 8 * 3600 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.record({
          phaseSeconds: fc.double({ min: 0, max: 29.999, noNaN: true }),
          lateness: fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 1, maxLength: 16 }),
          releaseSeconds: fc.double({ min: 0, max: 2, noNaN: true }),
        }),
        (learnedSeconds, where, timing) => {
          const endSeconds = Math.max(1, Math.round(1 + where * (3 * learnedSeconds - 1)));
          const noticed = Math.min(
            executionNotices(learnedSeconds, endSeconds),
            watcherNotices(endSeconds, timing),
          );
          const lag = noticed - endSeconds;
          expect(lag, `learned ${learnedSeconds} s, ended ${endSeconds} s`).toBeLessThanOrEqual(
            allowance(0.25, endSeconds),
          );
          if (Math.abs(endSeconds - learnedSeconds) <= 0.1 * learnedSeconds) {
            expect(lag, `near D: learned ${learnedSeconds} s, ended ${endSeconds} s`).toBeLessThanOrEqual(
              allowance(0.1, endSeconds),
            );
          }
        },
      ),
      { seed: 45, numRuns: 1500 },
    );
  });

  it('needs the watcher: the execution alone notices an early end of a 6 h scan hours late', () => {
    // The fallback when the watcher is down: the execution polls first shortly before D.
    const lag = executionNotices(6 * 3600, 600) - 600;
    expect(lag).toBeGreaterThan(allowance(0.25, 600));
    expect(
      watcherNotices(600, { phaseSeconds: 0, lateness: [0], releaseSeconds: 1 }) - 600,
    ).toBeLessThanOrEqual(allowance(0.25, 600));
  });
});
