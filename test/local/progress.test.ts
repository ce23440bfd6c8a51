/** The CLI's live lines for vendor retries and give-ups: what a user sees instead of silence. */
import { describe, expect, it } from 'vitest';
import type { VendorAttemptEvent } from '#lambdas/vendor-api/transport/types';
import { describeVendorAttempt } from '../../local/output/progress.ts';

const base: VendorAttemptEvent = {
  operation: 'scan.getStatus',
  attempt: 1,
  maxAttempts: 5,
  failure: 'timeout',
  errorCode: 'TIMEOUT',
  attemptMs: 30_000,
  timeoutMs: 30_000,
};

describe('describeVendorAttempt', () => {
  it('says a request timed out after the timeout, and when it is retried', () => {
    expect(describeVendorAttempt({ type: 'vendor-retry', attempt: { ...base, retryInMs: 420 } })).toBe(
      'scan.getStatus: request timed out after 30 s, retry 1/4 in 0.4 s',
    );
  });

  it('names a network error by its code', () => {
    const attempt = {
      ...base,
      failure: 'network' as const,
      errorCode: 'ECONNRESET',
      attempt: 2,
      retryInMs: 1500,
    };
    expect(describeVendorAttempt({ type: 'vendor-retry', attempt })).toBe(
      'scan.getStatus: ECONNRESET, retry 2/4 in 1.5 s',
    );
  });

  it('shows the Retry-After the vendor sent with a throttled retry', () => {
    const attempt = {
      ...base,
      failure: 'throttled' as const,
      status: 429,
      retryAfterMs: 3000,
      retryInMs: 3000,
    };
    expect(describeVendorAttempt({ type: 'vendor-retry', attempt })).toBe(
      'scan.getStatus: HTTP 429, retry 1/4 in 3 s (Retry-After 3 s)',
    );
  });

  it('says what a run whose timing is replaced sleeps instead of the backoff', () => {
    const attempt = { ...base, failure: 'unavailable' as const, status: 503, retryInMs: 1200 };
    expect(describeVendorAttempt({ type: 'vendor-retry', attempt, overriddenMs: 0 })).toBe(
      'scan.getStatus: HTTP 503, retry 1/4 in 0 ms (overridden; the backoff says 1.2 s)',
    );
  });

  it('says the client gives up once its attempts are spent', () => {
    const attempt = { ...base, failure: 'unavailable' as const, status: 503, attempt: 5 };
    expect(describeVendorAttempt({ type: 'vendor-gave-up', attempt })).toBe(
      'scan.getStatus: HTTP 503 on attempt 5/5; the client gives up',
    );
  });
});
