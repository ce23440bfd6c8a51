/**
 * The end of the synthesized BreachReport failure path when RecordBreachFailure itself cannot run:
 * the person's run must still end in BreachReportFailed with its own failure label, so the watchlist
 * summary counts the right failure instead of the recorder's raw task error.
 */
import { describe, expect, it } from 'vitest';
import { runBreachReport } from '#local/runner/breach-run';
import { bed, runOptions, useBreachRun } from './fixture.ts';

useBreachRun({ buckets: [] });

describe('RecordBreachFailure failing itself', () => {
  it('still ends in BreachReportFailed with the failure label, saying it was not recorded and why', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 400 } });
    let recorderCalls = 0;

    const run = await runBreachReport(
      runOptions({
        wrap: (bound) => ({
          ...bound,
          RecordBreachFailure: async () => {
            recorderCalls += 1;
            throw Object.assign(new Error('injected by the test'), { name: 'TypeError' });
          },
        }),
      }),
      { name: 'Jane Doe', emails: ['jane@example.com'], requestId: 'r1' },
    );

    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });
    if (run.outcome !== 'failed') return;
    expect(run.cause).toContain('not recorded: RecordBreachFailure failed with TypeError');
    expect(run.cause).not.toContain('jane@example.com');
    expect(recorderCalls).toBe(1);
  });
});
