/**
 * A recon request the vendor throttles (HTTP 429): the synthesized BreachReport machine waits in
 * WaitForReconSlot for what Recon computed, the vendor's Retry-After plus jitter, never sooner; no
 * Step Functions Retry (whose jitter may come back sooner) retries it. Retry-After values generated
 * (whole seconds, HTTP-dates, absent or malformed), run locally against the simulator and s3rver.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReconThrottled } from '#lambdas/breach/contracts';
import { DEFAULT_THROTTLE_WAIT } from '#lambdas/platform/runs/throttle-wait';
import { runBreachReport } from '#local/runner/breach-run';
import type { AslState } from '#local/synth/definitions';
import { readJson } from '../kit/s3.ts';
import { bed, definition, RESULTS_BUCKET, runOptions, useBreachRun } from './fixture.ts';

useBreachRun();

const BUDGET = DEFAULT_THROTTLE_WAIT.maxTotalWaitSeconds;
const MAX_JITTER = DEFAULT_THROTTLE_WAIT.maxJitterSeconds;

/** A Retry-After header as a vendor may send it, and the earliest instant (ms) it allows a retry, if any. */
type Header = {
  readonly value: string | undefined;
  readonly notBefore: (sentAt: number) => number | undefined;
};

const headers: fc.Arbitrary<Header> = fc.oneof(
  fc
    .oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 * BUDGET }))
    .map((n) => ({ value: String(n), notBefore: (sentAt: number) => sentAt + n * 1000 })),
  // An HTTP-date has whole seconds: the instant it names is the bound, from whenever it is read.
  fc.integer({ min: -60, max: 2 * BUDGET }).map((offset) => {
    const at = Math.floor(Date.now() / 1000 + offset) * 1000;
    return { value: new Date(at).toUTCString(), notBefore: () => at };
  }),
  fc.constant({ value: undefined, notBefore: () => undefined }),
  fc
    .constantFrom('soon', '-5', '1.5', '', 'Mon, 99 Foo 2026 25:61:00 GMT')
    .map((value) => ({ value, notBefore: () => undefined })),
);

describe('BreachReport, a recon the vendor throttles', () => {
  it('has no Retry on a vendor 429 at Recon: the throttle routes to WaitForReconSlot, which waits what Recon computed', () => {
    const states = definition.States as Record<string, AslState>;
    const rules = (states.Recon?.Retry ?? []) as Array<{ ErrorEquals: string[] }>;
    const retried = rules.flatMap((rule) => rule.ErrorEquals);
    expect(retried).not.toContain('VendorThrottledError');
    expect(retried).not.toContain('States.ALL');
    const choice = states['BreachesFound?'] as unknown as {
      Choices: Array<{ Variable: string; IsPresent?: boolean; Next: string }>;
    };
    expect(choice.Choices[0]).toEqual({
      Variable: '$.reconThrottle',
      IsPresent: true,
      Next: 'WaitForReconSlot',
    });
    expect(states.WaitForReconSlot).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.reconThrottle.waitSeconds',
      Next: 'Recon',
    });
  });

  it('waits at least the vendor’s Retry-After before each new request, makes one report, or fails by name past the budget', async () => {
    let people = 0;
    await fc.assert(
      fc.asyncProperty(headers, fc.integer({ min: 1, max: 3 }), async (header, throttles) => {
        // Prepare
        bed.sim.clearFaults();
        people += 1;
        bed.sim.addFault({
          api: 'breach',
          method: 'POST',
          path: '/recon',
          times: throttles,
          fault: {
            type: 'status',
            status: 429,
            ...(header.value === undefined ? {} : { retryAfter: header.value }),
          },
        });
        const sentBefore = bed.sim.requestCount('POST /recon');
        const waits: { throttle: ReconThrottled['reconThrottle']; returnedAt: number }[] = [];

        // Act: the Wait itself is not slept through here; what it would wait is what is checked
        const run = await runBreachReport(
          runOptions({
            waitOverrideMs: 0,
            wrap: (bound) => ({
              ...bound,
              Recon: async (input) => {
                const output = await (bound.Recon as NonNullable<typeof bound.Recon>)(input);
                const throttled = (output as Partial<ReconThrottled>).reconThrottle;
                if (throttled) waits.push({ throttle: throttled, returnedAt: Date.now() });
                return output;
              },
            }),
          }),
          { name: `Person ${people}`, emails: [`p${people}@example.com`], requestId: 'r1' },
        );

        // Assess: every wait the machine made ends no sooner than the vendor asked
        for (const [index, { throttle, returnedAt }] of waits.entries()) {
          const notBefore = header.notBefore(returnedAt);
          const asked = notBefore === undefined ? 0 : Math.max(0, notBefore - returnedAt);
          expect(throttle.rounds).toBe(index + 1);
          expect(throttle.waitSeconds * 1000).toBeGreaterThanOrEqual(asked);
          expect(throttle.waitSeconds).toBeGreaterThanOrEqual(1);
          expect(throttle.waitSeconds).toBeLessThanOrEqual(throttle.retryAfterSeconds + MAX_JITTER);
          expect(throttle.waitedSeconds).toBeLessThanOrEqual(BUDGET);
        }
        if (run.outcome === 'failed') {
          // Only a Retry-After past what is left of the budget gives up, by name, with no report made.
          expect(run.error).toBe('ReconFailed');
          const failure = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}failure.json`);
          expect(failure).toMatchObject({ error: { name: 'ReconThrottledError' } });
          const now = Date.now();
          const waited = waits.at(-1)?.throttle.waitedSeconds ?? 0;
          // (A second of slack for an HTTP-date's rounding.)
          expect((header.notBefore(now) ?? now) - now).toBeGreaterThan((BUDGET - waited - 1) * 1000);
          expect(bed.sim.requestCount('POST /recon') - sentBefore).toBe(waits.length + 1);
          return;
        }
        // Every throttled request was waited out in the machine, then one report was made.
        expect(waits).toHaveLength(throttles);
        expect(['archived', 'no_results']).toContain(run.outcome);
        expect(bed.sim.requestCount('POST /recon') - sentBefore).toBe(throttles + 1);
      }),
      { seed: 45, numRuns: 30 },
    );
  }, 180_000);
});
