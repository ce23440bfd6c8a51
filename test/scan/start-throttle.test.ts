/**
 * A start the vendor throttles (HTTP 429) past the transport's own wait: StartScan answers with the
 * wait the state machine makes before starting again, never shorter than the vendor's Retry-After
 * (whole seconds or an HTTP-date; absent or malformed ones too), bounded in rounds and total wait.
 * Against the vendor simulator over loopback; Retry-After values generated.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import type { StartThrottled } from '#lambdas/scan/contracts';
import { createScanDeps, type ScanDeps } from '#lambdas/scan/deps';
import { ScanStartThrottledError } from '#lambdas/scan/errors';
import { createScanSettings } from '#lambdas/scan/settings';
import { startScanOrWait } from '#lambdas/scan/start-scan';
import {
  DEFAULT_START_THROTTLE,
  nextStartThrottle,
  parseStartThrottle,
  type StartThrottleState,
} from '#lambdas/scan/start-throttle';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorSimulator } from '#local/simulator/types';
import { createMemoryLogger } from '../kit/loggers.ts';
import { startSimulator } from '../kit/simulator.ts';
import { RESULTS_BUCKET } from './fixture.ts';

let sim: VendorSimulator;
let client: ScanClient;
const MAX_JITTER = DEFAULT_START_THROTTLE.maxJitterSeconds;
const BUDGET = DEFAULT_START_THROTTLE.maxTotalWaitSeconds;

beforeAll(async () => {
  sim = await startSimulator({ pollsToFinish: 2 });
  // The transport's own retries do not wait here, so every throttle reaches StartScan at once.
  client = new ScanClient({
    baseUrl: sim.url,
    credentials: async () => sim.apiKey,
    retry: { maxAttempts: 2 },
    sleep: async () => {},
  });
});

afterEach(() => sim.clearFaults());

afterAll(async () => {
  await client.close();
  await sim.close();
});

function deps(random: () => number): ScanDeps {
  return {
    ...createScanDeps({
      s3: undefined as never,
      scanClient: client,
      logger: createMemoryLogger(),
      metrics: createMetricsRecorder(),
      settings: createScanSettings({ resultsBucket: RESULTS_BUCKET }),
      clock: () => new Date(),
    }),
    random,
  };
}

/** A Retry-After header as a vendor may send it, and the earliest instant (ms) it allows a retry, if any. */
type Header = {
  readonly value: string | undefined;
  readonly notBefore: (sentAt: number) => number | undefined;
};

const seconds = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 10 * BUDGET }));
const headers: fc.Arbitrary<Header> = fc.oneof(
  seconds.map((n) => ({ value: String(n), notBefore: (sentAt: number) => sentAt + n * 1000 })),
  // An HTTP-date has whole seconds: the instant it names is the bound, from whenever it is read.
  fc.integer({ min: -60, max: 2 * BUDGET }).map((offset) => {
    const at = Math.floor(Date.now() / 1000 + offset) * 1000;
    return { value: new Date(at).toUTCString(), notBefore: () => at };
  }),
  fc.constant({ value: undefined, notBefore: () => undefined }),
  fc
    .constantFrom('soon', '-5', '1.5', '', 'Mon, 99 Foo 2026 25:61:00 GMT', '12abc', '0x10')
    .map((value) => ({ value, notBefore: () => undefined })),
);

describe('a start the vendor keeps throttling', () => {
  it('is waited out by the state machine, never sooner than Retry-After; a wait past the budget fails it by name', async () => {
    let domains = 0;
    await fc.assert(
      fc.asyncProperty(headers, fc.double({ min: 0, max: 1, noNaN: true }), async (header, jitter) => {
        // Prepare
        sim.clearFaults();
        domains += 1;
        const domain = `throttled-${domains}.example.com`;
        sim.addFault({
          api: 'scan',
          method: 'POST',
          path: '/scan',
          times: 10,
          fault: {
            type: 'status',
            status: 429,
            ...(header.value === undefined ? {} : { retryAfter: header.value }),
          },
        });

        // Act
        const outcome = await startScanOrWait(
          deps(() => jitter),
          { domain, runId: 'run-1' },
        ).then(
          (value) => ({ value: value as StartThrottled }),
          (error: unknown) => ({ error }),
        );
        const returnedAt = Date.now();

        // Assess: a 429 created no scan, whatever the outcome
        expect(sim.scansOf(domain)).toEqual([]);
        const notBefore = header.notBefore(returnedAt);
        const asked = notBefore === undefined ? 0 : Math.max(0, notBefore - returnedAt);
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(ScanStartThrottledError);
          expect(String((outcome.error as Error).message)).toMatch(/throttle budget/);
          // Only a wait longer than the budget gives up on the first round (a second of slack for the date's rounding).
          expect(asked).toBeGreaterThan((BUDGET - 1) * 1000);
          return;
        }
        const throttle = outcome.value.startThrottle;
        expect(outcome.value).toMatchObject({ domain, runId: 'run-1' });
        expect(throttle.rounds).toBe(1);
        // The Wait starts after StartScan returns: it ends no sooner than the vendor asked.
        expect(throttle.waitSeconds * 1000).toBeGreaterThanOrEqual(asked);
        expect(throttle.waitSeconds).toBeGreaterThanOrEqual(1);
        expect(throttle.waitSeconds).toBeLessThanOrEqual(throttle.retryAfterSeconds + MAX_JITTER);
        if (notBefore === undefined) expect(throttle.retryAfterSeconds).toBe(0);
        expect(throttle.waitedSeconds).toBe(throttle.waitSeconds);
      }),
      { seed: 45, numRuns: 120 },
    );
  });

  it('stops after the rounds or the total wait allowed, whichever comes first, and never waits past the budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: 0, max: 2 * BUDGET * 1000 }), { nil: undefined }), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (retryAfters, jitter) => {
          let state: StartThrottleState | undefined;
          for (const retryAfterMs of retryAfters) {
            const decision = nextStartThrottle(state, retryAfterMs, () => jitter);
            if (decision.kind === 'give-up') {
              const rounds = (state?.rounds ?? 0) + 1;
              const waited = state?.waitedSeconds ?? 0;
              expect(
                rounds > DEFAULT_START_THROTTLE.maxRounds ||
                  Math.ceil((retryAfterMs ?? 0) / 1000) > BUDGET - waited,
              ).toBe(true);
              return;
            }
            expect(decision.state.waitSeconds * 1000).toBeGreaterThanOrEqual(retryAfterMs ?? 0);
            expect(decision.state.waitedSeconds).toBeLessThanOrEqual(BUDGET);
            expect(decision.state.rounds).toBeLessThanOrEqual(DEFAULT_START_THROTTLE.maxRounds);
            // What the Wait state hands back parses as it was written.
            expect(parseStartThrottle(JSON.parse(JSON.stringify(decision.state)))).toEqual(decision.state);
            state = decision.state;
          }
        },
      ),
      { seed: 45, numRuns: 300 },
    );
  });

  it('refuses a hand-made throttle record, naming the field', () => {
    expect(() =>
      parseStartThrottle({ rounds: 0, waitSeconds: 1, retryAfterSeconds: 0, waitedSeconds: 1 }),
    ).toThrow(/startThrottle\.rounds: must be a whole number of at least 1/);
    expect(() => parseStartThrottle('soon')).toThrow(/startThrottle: must be a JSON object/);
  });
});
