import { describe, expect, it } from 'vitest';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { scheduleSchemaFor } from '../../lib/config/schema.ts';

// What zod adds to each bundle is checked in test/platform/handler-bundles.test.ts.
describe('schemas on zod/mini', () => {
  it("words zod's own checks in English, as classic did: a special-use suffix that is not a string", () => {
    // Prepare
    const raw = { scan: { allowSpecialUseDomains: ['test', 7] } };

    // Act
    const act = () => parsePipelineConfig(raw, 'test.json');

    // Assess
    expect(act).toThrow(PipelineConfigError);
    expect(act).toThrow(
      'pipeline.scan.allowSpecialUseDomains[1] Invalid input: expected string, received number',
    );
  });

  it("words zod's own checks in English, as classic did: a schedule name that does not match", () => {
    // Prepare
    const schema = scheduleSchemaFor([]);

    // Act
    const result = schema.safeParse({ name: 'two words', expression: 'rate(1 day)' });

    // Assess
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ['name'],
      message: 'Invalid string: must match pattern /^[A-Za-z0-9_-]{1,64}$/',
    });
  });
});
