/**
 * The breach input bounds as settings: defaults and configured values reach exactly the functions
 * that apply them (Recon: the payload bound; ArchiveReport and breach reconciliation: the download
 * and ZIP bounds), and a value out of bounds fails synth naming the setting.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { functionFor, type Synthesized, synth } from '../kit/synth.ts';

const ARCHIVE_VARIABLES = [
  'BREACH_MAX_ARCHIVE_BYTES',
  'BREACH_MAX_UNCOMPRESSED_BYTES',
  'BREACH_MAX_COMPRESSION_RATIO',
];

let defaults: Synthesized;
let configured: Synthesized;

beforeAll(() => {
  defaults = synth({});
  configured = synth({
    breach: {
      maxArchiveBytes: 8 * 1024 * 1024,
      maxUncompressedBytes: 32 * 1024 * 1024,
      maxCompressionRatio: 50,
      maxInlineValueBytes: 512,
      reconcileMaxArchivesPerRun: 7,
    },
  });
});

describe('breach input bounds', () => {
  it('gives ArchiveReport and breach reconciliation the download and ZIP bounds, defaults included', () => {
    for (const handler of ['archive-breach-report', 'reconcile-breach-reports']) {
      expect(functionFor(defaults, handler).environment, handler).toMatchObject({
        BREACH_MAX_ARCHIVE_BYTES: String(64 * 1024 * 1024),
        BREACH_MAX_UNCOMPRESSED_BYTES: String(256 * 1024 * 1024),
        BREACH_MAX_COMPRESSION_RATIO: '100',
      });
      expect(functionFor(configured, handler).environment, handler).toMatchObject({
        BREACH_MAX_ARCHIVE_BYTES: String(8 * 1024 * 1024),
        BREACH_MAX_UNCOMPRESSED_BYTES: String(32 * 1024 * 1024),
        BREACH_MAX_COMPRESSION_RATIO: '50',
      });
      expect(functionFor(configured, handler).environment).not.toHaveProperty(
        'BREACH_MAX_INLINE_VALUE_BYTES',
      );
    }
  });

  it('gives breach reconciliation its per-run budget, and no other function', () => {
    expect(functionFor(defaults, 'reconcile-breach-reports').environment).toMatchObject({
      BREACH_RECONCILE_MAX_ARCHIVES: '1000',
    });
    expect(functionFor(configured, 'reconcile-breach-reports').environment).toMatchObject({
      BREACH_RECONCILE_MAX_ARCHIVES: '7',
    });
    expect(functionFor(configured, 'archive-breach-report').environment).not.toHaveProperty(
      'BREACH_RECONCILE_MAX_ARCHIVES',
    );
  });

  it('gives Recon the payload bound and nothing of the archive', () => {
    expect(functionFor(defaults, 'breach-recon').environment).toMatchObject({
      BREACH_MAX_INLINE_VALUE_BYTES: '1024',
    });
    const recon = functionFor(configured, 'breach-recon').environment;
    expect(recon).toMatchObject({ BREACH_MAX_INLINE_VALUE_BYTES: '512' });
    for (const variable of ARCHIVE_VARIABLES) expect(recon).not.toHaveProperty(variable);
  });

  it.each([
    [{ maxArchiveBytes: 1024 }, /pipeline\.breach\.maxArchiveBytes/],
    [{ maxArchiveBytes: 6 * 1024 ** 3 }, /pipeline\.breach\.maxArchiveBytes/],
    [{ maxUncompressedBytes: 0 }, /pipeline\.breach\.maxUncompressedBytes/],
    [{ maxCompressionRatio: 1 }, /pipeline\.breach\.maxCompressionRatio/],
    [{ maxCompressionRatio: 2.5 }, /pipeline\.breach\.maxCompressionRatio/],
    [{ maxInlineValueBytes: 300 * 1024 }, /pipeline\.breach\.maxInlineValueBytes/],
    [{ reconcileMaxArchivesPerRun: 0 }, /pipeline\.breach\.reconcileMaxArchivesPerRun/],
    [{ reconcileMaxArchivesPerRun: 5_001 }, /pipeline\.breach\.reconcileMaxArchivesPerRun/],
  ])('refuses a bound out of range: %j', (breach, message) => {
    expect(() => synth({ breach })).toThrow(message);
  });
});
