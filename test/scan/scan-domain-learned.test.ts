/**
 * The synthesized ScanDomain machine learns how long scans take: WriteManifest of one execution
 * stores the duration, and StartScan of the next plans its first wait from it.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import { EARLY_END_SCHEDULE } from '#lambdas/scan/early-end-watch';
import { learnedDurationsKey } from '#lambdas/scan/learned-durations';
import type { DurationRecord } from '#lambdas/scan/learned-record';
import { DEFAULT_POLL_SETTINGS, type PollSettings } from '#lambdas/scan/poll-schedule';
import { LocalTaskTokens, startLocalEarlyEndWatch } from '../../local/runner/early-end-watch.ts';
import { readJson } from '../kit/s3.ts';
import type { Handler, Handlers } from '../local/harness.ts';
import { clients, execute, logger, NOW, RESULTS, s3, useScanExecution } from './scan-execution-fixture.ts';

// The simulator finishes a scan at its sixth status poll, whatever the time.
useScanExecution({ pollsToFinish: 6 });

/** Whole-second waits that grow by a quarter of the age from 1 s: ages 1, 2, 3, 4, 5, 6, ... */
const POLL: PollSettings = {
  minWaitSeconds: 1,
  maxWaitSeconds: 100,
  growthFactor: 1.25,
  deadlineSeconds: 3600,
};

/** Keeps what StartScan returned and every PollScanStatus output of one execution. */
function recording() {
  const seen: { started?: ScanInProgress; polls: ScanInProgress[] } = { polls: [] };
  const keep =
    (handler: Handler | undefined, into: (state: ScanInProgress) => void): Handler =>
    async (input) => {
      if (!handler) throw new Error('handler is not bound');
      const output = await handler(input);
      into(output as unknown as ScanInProgress);
      return output;
    };
  const wrap = (bound: Handlers): Handlers => ({
    ...bound,
    StartScan: keep(bound.StartScan, (state) => {
      seen.started = state;
    }),
    PollScanStatus: keep(bound.PollScanStatus, (state) => {
      seen.polls.push(state);
    }),
  });
  return { seen, wrap };
}

describe('a second scan of a domain', () => {
  it('waits for the duration the first one taught, from the stored manifest step', async () => {
    // Act: the first scan knows nothing; the second runs after the first's WriteManifest
    const first = recording();
    const firstRun = await execute('learned.example.com', { poll: POLL, wrap: first.wrap });
    const learned = await readJson<DurationRecord>(
      s3.client,
      RESULTS,
      learnedDurationsKey('learned.example.com'),
    );
    const second = recording();
    const secondRun = await execute('learned.example.com', { poll: POLL, wrap: second.wrap });

    // Assess: both succeeded through the whole machine
    for (const run of [firstRun, secondRun]) expect(run.path.at(-1)).toBe('WriteManifest');

    // The first polled from the minimum wait, unlearned, and ended between its 5th and 6th poll
    expect(first.seen.started?.poll).toMatchObject({ nextWaitSeconds: 1 });
    expect(first.seen.started?.poll.expected).toBeUndefined();
    expect(first.seen.polls.map((state) => state.poll.ageAtLastPollSeconds)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(learned.samples).toEqual([6]);

    // The second expected about 6 s: its first poll comes shortly before 6 s (at 90 % of it), then
    // densely (early ends are the early-end watcher's, outside the execution)
    expect(second.seen.started?.poll).toMatchObject({
      nextWaitSeconds: 5,
      expected: { earliestSeconds: 6, latestSeconds: 6, basis: 'domain' },
    });
    expect(second.seen.polls.map((state) => state.poll.ageAtLastPollSeconds).slice(0, 2)).toEqual([5, 6]);
    // The expectation rides along the loop to the manifest step.
    expect(second.seen.polls.at(-1)?.poll.expected).toEqual(second.seen.started?.poll.expected);
    // Every billed transition does work or polls: StartScan and its throttle check, three per poll
    // (wait, poll, decide), the Parallel with its three fetches, the manifest, where the run ends.
    for (const [run, seen] of [
      [firstRun, first.seen],
      [secondRun, second.seen],
    ] as const) {
      expect(run.transitions).toBe(2 + 3 * seen.polls.length + 5);
    }
  });

  it('gives a domain never scanned before the expectation of the domains next to it', async () => {
    // Prepare: one scan of a neighbouring domain (in key order) teaches the fallback
    await execute('teacher.example.com', { poll: POLL });

    // Act
    const fresh = recording();
    await execute('fresh.example.com', { poll: POLL, wrap: fresh.wrap });

    // Assess
    expect(fresh.seen.started?.poll.expected).toMatchObject({ basis: 'neighbours' });
  });
});

describe('a scan that ends long before what was learned', () => {
  it('is noticed by the early-end watcher within minutes, not at the learned poll hours later', async () => {
    // Prepare: the domain learned at 6 h; the simulator's scan finishes at its sixth status poll.
    const domain = 'shrunk.example.com';
    const learned: DurationRecord = { schemaVersion: 1, samples: Array(8).fill(21_600) };
    await s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS,
        Key: learnedDurationsKey(domain),
        Body: JSON.stringify(learned),
      }),
    );
    // The watcher's clock runs from the handlers' frozen NOW, a tenth of a second per real
    // millisecond, and passes come every 30 of its seconds, as deployed.
    const tokens = new LocalTaskTokens();
    const since = Date.now();
    const watch = startLocalEarlyEndWatch({
      s3: s3.client,
      resultsBucket: RESULTS,
      scanClient: clients.scan,
      tokens,
      logger,
      tickMs: 300,
      clock: () => new Date(NOW.getTime() + (Date.now() - since) * 100),
      schedule: EARLY_END_SCHEDULE,
    });
    const { seen, wrap } = recording();

    // Act: a wait's heartbeat timeout (its planned length) is 20 s of real time, so only a release
    // ends it within the test.
    const run = await execute(domain, {
      poll: DEFAULT_POLL_SETTINGS,
      wrap,
      tokens,
      waitOverrideMs: 20_000,
    }).finally(() => watch.stop());

    // Assess: the wait was released (no elapsed heartbeat caught), one poll confirmed the end
    expect(run.path.at(-1)).toBe('WriteManifest');
    expect(seen.started?.poll.expected).toMatchObject({ earliestSeconds: 21_600 });
    const elapsed = run.events.filter((event) => event.type === 'StateCaught');
    expect(elapsed).toEqual([]);
    expect(seen.polls).toHaveLength(1);
    // Noticed a few watcher passes after it ended (the sixth status check), far below 5.4 h.
    expect(seen.polls[0]?.poll.ageAtLastPollSeconds).toBeLessThan(600);
    expect(seen.polls[0]?.status?.state).toBe('succeeded');
  });
});
