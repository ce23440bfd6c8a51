/**
 * `scan.maxOutputBytes` (SCAN_MAX_OUTPUT_BYTES): the byte cap of a scan output after decoding, from
 * the configuration and the Lambda environment alike.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createScanSettings, SCAN_OUTPUT_LIMIT, scanSettingsFromEnv } from '#lambdas/scan/settings';
import { parsePipelineConfig } from '../../lib/config/parse.ts';

const ENV_BASE = { RESULTS_BUCKET: 'scan-results' };

describe('the scan output cap', () => {
  it('is 1 GiB by default, in code, in the environment and in the configuration', () => {
    expect(SCAN_OUTPUT_LIMIT.default).toBe(1024 ** 3);
    expect(createScanSettings({ resultsBucket: 'b' }).maxOutputBytes).toBe(1024 ** 3);
    expect(scanSettingsFromEnv(ENV_BASE).maxOutputBytes).toBe(1024 ** 3);
    expect(parsePipelineConfig({}, 'test').scan.maxOutputBytes).toBe(1024 ** 3);
  });

  it('takes SCAN_MAX_OUTPUT_BYTES and scan.maxOutputBytes', () => {
    expect(scanSettingsFromEnv({ ...ENV_BASE, SCAN_MAX_OUTPUT_BYTES: '2097152' }).maxOutputBytes).toBe(
      2 * 1024 * 1024,
    );
    expect(parsePipelineConfig({ scan: { maxOutputBytes: 4194304 } }, 'test').scan.maxOutputBytes).toBe(
      4 * 1024 * 1024,
    );
  });

  it.each(['0', '1000', 'lots', String(6 * 1024 ** 4)])(
    'refuses SCAN_MAX_OUTPUT_BYTES=%s, naming it',
    (raw) => {
      expect(() => scanSettingsFromEnv({ ...ENV_BASE, SCAN_MAX_OUTPUT_BYTES: raw })).toThrow(
        ConfigurationError,
      );
      expect(() => scanSettingsFromEnv({ ...ENV_BASE, SCAN_MAX_OUTPUT_BYTES: raw })).toThrow(
        /SCAN_MAX_OUTPUT_BYTES/,
      );
    },
  );
});
