/**
 * The compact progress line of a big list says how fast it goes and how long the rest will take:
 * `131/20000 done: … (83s, 1.6/s, about 3h 29m left)`. Drawn over lists, rates and elapsed times.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { createConsoleReporter, pace } from '../../local/output/progress.ts';

/** The reporter's last line for `done` of `total` domains finished `elapsedMs` after it started. */
function lastLine(total: number, done: number, elapsedMs: number): string {
  let clock = 0;
  let text = '';
  const reporter = createConsoleReporter(
    { write: (chunk: string) => (text += chunk) },
    { mode: 'compact', intervalMs: 0, now: () => clock },
  );
  reporter.listener({
    type: 'list-prepared',
    total,
    invalid: 0,
    duplicate: 0,
    resultsPrefix: 'lists/x/r/',
    runId: 'r',
  });
  for (let index = 0; index < done; index++) {
    clock = Math.round(((index + 1) / done) * elapsedMs);
    reporter.listener({ type: 'domain-done', domain: `d${index}.example.com`, result: 'succeeded' });
  }
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('the progress line of a big list', () => {
  it('gives the rate and what it leaves', () => {
    expect(lastLine(20_000, 131, 83_000)).toBe(
      '131/20000 done: 131 succeeded, 0 failed, 0 timed out, 0 rejected; 0 running (83s, 1.6/s, about 3h 29m left)',
    );
    expect(lastLine(50, 5, 300_000)).toMatch(/\(300s, 1\/min, about 45m 00s left\)$/);
    // Too few finished to say, and nothing left to estimate once all are done.
    expect(lastLine(100, 2, 10_000)).toMatch(/\(10s\)$/);
    expect(lastLine(4, 4, 10_000)).toMatch(/\(10s\)$/);
  });

  test.prop([fc.integer({ min: 4, max: 100_000 }), fc.integer({ min: 1, max: 86_400_000 })], { seed: 47 })(
    'an ETA that the rate so far bears out, for any list and elapsed time',
    (total, elapsedMs) => {
      const done = Math.max(3, Math.floor(total / 3));
      const text = pace(done, total, elapsedMs);
      if (done >= total) return expect(text).toBe('');
      const left = /about (?:(\d+)h (\d+)m|(\d+)m (\d+)s|(\d+)s) left$/.exec(text);
      expect(left, text).not.toBeNull();
      const [, h, m1, m2, s2, s3] = left ?? [];
      const seconds = Number(h ?? 0) * 3600 + Number(m1 ?? m2 ?? 0) * 60 + Number(s2 ?? s3 ?? 0);
      const expected = ((total - done) * elapsedMs) / done / 1000;
      // Rounded to the unit shown: a minute once it runs to hours.
      expect(Math.abs(seconds - expected)).toBeLessThanOrEqual(expected >= 3600 ? 60 : 1);
    },
  );
});
