/**
 * Builds the jsii package of `SecurityPipeline` (jsii/): stages its facade (jsii/src/index.ts)
 * beside the construct's own props and metric enums (lib/construct/, their `.ts` import
 * specifiers dropped, which jsii refuses, and their core types imported from `aws-cdk-lib/core`),
 * compiles the assembly with jsii and generates the Python sources with `jsii-pacmak --code-only`.
 * With `--implementation DIR` (a built dist/: `npm run package` leaves one in build/package/dist),
 * that is bundled as the facade's `implementation/`. Then writes API.md, the API reference jsii-docgen
 * makes of the assembly (as Construct Hub shows it), which the package ships.
 *
 * Usage: npm run jsii -- [--out DIR] [--implementation DIR]
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../lib/platform/pipeline-function.ts';

/** The construct's files jsii compiles as they are: plain interfaces and enums of CDK's types. */
export const JSII_SOURCES = [
  'props',
  'scan-props',
  'breach-props',
  'resource-props',
  'schedule-props',
  'metric-dimensions',
] as const;

/**
 * The fields the jsii package takes from the TypeScript package's manifest, so both packages (and
 * the Python one jsii-pacmak makes from them) are published under one version, licence, author
 * and repository, kept in one place.
 */
export const SHARED_MANIFEST_FIELDS = [
  'version',
  'license',
  'author',
  'repository',
  'homepage',
  'bugs',
] as const;

type Manifest = Record<string, unknown>;

const readManifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest;

/** jsii/package.json with the shared fields of the repository's package.json. */
export function jsiiManifest(repoManifest: Manifest, facadeManifest: Manifest): Manifest {
  const shared = SHARED_MANIFEST_FIELDS.filter((field) => repoManifest[field] !== undefined);
  const missing = SHARED_MANIFEST_FIELDS.filter((field) => repoManifest[field] === undefined);
  if (missing.length > 0)
    throw new Error(`package.json has no ${missing.join(', ')}: jsii needs them to publish`);
  return { ...facadeManifest, ...Object.fromEntries(shared.map((field) => [field, repoManifest[field]])) };
}

/**
 * A construct source as jsii compiles it: its `.ts` import specifiers dropped, and its imports from
 * aws-cdk-lib's root module taken from `aws-cdk-lib/core`, which declares the same types (the root
 * re-exports core and every service module). jsii's compiler would otherwise parse every
 * declaration file of aws-cdk-lib, 2,600 of them, for the three core types the props name: 12 s
 * of CPU for the compile, 5 s this way, and the same assembly.
 */
function forJsii(source: string): string {
  return source
    .replace(/(from '\.\/[\w-]+)\.ts'/g, "$1'")
    .replace(/from 'aws-cdk-lib';/g, "from 'aws-cdk-lib/core';");
}

export interface JsiiBuild {
  /** The staged package: `.jsii` (the assembly), `lib/`, `dist/python/`. */
  readonly packageDir: string;
  readonly assembly: string;
  readonly pythonDir: string;
}

/** Stages, compiles and generates into `outDir` (a new temporary folder when not given). */
export function buildJsiiPackage(
  options: { readonly outDir?: string; readonly implementation?: string } = {},
): JsiiBuild {
  const packageDir = options.outDir ?? mkdtempSync(join(tmpdir(), 'security-pipeline-jsii-'));
  const src = join(packageDir, 'src');
  mkdirSync(src, { recursive: true });
  const manifest = jsiiManifest(
    readManifest(join(REPO_ROOT, 'package.json')),
    readManifest(join(REPO_ROOT, 'jsii/package.json')),
  );
  writeFileSync(join(packageDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  cpSync(join(REPO_ROOT, 'jsii/src/index.ts'), join(src, 'index.ts'));
  // PyPI needs a README in the package; the repository's covers the construct.
  cpSync(join(REPO_ROOT, 'README.md'), join(packageDir, 'README.md'));
  for (const name of JSII_SOURCES) {
    const source = readFileSync(join(REPO_ROOT, 'lib/construct', `${name}.ts`), 'utf8');
    writeFileSync(join(src, `${name}.ts`), forJsii(source));
  }
  if (options.implementation !== undefined) {
    cpSync(options.implementation, join(packageDir, 'implementation'), { recursive: true });
  }
  // aws-cdk-lib and constructs (the peers jsii reads the types of) from this repository.
  if (!existsSync(join(packageDir, 'node_modules')))
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(packageDir, 'node_modules'), 'dir');
  const bin = (tool: string) => join(REPO_ROOT, 'node_modules/.bin', tool);
  const run = (tool: string, args: readonly string[]) =>
    execFileSync(bin(tool), args, { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  // The peers are this repository's devDependencies; jsii's advice to repeat them there is moot.
  run('jsii', ['--silence-warnings', 'metadata/missing-dev-dependency']);
  run('jsii-pacmak', ['--code-only', '--targets', 'python']);
  return {
    packageDir,
    assembly: join(packageDir, '.jsii'),
    pythonDir: join(packageDir, 'dist/python'),
  };
}

/** Where the API reference is kept (and shipped from): the repository's root. */
export const API_REFERENCE = 'API.md';

/**
 * jsii-docgen's TypeScript reference of the built assembly. Its examples import the construct
 * from the package a TypeScript app installs (the repository's name), not from the facade.
 */
export function apiReference(build: JsiiBuild): string {
  const output = join(build.packageDir, API_REFERENCE);
  execFileSync(join(REPO_ROOT, 'node_modules/.bin/jsii-docgen'), ['--output', output], {
    cwd: build.packageDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const facade = packageName(join(build.packageDir, 'package.json'));
  const typescript = packageName(join(REPO_ROOT, 'package.json'));
  return readFileSync(output, 'utf8').replaceAll(`from '${facade}'`, `from '${typescript}'`);
}

const packageName = (manifest: string) =>
  (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, implementation: { type: 'string' } },
  });
  const build = buildJsiiPackage({
    ...(values.out === undefined ? {} : { outDir: values.out }),
    ...(values.implementation === undefined ? {} : { implementation: values.implementation }),
  });
  writeFileSync(join(REPO_ROOT, API_REFERENCE), apiReference(build));
  console.log(`assembly: ${build.assembly}\npython: ${build.pythonDir}\nwrote ${API_REFERENCE}`);
}
