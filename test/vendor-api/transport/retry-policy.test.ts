/** The transport's retry policy as pure functions: no sockets, no clock, no sleeping. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryableOutcome,
  retryDelay,
} from '#lambdas/vendor-api/transport/retry-policy';

const status = (code: number, retryAfterMs?: number): RetryableOutcome => ({
  kind: 'status',
  status: code,
  requestId: undefined,
  retryAfterMs,
  bodySnippet: undefined,
});
const network = (requestNotSent: boolean): RetryableOutcome => ({
  kind: 'network',
  code: requestNotSent ? 'ECONNREFUSED' : 'ECONNRESET',
  requestNotSent,
  cause: new Error('x'),
});
const base = { policy: DEFAULT_RETRY_POLICY, failures: 1, elapsedMs: 0, random: () => 1 } as const;

describe('retryDelay', () => {
  it('retries a 5xx of an idempotent call with full-jitter backoff that doubles per failure', () => {
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(503) })).toBe(500);
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(503), failures: 3 })).toBe(2000);
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(503), random: () => 0.25 })).toBe(125);
  });

  it('never retries a 5xx or a reset of a non-idempotent call, but does retry a 429 or a connection never made', () => {
    expect(retryDelay({ ...base, mode: 'non-idempotent', outcome: status(503) })).toBeUndefined();
    expect(retryDelay({ ...base, mode: 'non-idempotent', outcome: network(false) })).toBeUndefined();
    expect(retryDelay({ ...base, mode: 'non-idempotent', outcome: status(429) })).toBe(500);
    expect(retryDelay({ ...base, mode: 'non-idempotent', outcome: network(true) })).toBe(500);
  });

  it('never retries a call whose mode is never (rotate)', () => {
    expect(retryDelay({ ...base, mode: 'never', outcome: status(429) })).toBeUndefined();
    expect(retryDelay({ ...base, mode: 'never', outcome: network(true) })).toBeUndefined();
  });

  it('waits at least Retry-After, and gives up when it exceeds maxDelayMs or the elapsed budget', () => {
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(429, 3_000), random: () => 0 })).toBe(
      3_000,
    );
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(429, 3_000), random: () => 1 })).toBe(
      3_500,
    );
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(429, 3_600_000) })).toBeUndefined();
    expect(
      retryDelay({ ...base, mode: 'idempotent', outcome: status(429, 3_000), elapsedMs: 59_000 }),
    ).toBeUndefined();
  });

  it('spreads the retries of scans throttled together over a window after Retry-After, none sooner (generated)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 40, maxLength: 40 }),
        (retryAfterMs, failures, draws) => {
          const delays = draws.map((draw) =>
            retryDelay({
              ...base,
              failures,
              mode: 'non-idempotent',
              outcome: status(429, retryAfterMs),
              random: () => draw,
            }),
          );
          for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(retryAfterMs);
          // Distinct draws give distinct instants, not one synchronised retry.
          const distinctDraws = new Set(draws.map((draw) => Math.floor(draw * 100))).size;
          expect(new Set(delays).size).toBeGreaterThanOrEqual(Math.min(distinctDraws, 2));
        },
      ),
      { seed: 45, numRuns: 200 },
    );
  });

  it('gives up once the attempts are spent', () => {
    expect(retryDelay({ ...base, mode: 'idempotent', outcome: status(503), failures: 5 })).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and ignores junk', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
