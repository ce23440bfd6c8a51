/**
 * A report answered as a gzip bomb well under the byte cap: 32 MiB of zeros in about 32 KiB on the
 * wire, at the default `scan.maxOutputBytes` (1 GiB). The byte cap alone stored it; the decoding
 * ratio (`scan.maxDecodingRatio`, default 100) stops it as it inflates, by name, once past its
 * first MiB, never retried, and nothing is stored as the report. A text that merely compresses
 * well (a MiB of repeated log lines) is within the exemption and stored.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createScanSettings, SCAN_DECODING_LIMIT, scanSettingsFromEnv } from '#lambdas/scan/settings';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import { listKeys } from '../kit/s3.ts';
import { execute, failedOutcome, RESULTS, s3, sim, useScanExecution } from './scan-execution-fixture.ts';

useScanExecution();

describe('a scan output that inflates past the decoding ratio', () => {
  it('fails with VendorDecodingRatioError at the default settings, unretried, storing no report', async () => {
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      times: 10,
      fault: { type: 'oversized-body', bytes: 32 * 1024 * 1024, encoding: 'gzip' },
    });

    const run = await execute('bomb.example.com');

    const outcome = failedOutcome(run, 'OutputFetchFailed');
    expect(outcome).toMatchObject({ state: 'failed', error: { name: 'VendorDecodingRatioError' } });
    expect(outcome.error?.message).toMatch(/more than 100 times as many/);
    expect(sim.requestCount('GET /report/{uuid}')).toBe(1);
    const prefix = outcome.outputPrefix ?? '';
    const keys = await listKeys(s3.client, RESULTS, prefix);
    expect(keys.filter((key) => key.startsWith(`${prefix}report.`))).toEqual([]);
  });

  it('stores an output within the ratio (the simulator gzips every report it serves)', async () => {
    const run = await execute('fine.example.com');

    expect(run.result.outcome?.state).toBe('succeeded');
  });
});

describe('scan.maxDecodingRatio', () => {
  it('defaults to 100 and is read from SCAN_MAX_DECODING_RATIO, a bad value named', () => {
    expect(createScanSettings({ resultsBucket: 'scan-results' }).maxDecodingRatio).toBe(
      SCAN_DECODING_LIMIT.default,
    );
    const env = { RESULTS_BUCKET: 'scan-results', [SCAN_VARIABLES.maxDecodingRatio]: '250' };
    expect(scanSettingsFromEnv(env).maxDecodingRatio).toBe(250);
    const bad = () => scanSettingsFromEnv({ ...env, [SCAN_VARIABLES.maxDecodingRatio]: '1' });
    expect(bad).toThrow(ConfigurationError);
    expect(bad).toThrow(/SCAN_MAX_DECODING_RATIO/);
  });
});
