/**
 * The folder `npm pack` and `npm publish` run in (scripts/build-package.ts builds `dist/` into it):
 * what a consumer installs and nothing of this repository's tooling.
 *
 * - `package.json`: the consumer's fields only. The repository's own manifest carries scripts,
 *   devDependencies and `imports` aliases that point at files the package does not ship; a
 *   consumer's npm would show them, and a `prepare` or `postinstall` there would run.
 * - `README.md`, `LICENSE`, `CHANGELOG.md`, `API.md` (the API reference `npm run jsii` writes from
 *   the jsii assembly) and `dist/docs/` (every page of docs/): the README's links lead into the
 *   package instead of to files that are not in it.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';

/** Where docs/ goes inside the package. */
const PACKED_DOCS = 'dist/docs';
/** The top-level files the package ships beside dist/. */
const PACKED_FILES = ['README.md', 'LICENSE', 'CHANGELOG.md', 'API.md'] as const;

type Manifest = Record<string, unknown> & {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

/** The manifest fields a consumer's npm reads; everything else stays in the repository. */
const CONSUMER_FIELDS = [
  'name',
  'version',
  'description',
  'license',
  'author',
  'repository',
  'homepage',
  'bugs',
  'keywords',
  'type',
  'engines',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
] as const;

/**
 * The published manifest: the consumer's fields of `repoManifest`, and the entry points dist/ has.
 * Its dependencies are those of `repoManifest` that dist/index.cjs still imports (`imported`, from
 * the build): what the build bundled (zod, every handler's packages) is not the consumer's to
 * install.
 */
export function packageManifest(
  repoManifest: Manifest,
  imported: readonly string[],
): Record<string, unknown> {
  const kept = Object.fromEntries(
    CONSUMER_FIELDS.filter((field) => repoManifest[field] !== undefined).map((field) => [
      field,
      repoManifest[field],
    ]),
  );
  const dependencies = Object.fromEntries(
    Object.entries(repoManifest.dependencies ?? {}).filter(([name]) => imported.includes(name)),
  );
  delete kept.dependencies;
  return {
    ...kept,
    ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}),
    // CommonJS entry and its declarations (dist/types is marked CommonJS): `main` and `types` for
    // node10 resolution, `exports` for everything newer.
    main: './dist/index.cjs',
    types: './dist/types/lib/index.d.ts',
    exports: { '.': { types: './dist/types/lib/index.d.ts', default: './dist/index.cjs' } },
    files: ['dist/', 'CHANGELOG.md', 'API.md'],
  };
}

/**
 * Writes the stage around an already built `<stage>/dist`: the manifest, the top-level files and
 * the docs with their links rewritten for where they now are.
 */
export function writePackageStage(repoRoot: string, stage: string, imported: readonly string[]): void {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Manifest;
  writeFileSync(
    join(stage, 'package.json'),
    `${JSON.stringify(packageManifest(manifest, imported), null, 2)}\n`,
  );
  for (const file of PACKED_FILES) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    writeFileSync(join(stage, file), file.endsWith('.md') ? relink(text, file, file) : text);
  }
  for (const page of markdownUnder(join(repoRoot, 'docs'))) {
    const from = toPosix(relative(repoRoot, page));
    const to = posix.join(PACKED_DOCS, posix.relative('docs', from));
    mkdirSync(dirname(join(stage, to)), { recursive: true });
    writeFileSync(join(stage, to), relink(readFileSync(page, 'utf8'), from, to));
  }
}

/** Where a repository path is in the package, or undefined when the package does not ship it. */
function packedPath(repoPath: string): string | undefined {
  if ((PACKED_FILES as readonly string[]).includes(repoPath)) return repoPath;
  if (repoPath.startsWith('docs/')) return posix.join(PACKED_DOCS, posix.relative('docs', repoPath));
  return undefined;
}

/**
 * Rewrites each relative Markdown link of the page at repository path `from`, now at package path
 * `to`, so it reaches the same page in the package. A link to a file the package does not ship
 * fails the build, naming the page and the link: it would lead nowhere in a consumer's copy.
 */
export function relink(text: string, from: string, to: string): string {
  return text.replace(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g, (whole, target: string, anchor = '') => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return whole;
    const repoTarget = posix.normalize(posix.join(posix.dirname(from), target));
    const packed = packedPath(repoTarget);
    if (packed === undefined) {
      throw new Error(`${from} links to ${target}, which the package does not ship`);
    }
    return `](${posix.relative(posix.dirname(to), packed) || posix.basename(packed)}${anchor})`;
  });
}

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const toPosix = (path: string) => path.split(sep).join('/');
