/**
 * The construct a consumer installs (dist/index.cjs, built from lib/index.ts by
 * scripts/build-package.ts) holds the constructs, the configuration schema and the plain-data
 * settings they share with the handlers, and no Lambda runtime: no AWS SDK client, no Powertools,
 * no parser a handler uses. Synthesis never needs them, and each one pulled in by a shared constant
 * made the bundle megabytes (it was 1.7 MB when breach/limits.ts imported the S3 upload code for
 * one number). Checked over everything lib/index.ts reaches, so a new import of a handler's module
 * from lib/ fails here.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';

/** The packages the construct may bundle: zod, whose schema is the props type. */
const BUNDLED_PACKAGES = new Set(['zod']);
/** Imported from the consumer's own copy, never bundled (scripts/build-package.ts). */
const EXTERNALS = ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs', 'cdk-nag'];

async function constructBundle() {
  const result = await build({
    entryPoints: [join(REPO_ROOT, 'lib/index.ts')],
    bundle: true,
    write: false,
    outfile: 'index.cjs',
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    external: EXTERNALS,
    define: { SECURITY_PIPELINE_PREBUILT_HANDLERS: '"handlers"' },
    absWorkingDir: REPO_ROOT,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

describe('the installable construct bundle', () => {
  it('bundles no package but zod, and no Lambda entry or deps module', async () => {
    const metafile = await constructBundle();
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('lib/security-pipeline.ts');

    const packages = new Set(
      inputs.flatMap((path) => {
        const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
        return match?.[1] === undefined ? [] : [match[1]];
      }),
    );
    expect([...packages].filter((name) => !BUNDLED_PACKAGES.has(name))).toEqual([]);
    // A workflow's deps module builds its clients: synthesis must not reach one.
    expect(inputs.filter((path) => /^lambdas\/[^/]+\/(.*-)?deps\.ts$/.test(path))).toEqual([]);
  });

  it('stays small: under 512 KiB (1.7 MB when a shared constant pulled in the S3 client)', async () => {
    const metafile = await constructBundle();
    const [output] = Object.values(metafile.outputs);
    expect(output?.bytes).toBeGreaterThan(50 * 1024);
    expect(output?.bytes).toBeLessThan(512 * 1024);
  });
});
