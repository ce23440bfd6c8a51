/**
 * A CDK app outside this repository that installs the packed tarball: a temporary folder with its
 * own package.json and lockfile, installed by `npm ci --offline` from the npm cache that this
 * repository's `npm ci` filled (so the same aws-cdk-lib, constructs, cdk-nag and zod versions),
 * without network and without anything from this repository's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export type LockEntry = {
  version?: string;
  integrity?: string;
  resolved?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optional?: boolean;
  dev?: boolean;
  peer?: boolean;
  [key: string]: unknown;
};

/** What the app installs besides the tarball: the construct's peer dependencies. */
export const CONSUMER_DEPENDENCIES = ['aws-cdk-lib', 'constructs', 'cdk-nag'] as const;

/** A packed tarball and the files npm put in it (`npm publish` selects the same files). */
export interface PackedTarball {
  readonly tarball: string;
  /** The files' paths inside the package (`package.json`, `dist/index.cjs`, …). */
  readonly files: readonly string[];
}

/**
 * `npm run package`'s tarball, packed from a stage that scripts/build-package.ts built outside the
 * working tree (package-stage-once.ts), so an `npm run package` in the repository meanwhile is
 * undisturbed, and so is this. The build ran already: npm's lifecycle scripts have nothing to do.
 * Returns the tarball's path in `destination` and the files npm packed.
 */
export function packStage(stage: string, destination: string): PackedTarball {
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
    cwd: stage,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [packed] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  if (packed === undefined || !packed.filename.endsWith('.tgz')) {
    throw new Error(`npm pack reported no tarball:\n${out}`);
  }
  return { tarball: join(destination, packed.filename), files: packed.files.map((file) => file.path) };
}

/**
 * Creates the app folder: package.json naming the tarball and the peers, and a lockfile whose
 * entries are this repository's (same versions and integrity hashes, so the cache serves them).
 */
export function createConsumerApp(
  repoRoot: string,
  appDir: string,
  tarball: string,
  installed: readonly string[] = CONSUMER_DEPENDENCIES,
): void {
  mkdirSync(appDir, { recursive: true });
  const repoLock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  // The manifest the tarball carries (the published one), not the repository's.
  const manifest = JSON.parse(
    execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  ) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    peerDependencies: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  const tarballSpec = `file:${tarball}`;
  const dependencies: Record<string, string> = { [manifest.name]: tarballSpec };
  for (const name of installed) {
    dependencies[name] = repoLock.packages[`node_modules/${name}`]?.version ?? fail(name);
  }
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer-app', dependencies },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: tarballSpec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      ...(manifest.dependencies ? { dependencies: manifest.dependencies } : {}),
      peerDependencies: manifest.peerDependencies,
      ...(manifest.peerDependenciesMeta ? { peerDependenciesMeta: manifest.peerDependenciesMeta } : {}),
    },
  };
  const roots = [...installed, ...Object.keys(manifest.dependencies ?? {})];
  for (const [path, entry] of lockClosure(repoLock.packages, roots)) {
    const { dev: _dev, peer: _peer, ...kept } = entry;
    packages[path] = kept;
  }
  writeFileSync(
    join(appDir, 'package.json'),
    `${JSON.stringify({ name: 'consumer-app', private: true, type: 'module', dependencies }, null, 2)}\n`,
  );
  writeFileSync(
    join(appDir, 'package-lock.json'),
    `${JSON.stringify({ name: 'consumer-app', lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

/** `npm ci --offline` in the app folder: the cache or nothing. */
export function installOffline(appDir: string): void {
  npmOffline(appDir, 'ci');
}

/**
 * `npm install --offline` after createConsumerApp rewrote an installed app's package.json and
 * lockfile with more dependencies: npm adds the packages the lockfile now names (from the cache, by
 * their integrity hashes) and leaves the installed ones, the tree a fresh `npm ci` would make.
 */
export function installAddedOffline(appDir: string): void {
  npmOffline(appDir, 'install');
}

function npmOffline(appDir: string, command: 'ci' | 'install'): void {
  execFileSync('npm', [command, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: appDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** The lock entries `roots` need: each package, its (non-optional) dependencies and what it bundles. */
export function lockClosure(
  lock: Record<string, LockEntry>,
  roots: readonly string[],
): Map<string, LockEntry> {
  const chosen = new Map<string, LockEntry>();
  const pending = roots.map((name) => `node_modules/${name}`);
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const entry = lock[path];
    if (entry === undefined || chosen.has(path)) continue;
    chosen.set(path, entry);
    // Bundled dependencies live under the package's own node_modules/.
    for (const nested of Object.keys(lock).filter((key) => key.startsWith(`${path}/node_modules/`))) {
      pending.push(nested);
    }
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const needed = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => optionalPeers[name]?.optional !== true),
    ];
    for (const name of needed) {
      const resolved = resolveFrom(lock, path, name);
      if (resolved !== undefined) pending.push(resolved);
    }
  }
  return chosen;
}

/** Node's lookup: `<path>/node_modules/<name>`, then each ancestor's node_modules/. */
function resolveFrom(lock: Record<string, LockEntry>, path: string, name: string): string | undefined {
  let base = path;
  for (;;) {
    const candidate = `${base}/node_modules/${name}`;
    if (lock[candidate] !== undefined) return candidate;
    const cut = base.lastIndexOf('/node_modules/');
    if (cut < 0) return lock[`node_modules/${name}`] === undefined ? undefined : `node_modules/${name}`;
    base = base.slice(0, cut);
  }
}

function fail(name: string): never {
  throw new Error(`package-lock.json has no node_modules/${name}`);
}

export const tarballName = (tarball: string) => basename(tarball);
