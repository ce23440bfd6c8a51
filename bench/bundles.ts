/**
 * Bundle figures: every handler bundled exactly as the CDK app bundles it (PIPELINE_BUNDLING from
 * lib/platform/pipeline-function.ts, esbuild with a metafile), zipped like the Lambda asset, and
 * imported by fresh `node --enable-source-maps` processes against an empty ESM handler measured in
 * the same run. Also: undici against Node's built-in HTTP clients, and the source-map options.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build, type Metafile } from 'esbuild';
import { ZipFile } from 'yazl';
import { HANDLERS, handlerEntryPath } from '../lambdas/registry.ts';
import { handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from '../lib/platform/pipeline-function.ts';
import { handlerBuildOptions } from '../scripts/handler-bundling.ts';

const RUNS = 15;
const KiB = 1024;

export interface BundleFigures {
  readonly name: string;
  readonly bundleBytes: number;
  readonly mapBytes: number;
  readonly zipBytes: number;
  readonly undiciBytes: number;
  readonly importMs: number;
}

/** esbuild options equivalent to what NodejsFunction passes for these bundling props. */
async function bundle(
  entry: string,
  outDir: string,
  options: BundlingOptions,
  external: readonly string[] = [],
): Promise<Metafile> {
  const result = await build({
    entryPoints: [entry],
    outfile: join(outDir, 'index.mjs'),
    ...handlerBuildOptions(options),
    metafile: true,
    ...(external.length > 0 ? { external: [...external] } : {}),
  });
  return result.metafile;
}

/** Zips the directory like the Lambda asset (deflate) and returns the archive size. */
async function zipSize(dir: string): Promise<number> {
  const zip = new ZipFile();
  for (const file of await readdir(dir)) zip.addFile(join(dir, file), file);
  zip.end();
  const target = `${dir}.zip`;
  await pipeline(zip.outputStream, createWriteStream(target));
  return (await stat(target)).size;
}

