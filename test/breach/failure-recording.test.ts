/**
 * The end of the synthesized BreachReport failure path when RecordBreachFailure itself cannot run:
 * the person's run must still end in BreachReportFailed with its own failure label, so the watchlist
 * summary counts the right failure instead of the recorder's raw task error.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBreachReport } from '#local/breach-run';
import { type AslDefinition, breachReportStateMachine } from '#local/definitions';
import { cachedTemplate } from '#local/synth-cache';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/index.ts';
import { type BreachTestBed, IDENTITY_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

let definition: AslDefinition;
let bed: BreachTestBed;

beforeAll(async () => {
  definition = breachReportStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
}, 180_000);
beforeEach(async () => {
  bed = await startBreachBed({ buckets: [] });
});
afterEach(async () => {
  await bed.close();
});

describe('RecordBreachFailure failing itself', () => {
  it('still ends in BreachReportFailed with the failure label, saying it was not recorded and why', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 400 } });
    let recorderCalls = 0;

    const run = await runBreachReport(
      {
        s3: bed.s3.client,
        resultsBucket: RESULTS_BUCKET,
        definition,
        breachClient: bed.client,
        maxEmails: 50,
        identityKey: IDENTITY_KEY,
        logger: bed.logger,
        metrics: bed.metrics,
        retryIntervalMs: 1,
        wrap: (bound) => ({
          ...bound,
          RecordBreachFailure: async () => {
            recorderCalls += 1;
            throw Object.assign(new Error('injected by the test'), { name: 'TypeError' });
          },
        }),
      },
      { name: 'Jane Doe', emails: ['jane@example.com'], requestId: 'r1' },
    );

    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });
    if (run.outcome !== 'failed') return;
    expect(run.cause).toContain('not recorded: RecordBreachFailure failed with TypeError');
    expect(run.cause).not.toContain('jane@example.com');
    expect(recorderCalls).toBe(1);
  });
});
