/**
 * The installed package's handler code: one esbuild build of every handler with code splitting
 * (scripts/build-package.ts), so the modules the handlers share (the AWS SDK clients, Powertools, the
 * platform) are shipped once rather than once per handler: the package packs to under a megabyte
 * instead of several. Each function still deploys only what its handler loads: its asset is the
 * handlers folder less every file outside the handler's own closure (its entry and the chunks it
 * imports, as the build's `manifest.json` lists them), so a function's zip is no larger than a
 * bundle of its own would be, and asset fingerprints change only when those files do.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { IgnoreMode } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';

/** The build's record of each handler's closure, relative to the handlers folder. */
export const PREBUILT_MANIFEST = 'manifest.json';

export type PrebuiltManifest = {
  /** Handler file name → its entry file, then every chunk it imports (statically or dynamically). */
  readonly handlers: Readonly<Record<string, readonly string[]>>;
};

/** What a function of the installed package deploys: its asset and the handler within it. */
export type PrebuiltHandlerCode = { readonly code: Code; readonly handler: string };

const manifests = new Map<string, PrebuiltManifest>();
const listings = new Map<string, readonly string[]>();

function manifestOf(dir: string): PrebuiltManifest {
  let manifest = manifests.get(dir);
  if (manifest === undefined) {
    manifest = JSON.parse(readFileSync(join(dir, PREBUILT_MANIFEST), 'utf8')) as PrebuiltManifest;
    manifests.set(dir, manifest);
  }
  return manifest;
}

/**
 * The characters a built file's path may hold: esbuild names the files after the handlers and the
 * modules they split out, plus a hash. None is special to gitignore, so each path excludes exactly
 * itself as a pattern (the gitignore matcher aws-cdk-lib uses has no escape for `*` or `?`).
 */
const PLAIN_PATH = /^[\w.@+-]+(\/[\w.@+-]+)*$/;

/**
 * `file` (relative, `/`-separated) as a gitignore pattern matching that one file, anchored at the
 * asset's root. Throws, naming the file, when its name holds a character gitignore would read as
 * a wildcard, a negation, a comment or an escape.
 */
export function gitignoreLiteral(file: string): string {
  if (!PLAIN_PATH.test(file)) {
    throw new Error(
      `the prebuilt handlers hold a file named ${JSON.stringify(file)}: only letters, digits and . _ @ + - are expected in a built file's path`,
    );
  }
  return `/${file}`;
}

/** Every file under `dir`, relative, with `/` separators (the form asset exclude patterns take). */
function filesOf(dir: string): readonly string[] {
  let files = listings.get(dir);
  if (files === undefined) {
    const walk = (at: string): string[] =>
      readdirSync(at).flatMap((name) => {
        const path = join(at, name);
        return statSync(path).isDirectory() ? walk(path) : [relative(dir, path).split(sep).join('/')];
      });
    files = walk(dir);
    listings.set(dir, files);
  }
  return files;
}

/**
 * The asset of `handlerFile` from the prebuilt `dir`: its closure, with each file's source map when
 * `sourceMaps` is on (the runtime reads them only under `--enable-source-maps`), and nothing else.
 * Throws, naming the handler, when the build did not record it.
 */
export function prebuiltHandlerCode(
  dir: string,
  handlerFile: string,
  sourceMaps: boolean,
): PrebuiltHandlerCode {
  const closure = manifestOf(dir).handlers[handlerFile];
  if (closure === undefined || closure.length === 0) {
    throw new Error(
      `the installed package has no prebuilt handler '${handlerFile}' (${join(dir, PREBUILT_MANIFEST)} does not list it)`,
    );
  }
  const kept = new Set(sourceMaps ? closure.flatMap((file) => [file, `${file}.map`]) : closure);
  const exclude = filesOf(dir)
    .filter((file) => !kept.has(file))
    .map(gitignoreLiteral);
  const [entry] = closure as [string, ...string[]];
  return {
    // Gitignore patterns, not the default globs: aws-cdk-lib compiles gitignore patterns once, but
    // parses every glob afresh for every file it walks (twice: to fingerprint, then to copy). With
    // about 250 built files and as many patterns, the globs cost 17 s of CPU per synthesis of a
    // pipeline; these cost well under one.
    code: Code.fromAsset(dir, { exclude, ignoreMode: IgnoreMode.GIT }),
    handler: `${entry.replace(/\.mjs$/, '')}.handler`,
  };
}
