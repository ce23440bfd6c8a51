/**
 * Vendor values in state payloads: the recon's `output` enters a payload only up to
 * `breach.maxInlineValueBytes`; a larger one stays in recon.json and the payload carries its
 * reference. Run through the synthesized BreachReport definition, whose local runner fails a
 * payload past Step Functions' 256 KiB as AWS does (States.DataLimitExceeded, which no Catch sees).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { type LocalBreachOptions, runBreachReport } from '#local/runner/breach-run';
import { MAX_STATE_PAYLOAD_BYTES } from '#local/runner/task-binding';
import { readJson } from '../kit/s3.ts';
import { bed, RESULTS_BUCKET, runOptions, useBreachRun } from './fixture.ts';

let payloads: { state: string; bytes: number; payload: unknown }[];

useBreachRun();
beforeEach(() => {
  payloads = [];
});

function options(overrides: Partial<LocalBreachOptions> = {}): LocalBreachOptions {
  return runOptions({
    onStatePayload: (state, payload) =>
      payloads.push({ state, bytes: Buffer.byteLength(JSON.stringify(payload ?? null)), payload }),
    ...overrides,
  });
}

const PERSON = { name: 'Jane Doe', emails: ['jane@example.com'], requestId: 'r1' };

describe('the recon output in state payloads', () => {
  it.each([
    ['1 MiB', 1024 * 1024],
    ['300 KiB (just past the payload quota)', 300 * 1024],
    ['2 KiB (past the inline bound, far under the quota)', 2 * 1024],
  ])(
    'a %s output ends in a recorded failure, by reference, with every payload bounded',
    async (_label, bytes) => {
      bed.sim.addFault({
        api: 'breach',
        method: 'POST',
        path: '/recon',
        fault: { type: 'oversized-output', bytes },
      });

      const run = await runBreachReport(options(), PERSON);

      // Caught and recorded: never States.DataLimitExceeded, which would skip the Catch.
      expect(run).toMatchObject({ outcome: 'failed', error: 'ArchiveFailed' });
      const failure = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}failure.json`);
      expect(failure).toMatchObject({ failure: 'ArchiveFailed', error: { name: 'VendorResponseError' } });
      expect(JSON.stringify(failure)).toMatch(`output (${bytes} bytes) is not a usable report name`);
      const recon = await readJson<{ output: string }>(
        bed.s3.client,
        RESULTS_BUCKET,
        `${run.outputPrefix}recon.json`,
      );
      expect(recon.output).toHaveLength(bytes);
      const reconExit = payloads.find((p) => p.state === 'Recon' && (p.payload as { recon?: unknown }).recon);
      const summary = (reconExit?.payload as { recon?: object } | undefined)?.recon;
      expect(summary).toMatchObject({
        status: 'success',
        outputRef: { key: `${run.outputPrefix}recon.json`, field: 'output', bytes },
      });
      expect(summary).not.toHaveProperty('reportName');
      for (const { state, bytes: size } of payloads) {
        expect(size, state).toBeLessThanOrEqual(4 * 1024);
      }
    },
  );

  it('archives a report whose name is kept by reference (past a lowered inline bound)', async () => {
    // 200 characters of 2 UTF-8 bytes: a valid report name, 400 bytes, over a 256-byte bound.
    const name = 'é'.repeat(200);
    bed.sim.scriptReportName(name);

    const run = await runBreachReport(options({ limits: { maxInlineValueBytes: 256 } }), PERSON);

    expect(run.outcome).toBe('archived');
    if (run.outcome !== 'archived') return;
    const runManifest = await readJson<{ archive: { manifestKey: string } }>(
      bed.s3.client,
      RESULTS_BUCKET,
      run.result.manifestKey,
    );
    const archived = await readJson<{ reportName: string }>(
      bed.s3.client,
      RESULTS_BUCKET,
      runManifest.archive.manifestKey,
    );
    expect(archived.reportName).toBe(name);
    expect(run.result.reportName).toBeUndefined();
    expect(JSON.stringify(payloads.map((p) => p.payload))).not.toContain(name);
    expect(Math.max(...payloads.map((p) => p.bytes))).toBeLessThan(MAX_STATE_PAYLOAD_BYTES);
  });
});
