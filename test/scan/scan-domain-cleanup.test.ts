/**
 * The optional clean-up branch of the synthesized ScanDomain definition
 * (`scan.deleteAtVendorAfterManifest: true`): DeleteScanAtVendor after the manifest, whose failure
 * must never fail a scan whose outputs are already safe in S3.
 */
import { describe, expect, it } from 'vitest';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { objectExists } from '../kit/s3.ts';
import { enteredStates, executionEnd, retriedStates } from '../local/harness.ts';
import { definition, execute, RESULTS, s3, sim, useScanExecution } from './scan-execution-fixture.ts';

useScanExecution({
  config: {
    ...DEFAULT_PIPELINE_CONFIG,
    scan: { ...DEFAULT_PIPELINE_CONFIG.scan, deleteAtVendorAfterManifest: true },
  },
  pollsToFinish: 1,
});

describe('the synthesized definition with clean-up at the vendor', () => {
  it('deletes after the manifest and catches any clean-up error into success, discarding it', () => {
    // Assess
    expect(definition.States.WriteManifest?.Next).toBe('DeleteScanAtVendor');
    expect(definition.States.DeleteScanAtVendor).toMatchObject({
      Type: 'Task',
      ResultPath: null,
      End: true,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: 'ScanSucceeded' }],
    });
  });
});

describe('a succeeded scan with clean-up at the vendor', () => {
  it('deletes the scan once the manifest is written and still outputs the ScanOutcome', async () => {
    // Act
    const run = await execute('tidy.example.com');

    // Assess
    const end = executionEnd(run.events);
    expect(end.status).toBe('succeeded');
    const outcome = end.output as ScanOutcome;
    expect(outcome).toEqual({
      domain: 'tidy.example.com',
      state: 'succeeded',
      scanUuid: expect.any(String),
      outputPrefix: expect.any(String),
      manifestKey: expect.stringMatching(/manifest\.json$/),
    });
    expect(run.path.slice(-2)).toEqual(['WriteManifest', 'DeleteScanAtVendor']);
    expect(sim.requestCount('DELETE /scan/{uuid}')).toBe(1);
    expect(await objectExists(s3.client, RESULTS, outcome.manifestKey ?? '')).toBe(true);
  });

  it('succeeds with the same output when the clean-up keeps failing after its retries', async () => {
    // Prepare
    sim.addFault({
      api: 'scan',
      method: 'DELETE',
      path: '/scan/',
      times: Number.POSITIVE_INFINITY,
      fault: { type: 'status', status: 503 },
    });

    // Act
    const run = await execute('messy.example.com');

    // Assess: 1 + 5 invocations of 2 client attempts each, then the Catch leads to ScanSucceeded
    const end = executionEnd(run.events);
    expect(end.status).toBe('succeeded');
    expect(end.output).toMatchObject({ domain: 'messy.example.com', state: 'succeeded' });
    expect(end.output).not.toHaveProperty('caught');
    expect(retriedStates(run.events)).toEqual(Array.from({ length: 5 }, () => 'DeleteScanAtVendor'));
    // Billed as Step Functions bills a Standard workflow: each retry is one more transition.
    expect(run.transitions).toBe(enteredStates(run.events).length + 5);
    expect(sim.requestCount('DELETE /scan/{uuid}')).toBe(12);
    expect(run.result.outcome?.state).toBe('succeeded');
    expect(await objectExists(s3.client, RESULTS, end.output?.manifestKey ?? '')).toBe(true);
  });
});
