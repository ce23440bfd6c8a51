/**
 * Every handler of lambdas/registry.ts bundled as the CDK app bundles it, in ONE esbuild `build()`
 * per process with an entry point per handler: esbuild parses the shared modules (the AWS SDK,
 * zod, lib code) once instead of once per handler. test/platform/handler-bundles.test.ts reads it.
 *
 * Without code splitting each entry gets its own self-contained output, so what each handler
 * pulls in is what a build of that handler alone pulls in (checked against one-by-one builds when
 * this replaced them: the same inputs and the same bytesInOutput for all 21 handlers).
 */
import { relative } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { HANDLERS, handlerEntryPath } from '../../lambdas/registry.ts';
import { handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { handlerBuildOptions } from '../../scripts/handler-bundling.ts';

export interface HandlerBundle {
  readonly handler: string;
  /**
   * Every file esbuild resolved while bundling this handler (repository-relative, `node_modules/…`
   * for packages), including files tree shaking then left out: what a build of this handler alone
   * lists in its metafile's `inputs`.
   */
  readonly inputs: readonly string[];
  /** Bytes each file contributes to this handler's output; only files with a byte in it. */
  readonly bytesInOutput: ReadonlyMap<string, number>;
}

let bundles: Promise<ReadonlyMap<string, HandlerBundle>> | undefined;

/** Every registry handler's bundle, keyed by handler file; bundled once per process. */
export function handlerBundles(): Promise<ReadonlyMap<string, HandlerBundle>> {
  bundles ??= bundleAll();
  return bundles;
}

/** One handler's bundle; throws for a handler the registry does not list. */
export async function handlerBundle(handler: string): Promise<HandlerBundle> {
  const bundle = (await handlerBundles()).get(handler);
  if (bundle === undefined) throw new Error(`lambdas/registry.ts lists no handler '${handler}' to bundle`);
  return bundle;
}

/** The npm packages a handler's bundle resolved (`@scope/name` or `name`), each once. */
export function packagesOf(bundle: HandlerBundle): string[] {
  const names = bundle.inputs
    .map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(names)];
}

/**
 * esbuild's options for PIPELINE_BUNDLING, as NodejsFunction passes them (see bundleAll), output in
 * memory: for a build of one handler (test/rotation/bundled-function.test.ts) or of all.
 */
export const PIPELINE_BUILD_OPTIONS = {
  ...handlerBuildOptions(PIPELINE_BUNDLING),
  write: false,
  // Maps change neither which files are bundled nor their bytes in the output (see bundleAll).
  sourcemap: false,
} as const satisfies BuildOptions;

/**
 * The CLI arguments NodejsFunction passes for PIPELINE_BUNDLING (aws-cdk-lib/aws-lambda-nodejs
 * bundling.js `esbuildArgs`), as build options: bundleAwsSDK leaves no externals. Source maps are
 * left out: they change neither which files are bundled nor their bytes in the output, and would
 * ship 21 maps over esbuild's pipe for nothing.
 */
async function bundleAll(): Promise<ReadonlyMap<string, HandlerBundle>> {
  const handlers = Object.keys(HANDLERS);
  const entries = new Map(
    handlers.map((handler) => [relative(REPO_ROOT, handlerEntry(handlerEntryPath(handler))), handler]),
  );
  const result = await build({
    ...PIPELINE_BUILD_OPTIONS,
    entryPoints: [...entries.keys()],
    outdir: 'bundles',
    outExtension: { '.js': '.mjs' },
    splitting: false,
    metafile: true,
  });
  const byHandler = new Map<string, HandlerBundle>();
  for (const output of Object.values(result.metafile.outputs)) {
    const handler = output.entryPoint === undefined ? undefined : entries.get(output.entryPoint);
    if (handler === undefined || output.entryPoint === undefined) continue;
    const bytesInOutput = new Map<string, number>();
    for (const [path, input] of Object.entries(output.inputs)) {
      if (input.bytesInOutput > 0) bytesInOutput.set(path, input.bytesInOutput);
    }
    byHandler.set(handler, {
      handler,
      inputs: reachableFrom(result.metafile, output.entryPoint),
      bytesInOutput,
    });
  }
  const missing = handlers.filter((handler) => !byHandler.has(handler));
  if (missing.length > 0) throw new Error(`esbuild produced no output for handler(s) ${missing.join(', ')}`);
  return byHandler;
}

/**
 * The files reachable from `entry` through bundled imports. The shared metafile's `inputs` is the
 * union over all entries; walking the import graph recovers one entry's part of it.
 */
function reachableFrom(metafile: Metafile, entry: string): string[] {
  const seen = new Set<string>([entry]);
  const pending = [entry];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    for (const imported of metafile.inputs[path]?.imports ?? []) {
      if (imported.external === true || seen.has(imported.path)) continue;
      seen.add(imported.path);
      pending.push(imported.path);
    }
  }
  return [...seen].sort();
}
