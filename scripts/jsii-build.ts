/**
 * Builds the jsii package of `SecurityPipeline` (jsii/): stages its facade (jsii/src/index.ts)
 * beside the construct's own props and metric enums (lib/construct/, their `.ts` import
 * specifiers dropped, which jsii refuses), compiles the assembly with jsii and generates the
 * Python sources with `jsii-pacmak --code-only`. With `--implementation DIR` (a built dist/: `npm run package` leaves one in build/package/dist), that
 * is bundled as the facade's `implementation/`.
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
  cpSync(join(REPO_ROOT, 'jsii/package.json'), join(packageDir, 'package.json'));
  cpSync(join(REPO_ROOT, 'jsii/src/index.ts'), join(src, 'index.ts'));
  // PyPI needs a README in the package; the repository's covers the construct.
  cpSync(join(REPO_ROOT, 'README.md'), join(packageDir, 'README.md'));
  for (const name of JSII_SOURCES) {
    const source = readFileSync(join(REPO_ROOT, 'lib/construct', `${name}.ts`), 'utf8');
    writeFileSync(join(src, `${name}.ts`), source.replace(/(from '\.\/[\w-]+)\.ts'/g, "$1'"));
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { out: { type: 'string' }, implementation: { type: 'string' } },
  });
  const build = buildJsiiPackage({
    ...(values.out === undefined ? {} : { outDir: values.out }),
    ...(values.implementation === undefined ? {} : { implementation: values.implementation }),
  });
  console.log(`assembly: ${build.assembly}\npython: ${build.pythonDir}`);
}