/** Median wall time (ms) of a fresh `node <flags> <file>` process. */
function importMs(file: string, flags: readonly string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const child = spawnSync(process.execPath, [...flags, file], { stdio: ['ignore', 'ignore', 'pipe'] });
    times.push(performance.now() - started);
    if (child.status !== 0) throw new Error(`importing ${file} failed: ${child.stderr.toString()}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

async function measure(
  name: string,
  entry: string,
  work: string,
  options: BundlingOptions,
  flags: readonly string[],
  external: readonly string[] = [],
): Promise<BundleFigures> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  const metafile = await bundle(entry, dir, options, external);
  const bundleBytes = (await stat(join(dir, 'index.mjs'))).size;
  const mapBytes = options.sourceMap ? (await stat(join(dir, 'index.mjs.map'))).size : 0;
  const output = Object.values(metafile.outputs).find((out) => out.entryPoint !== undefined);
  const undiciBytes = Object.entries(output?.inputs ?? {})
    .filter(([path]) => path.includes('node_modules/undici/'))
    .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
  return {
    name,
    bundleBytes,
    mapBytes,
    zipBytes: await zipSize(dir),
    undiciBytes,
    importMs: importMs(join(dir, 'index.mjs'), flags),
  };
}

function kib(bytes: number): string {
  return (bytes / KiB).toFixed(0);
}

const MAPS = ['--enable-source-maps'];

async function emptyBaseline(work: string): Promise<number> {
  const file = join(work, 'empty.mjs');
  await writeFile(file, 'export const handler = async () => ({});\n');
  return importMs(file, MAPS);
}

export async function handlerBundles(): Promise<BundleFigures[]> {
  const work = await mkdtemp(join(tmpdir(), 'bench-bundles-'));
  try {
    const empty = await emptyBaseline(work);
    const handlers = Object.keys(HANDLERS).sort();
    const rows: BundleFigures[] = [];
    process.stdout.write(
      `empty ESM handler: ${empty.toFixed(1)} ms (median of ${RUNS} fresh processes, --enable-source-maps)\n`,
    );
    process.stdout.write(
      'handler              | index.mjs KiB | map KiB | zip KiB | undici KiB | import ms | x empty\n',
    );
    for (const file of handlers) {
      const name = file;
      const row = await measure(name, handlerEntry(handlerEntryPath(file)), work, PIPELINE_BUNDLING, MAPS);
      rows.push(row);
      process.stdout.write(
        `${name.padEnd(20)} | ${kib(row.bundleBytes).padStart(13)} | ${kib(row.mapBytes).padStart(7)} | ` +
          `${kib(row.zipBytes).padStart(7)} | ${kib(row.undiciBytes).padStart(10)} | ` +
          `${row.importMs.toFixed(1).padStart(9)} | ${(row.importMs / empty).toFixed(2).padStart(7)}\n`,
      );
    }
    const largest = Math.max(...rows.map((row) => row.bundleBytes));
    const worst = Math.max(...rows.map((row) => row.importMs / empty));
    process.stdout.write(
      `goals: largest bundle <= 600 KiB -> ${kib(largest)} KiB; import <= 3x empty -> ${worst.toFixed(2)}x\n`,
    );
    return rows;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A tiny module per HTTP client, bundled with the function options: what each one costs. */
export async function httpClients(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'bench-http-'));
  try {
    const modules: Record<string, string> = {
      'undici request':
        "import { request } from 'undici';\nexport const handler = async (url) => (await request(url)).statusCode;\n",
      'node:http request':
        "import { request } from 'node:http';\nexport const handler = (url) => new Promise((ok, fail) => request(url, (res) => ok(res.statusCode)).on('error', fail).end());\n",
      'global fetch': 'export const handler = async (url) => (await fetch(url)).status;\n',
    };
    const empty = await emptyBaseline(work);
    process.stdout.write('client            | index.mjs KiB | zip KiB | import ms | x empty\n');
    for (const [label, source] of Object.entries(modules)) {
      const slug = label.replace(/[^a-z]+/g, '-');
      // Inside the repository so that `undici` resolves from its node_modules.
      const entry = join(REPO_ROOT, 'node_modules', '.cache', `bench-http-${slug}.mjs`);
      await mkdir(join(REPO_ROOT, 'node_modules', '.cache'), { recursive: true });
      await writeFile(entry, source);
      try {
        const row = await measure(slug, entry, work, PIPELINE_BUNDLING, MAPS);
        process.stdout.write(
          `${label.padEnd(17)} | ${kib(row.bundleBytes).padStart(13)} | ${kib(row.zipBytes).padStart(7)} | ` +
            `${row.importMs.toFixed(1).padStart(9)} | ${(row.importMs / empty).toFixed(2).padStart(7)}\n`,
        );
      } finally {
        await rm(entry, { force: true });
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Source-map options on the largest (vendor-calling) handler, and whether traces stay readable. */
export async function sourceMaps(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'bench-maps-'));
  try {
    const variants: { label: string; options: BundlingOptions; flags: string[] }[] = [
      { label: 'map + sourcesContent', options: { ...PIPELINE_BUNDLING, sourcesContent: true }, flags: MAPS },
      {
        label: 'map, no sourcesContent',
        options: { ...PIPELINE_BUNDLING, sourcesContent: false },
        flags: MAPS,
      },
      {
        label: 'no minify, no map',
        options: { ...PIPELINE_BUNDLING, minify: false, sourceMap: false },
        flags: [],
      },
      { label: 'minify, map not shipped', options: { ...PIPELINE_BUNDLING, sourceMap: false }, flags: [] },
    ];
    const empty = await emptyBaseline(work);
    process.stdout.write(
      'variant (start-scan)     | index.mjs KiB | map KiB | zip KiB | import ms | x empty | stack names TS file:line\n',
    );
    for (const [index, variant] of variants.entries()) {
      const row = await measure(
        `v${index}`,
        handlerEntry(handlerEntryPath('start-scan')),
        work,
        variant.options,
        variant.flags,
      );
      const probeDir = join(work, `probe${index}`);
      await mkdir(probeDir, { recursive: true });
      await bundle(join(REPO_ROOT, 'bench', 'stack-probe.ts'), probeDir, variant.options);
      const stack = spawnSync(process.execPath, [
        ...variant.flags,
        join(probeDir, 'index.mjs'),
      ]).stdout.toString();
      const named = /lambdas\/core\/runtime\/env\.ts:\d+/.test(stack);
      process.stdout.write(
        `${variant.label.padEnd(24)} | ${kib(row.bundleBytes).padStart(13)} | ${kib(row.mapBytes).padStart(7)} | ` +
          `${kib(row.zipBytes).padStart(7)} | ${row.importMs.toFixed(1).padStart(9)} | ` +
          `${(row.importMs / empty).toFixed(2).padStart(7)} | ${named ? 'yes' : 'no'}\n`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The AWS SDK bundled (what we ship: the exact version the tests ran) against the SDK the Lambda
 * runtime provides (`@aws-sdk/*` and `@smithy/*` left out of the bundle and loaded from
 * node_modules, as the runtime would load its own copy).
 */
export async function sdkPlacement(): Promise<void> {
  // Inside the repository, so that the external packages resolve from its node_modules.
  await mkdir(join(REPO_ROOT, 'node_modules', '.cache'), { recursive: true });
  const work = await mkdtemp(join(REPO_ROOT, 'node_modules', '.cache', 'bench-sdk-'));
  try {
    const empty = await emptyBaseline(work);
    process.stdout.write(
      'handler (SDK placement)                | index.mjs KiB | zip KiB | import ms | x empty\n',
    );
    for (const handler of ['write-scan-manifest', 'fetch-scan-output']) {
      for (const [label, external] of [
        ['bundled', []],
        ['from the runtime', ['@aws-sdk/*', '@smithy/*']],
      ] as const) {
        const row = await measure(
          `${handler}-${external.length}`,
          handlerEntry(handlerEntryPath(handler)),
          work,
          PIPELINE_BUNDLING,
          MAPS,
          external,
        );
        process.stdout.write(
          `${`${handler}, ${label}`.padEnd(38)} | ${kib(row.bundleBytes).padStart(13)} | ${kib(row.zipBytes).padStart(7)} | ` +
            `${row.importMs.toFixed(1).padStart(9)} | ${(row.importMs / empty).toFixed(2).padStart(7)}\n`,
        );
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
