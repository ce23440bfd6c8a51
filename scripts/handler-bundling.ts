/**
 * esbuild's options for a `BundlingOptions` as NodejsFunction passes them (aws-cdk-lib/
 * aws-lambda-nodejs bundling.js `esbuildArgs`): the package build (scripts/build-package.ts) and the
 * bundle tests (test/kit/handler-bundles.ts) bundle the handlers with exactly what a synth from
 * source would. `bundleAwsSDK` leaves no externals.
 */
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { PIPELINE_BUNDLING, REPO_ROOT } from '../lib/platform/pipeline-function.ts';

export function handlerBuildOptions(options: BundlingOptions = PIPELINE_BUNDLING) {
  return {
    bundle: true,
    platform: 'node',
    target: options.target ?? 'node22',
    format: 'esm',
    minify: options.minify ?? false,
    sourcemap: options.sourceMap ?? false,
    sourcesContent: options.sourcesContent ?? true,
    mainFields: [...(options.mainFields ?? [])],
    ...(options.banner ? { banner: { js: options.banner } } : {}),
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
  } as const satisfies BuildOptions;
}
