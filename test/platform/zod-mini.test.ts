import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { HANDLERS } from '../../lambdas/registry.ts';
import { PipelineConfigError, parsePipelineConfig } from '../../lib/config/index.ts';
import { scheduleSchemaFor } from '../../lib/config/schema.ts';
import { handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from '../../lib/platform/pipeline-function.ts';

/** Mini with the English locale measures at most about 27 KiB per handler; classic was about 444 KiB. */
const ZOD_BUDGET_BYTES = 40 * 1024;

/** Bytes each zod file contributes to `entry` bundled as the CDK app bundles it (not written). */
async function zodInputs(entry: string): Promise<Map<string, number>> {
  const result = await build({
    entryPoints: [entry],
    outfile: 'index.mjs',
    write: false,
    bundle: true,
    platform: 'node',
    target: PIPELINE_BUNDLING.target ?? 'node22',
    format: 'esm',
    minify: PIPELINE_BUNDLING.minify ?? false,
    mainFields: PIPELINE_BUNDLING.mainFields ?? [],
    absWorkingDir: REPO_ROOT,
    metafile: true,
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs).find((out) => out.entryPoint !== undefined);
  const inputs = new Map<string, number>();
  for (const [path, input] of Object.entries(output?.inputs ?? {})) {
    if (path.includes('node_modules/zod/') && input.bytesInOutput > 0) inputs.set(path, input.bytesInOutput);
  }
  return inputs;
}

describe('schemas on zod/mini', () => {
  it('bundles no classic zod into any handler, and zod adds at most 40 KiB to each', async () => {
    // Prepare
    const handlers = Object.keys(HANDLERS).sort();
    expect(handlers).toContain('write-scan-manifest');

    // Act
    const figures = [];
    for (const file of handlers) {
      const inputs = await zodInputs(handlerEntry(file));
      figures.push({
        handler: file,
        classicFiles: [...inputs.keys()].filter((path) => path.includes('/v4/classic/')),
        zodBytes: [...inputs.values()].reduce((sum, bytes) => sum + bytes, 0),
      });
    }

    // Assess
    for (const figure of figures) {
      expect(figure, figure.handler).toMatchObject({ classicFiles: [] });
      expect(figure.zodBytes, figure.handler).toBeLessThanOrEqual(ZOD_BUDGET_BYTES);
    }
  });

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
