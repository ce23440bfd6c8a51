/**
 * Builds the package (`npm run package`): an app that installs its tarball synthesizes with nothing
 * from this repository. Everything goes into a stage folder (package-stage.ts), `build/package/`
 * by default, which `--pack DEST` packs into a tarball in DEST and `npm publish build/package`
 * publishes.
 *
 * - `dist/handlers/`: every handler of lambdas/registry.ts built with PIPELINE_BUNDLING's options in
 *   one esbuild build with code splitting (`<handler>/index.mjs`, shared `chunks/`, maps, and
 *   `manifest.json`); PipelineFunction deploys each handler's own files with `Code.fromAsset`
 *   instead of bundling at synth.
 * - `dist/index.cjs`: lib/index.ts and what it imports, bundled. The consumer's aws-cdk-lib,
 *   constructs and cdk-nag (peer dependencies: one construct tree, one copy of each) stay imports;
 *   every other package is bundled in, so a consumer installs no handler dependency.
 * - `dist/types/`: the declarations a consumer's compiler reads, with nothing but the peers'
 *   types in them (public-declarations.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { HANDLERS, handlerEntryPath } from '../lambdas/registry.ts';
import { LAMBDA_RUNTIME_SETTINGS } from '../lib/platform/function-settings.ts';
import { handlerEntry, REPO_ROOT } from '../lib/platform/pipeline-function.ts';
import {
  gitignoreLiteral,
  PREBUILT_MANIFEST,
  type PrebuiltManifest,
} from '../lib/platform/prebuilt-handlers.ts';
import { handlerBuildOptions } from './handler-bundling.ts';
import { writePackageStage } from './package-stage.ts';
import { writePublicDeclarations } from './public-declarations.ts';

const { values: flags } = parseArgs({ options: { stage: { type: 'string' }, pack: { type: 'string' } } });
/**
 * The folder npm packs (package-stage.ts): `build/package/`, or `--stage DIR` (the package test
 * stages in a temporary folder, so nothing in the working tree changes under a run beside it).
 */
const STAGE = resolve(flags.stage ?? join(REPO_ROOT, 'build/package'));
const DIST = join(STAGE, 'dist');
/** Relative to dist/index.cjs; read by `prebuiltHandlersDir` in lib/platform/pipeline-function.ts. */
const HANDLERS_DIR = './handlers/';

/**
 * Every handler in one build with code splitting: the modules they share are written once, as
 * chunks, and `handlers/manifest.json` records each handler's closure (its entry and every chunk
 * it imports), from which PipelineFunction deploys each function with only its own files
 * (lib/platform/prebuilt-handlers.ts). Source maps are built (without sources) and shipped;
 * a function deploys them only when its pipeline turns them on.
 */
const OLDEST_RUNTIME_TARGET = Object.values(LAMBDA_RUNTIME_SETTINGS)
  .map((setting) => setting.esbuildTarget)
  .sort((a, b) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, '')))[0] as string;

async function buildHandlers(): Promise<void> {
  const handlersDir = join(DIST, HANDLERS_DIR);
  const result = await build({
    ...handlerBuildOptions(),
    entryPoints: Object.keys(HANDLERS).map((handler) => ({
      in: handlerEntry(handlerEntryPath(handler)),
      out: `${handler}/index`,
    })),
    outdir: handlersDir,
    outExtension: { '.js': '.mjs' },
    // One build serves every runtime the `lambdaRuntime` setting offers: the oldest one's syntax.
    target: OLDEST_RUNTIME_TARGET,
    sourcemap: true,
    sourcesContent: false,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
  });
  const outputs = result.metafile.outputs;
  const key = (file: string) => relative(handlersDir, join(REPO_ROOT, file)).split(sep).join('/');
  const byKey = new Map(Object.entries(outputs).map(([file, output]) => [key(file), output]));
  const closureOf = (entry: string): string[] => {
    const seen = new Set<string>();
    const pending = [entry];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      for (const imported of byKey.get(file)?.imports ?? []) {
        if (!imported.external) pending.push(key(imported.path));
      }
    }
    return [entry, ...[...seen].filter((file) => file !== entry).sort()];
  };
  // A consumer's synthesis excludes every file outside a handler's closure by name
  // (prebuilt-handlers.ts): refuse here, not there, a name it could not write as a pattern.
  for (const file of byKey.keys()) gitignoreLiteral(file);
  const handlers = Object.fromEntries(
    Object.keys(HANDLERS).map((handler) => [handler, closureOf(`${handler}/index.mjs`)]),
  );
  const manifest: PrebuiltManifest = { handlers };
  writeFileSync(join(handlersDir, PREBUILT_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * Imported, not bundled: the consumer's copy is the one its construct tree must share. zod is
 * bundled (its CommonJS locale modules do not survive an ES-to-CommonJS import).
 */
const LIBRARY_EXTERNALS = ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs', 'cdk-nag'];

/** The packages dist/index.cjs imports; each must be a dependency or peer dependency. */
async function buildLibrary(): Promise<string[]> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, 'lib/index.ts')],
    outfile: join(DIST, 'index.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node22',
    external: LIBRARY_EXTERNALS,
    // CommonJS, so that its imports of aws-cdk-lib, constructs and cdk-nag (CommonJS packages whose
    // exports Node cannot all name to an ES module) are plain require() calls; an ES module app
    // still imports it by name (esbuild writes the export names where Node's loader finds them).
    format: 'cjs',
    banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
    define: {
      'import.meta.url': 'importMetaUrl',
      SECURITY_PIPELINE_PREBUILT_HANDLERS: JSON.stringify(HANDLERS_DIR),
    },
    absWorkingDir: REPO_ROOT,
    metafile: true,
    logLevel: 'error',
  });
  const imported = Object.values(result.metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => i.path),
  );
  return [...new Set(imported.map((path) => /^(@[^/]+\/)?[^/]+/.exec(path)?.[0] ?? path))].sort();
}

function checkImportsAreDeclared(packages: readonly string[]): void {
  const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const declared = new Set([
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const undeclared = packages.filter((name) => !declared.has(name));
  if (undeclared.length > 0) {
    throw new Error(
      `dist/index.cjs imports ${undeclared.join(', ')}, which package.json lists in neither dependencies nor peerDependencies`,
    );
  }
}

// The stage is rebuilt from nothing; a folder that is not an earlier stage is never emptied.
if (existsSync(STAGE) && readdirSync(STAGE).length > 0 && !existsSync(join(STAGE, 'dist', 'index.cjs'))) {
  throw new Error(
    `--stage ${STAGE}: the folder is not empty and holds no earlier package build; name an empty or new folder`,
  );
}
rmSync(STAGE, { recursive: true, force: true });
await buildHandlers();
const libraryImports = await buildLibrary();
checkImportsAreDeclared(libraryImports);
writePublicDeclarations(REPO_ROOT, join(DIST, 'types'));
writePackageStage(REPO_ROOT, STAGE, libraryImports);
console.log(`built ${STAGE}/: ${Object.keys(HANDLERS).length} handlers, index.cjs, types/, docs/`);
if (flags.pack !== undefined) {
  // The build ran above: npm's lifecycle scripts have nothing left to do in the stage.
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', resolve(flags.pack)], {
    cwd: STAGE,
    stdio: 'inherit',
  });
}
