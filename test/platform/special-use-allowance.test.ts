/**
 * `scan.allowSpecialUseDomains` (ALLOW_SPECIAL_USE_DOMAINS): special-use suffixes a lab may scan
 * anyway, honoured the same way at synth (inline lists), at StartScan and in the list parser.
 */
import { describe, expect, it } from 'vitest';
import { parseDomainListText } from '#lambdas/domain-list/domain-list';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createScanSettings, scanSettingsFromEnv } from '#lambdas/scan/settings';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { thrownBy } from '../kit/errors.ts';

const inline = (allow?: string[]) => ({
  scan: allow === undefined ? {} : { allowSpecialUseDomains: allow },
  domainLists: { lab: { domains: ['example.com', 'web.lab.test'] } },
});

describe('special-use allowance', () => {
  it('refuses an inline .test domain at synth, naming the setting that would allow it', () => {
    const error = thrownBy(PipelineConfigError, () => parsePipelineConfig(inline(), 'test'));
    expect(error.message).toContain(
      "pipeline.domainLists.lab.domains[1] is under the special-use top-level domain '.test' (allow it with pipeline.scan.allowSpecialUseDomains)",
    );
  });

  it('accepts it when the configuration allows .test, and passes the allowance on', () => {
    const config = parsePipelineConfig(inline(['test']), 'test');
    expect(config.scan.allowSpecialUseDomains).toEqual(['test']);
  });

  it('never allows localhost or an unknown suffix', () => {
    const error = thrownBy(PipelineConfigError, () =>
      parsePipelineConfig({ scan: { allowSpecialUseDomains: ['localhost', 'com'] } }, 'test'),
    );
    expect(error.message).toContain('pipeline.scan.allowSpecialUseDomains');
  });

  it('reads ALLOW_SPECIAL_USE_DOMAINS at cold start and refuses a bad one naming the variable', () => {
    expect(
      scanSettingsFromEnv({ RESULTS_BUCKET: 'results', ALLOW_SPECIAL_USE_DOMAINS: 'test,internal' })
        .allowSpecialUse,
    ).toEqual(['test', 'internal']);
    const error = thrownBy(ConfigurationError, () =>
      scanSettingsFromEnv({ RESULTS_BUCKET: 'results', ALLOW_SPECIAL_USE_DOMAINS: 'localhost' }),
    );
    expect(error.setting).toBe('ALLOW_SPECIAL_USE_DOMAINS');
  });

  it('lets the list parser accept an allowed suffix and still refuse metadata.google.internal', () => {
    const text = 'web.lab.test\nmetadata.google.internal\ndb.corp.internal\n';
    const strict = parseDomainListText(text);
    const allowed = parseDomainListText(text, { allowSpecialUse: ['test', 'internal'] });
    expect(strict.domains).toEqual([]);
    expect(allowed.domains.map((d) => d.domain)).toEqual(['web.lab.test', 'db.corp.internal']);
    expect(allowed.invalid.map((line) => line.line)).toEqual([2]);
    expect(createScanSettings({ resultsBucket: 'r', allowSpecialUse: ['test'] }).allowSpecialUse).toEqual([
      'test',
    ]);
  });
});
