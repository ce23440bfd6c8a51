/**
 * Synthesize once per configuration and source: the local runner, the tests and the bench read the
 * state machines of a cached template instead of synthesizing the whole CDK app on every start
 * (about 4 s and 350 MiB each time).
 *
 * The key is a hash of the configuration and of every file that can change what `cdk synth`
 * produces (lib/, bin/, lambdas/, the synth code itself, cdk.json, package.json,
 * package-lock.json, tsconfig.json). Any change to any of them is a new key, so a changed source
 * never runs a stale definition; old entries are simply never read again. Only what the runner
 * reads is kept: the state machine resources, and the IAM evaluator's view (each function's role
 * policies and every resource policy, resolved to concrete ARNs; local/services/iam/view.ts).
 *
 * aws-cdk-lib is imported only on a miss, so a cached start never loads it.
 */
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { type IamView, iamViewOf } from '../services/iam/view.ts';
import type { CfnTemplate } from './definitions.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Bumped when the cached shape changes. */
const CACHE_FORMAT = 3;

/** Files and folders whose content decides the synthesized template. */
export const SYNTHESIS_SOURCES: readonly string[] = [
  'lib',
  'bin',
  'lambdas',
  'local/synth/synth.ts',
  'local/synth/synth-cache.ts',
  'local/synth/definitions.ts',
  'local/services/iam/view.ts',
  'local/services/iam/template-resolver.ts',
  'local/services/iam/resource-types.ts',
  'local/services/iam/template-policies.ts',
  'cdk.json',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
].map((path) => join(REPO_ROOT, path));

export const DEFAULT_SYNTH_CACHE_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'security-pipeline');

export interface CachedTemplateOptions {
  /** @default DEFAULT_SYNTH_CACHE_DIR */
  readonly cacheDir?: string;
  /** @default SYNTHESIS_SOURCES */
  readonly sources?: readonly string[];
  /** @default the in-process synthesis of local/synth/synth.ts */
  readonly synthesize?: (config: PipelineConfig) => CfnTemplate | Promise<CfnTemplate>;
  /** @default SYNTHESIS_WAIT_MS */
  readonly waitMs?: number;
}

async function filesUnder(path: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return [path];
    // A missing source (e.g. no bin/ in a test root) is part of the key as "absent".
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const nested = await Promise.all(
    entries
      .filter((entry) => entry.name !== 'node_modules' && !entry.name.startsWith('.'))
      .map((entry) => filesUnder(join(path, entry.name))),
  );
  return nested.flat();
}

/** Every source file's path and content, as one digest. */
async function sourcesDigest(sources: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const source of sources) {
    const files = (await filesUnder(source)).sort();
    hash.update(`\0source ${source} ${files.length}\n`);
    for (const file of files) {
      hash.update(`\0file ${relative(source, file)}\n`);
      hash.update(await readFile(file));
    }
  }
  return hash.digest('hex');
}

/**
 * The repository's own sources are read once per process: a process runs one command (or one test
 * file, which starts many in-process runs), and the sources do not change under it. Any other list
 * (the cache's own tests change a source between two calls) is read on every call.
 */
let repositoryDigest: Promise<string> | undefined;

function repositorySourcesDigest(): Promise<string> {
  if (repositoryDigest === undefined) {
    repositoryDigest = sourcesDigest(SYNTHESIS_SOURCES).catch((error: unknown) => {
      // A failed read is not remembered: the next call reads again.
      repositoryDigest = undefined;
      throw error;
    });
  }
  return repositoryDigest;
}

/** The cache key: configuration, cache format, Node major, and every source file's path and content. */
export async function synthesisKey(
  config: PipelineConfig,
  sources: readonly string[] = SYNTHESIS_SOURCES,
): Promise<string> {
  const digest =
    sources === SYNTHESIS_SOURCES ? await repositorySourcesDigest() : await sourcesDigest(sources);
  const hash = createHash('sha256');
  hash.update(`format ${CACHE_FORMAT}\nnode ${process.versions.node.split('.')[0]}\n`);
  hash.update(JSON.stringify(config));
  hash.update(`\0sources ${digest}\n`);
  return hash.digest('hex').slice(0, 32);
}

/** Only the state machines: what `stateMachinesIn` and the runner read. */
function stateMachinesOnly(template: CfnTemplate): CfnTemplate {
  const resources = Object.entries(template.Resources ?? {}).flatMap(([id, resource]) => {
    if (resource.Type === 'AWS::StepFunctions::StateMachine') return [[id, resource] as const];
    // Of a function, only its timeout: each local invocation ends there, as in AWS.
    if (resource.Type === 'AWS::Lambda::Function') {
      const timeout = resource.Properties?.Timeout;
      return [[id, { Type: resource.Type, Properties: { Timeout: timeout } }] as const];
    }
    return [];
  });
  return { Resources: Object.fromEntries(resources) };
}

async function synthesizeInProcess(config: PipelineConfig): Promise<CfnTemplate> {
  const { synthesizeTemplate } = await import('./synth.ts');
  return synthesizeTemplate(config);
}

/** What one synthesis leaves for the runner. */
export interface CachedSynthesis {
  /** The state machines of the synthesized template. */
  readonly template: CfnTemplate;
  /** What the IAM evaluator checks calls against. */
  readonly iam: IamView;
}

/** The entry, or undefined when it is missing or torn (being written is never seen: see the rename). */
async function readEntry(file: string): Promise<CachedSynthesis | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as CachedSynthesis;
  } catch (error) {
    // A missing or torn entry is a miss; anything else (permissions) is worth seeing.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

/** How long a miss waits for another process's synthesis of the same entry before doing its own. */
export const SYNTHESIS_WAIT_MS = 180_000;

/** False only when the lock names a process that no longer runs (it died mid-synthesis). */
async function ownerRuns(lock: string): Promise<boolean> {
  const pid = Number.parseInt(await readFile(lock, 'utf8').catch(() => ''), 10);
  // Created but not yet written, or just removed: too young to be stale.
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Either the entry another caller synthesized meanwhile, or the right to synthesize it (a lock file
 * beside the entry, holding this pid). Parallel test workers and concurrent `npm start`s that miss
 * together would otherwise each pay a whole synthesis (seconds of CPU each) for the same entry.
 */
async function claim(
  file: string,
  waitMs: number,
): Promise<{ readonly entry: CachedSynthesis } | { readonly release: () => Promise<void> }> {
  const lock = `${file}.lock`;
  const giveUpAt = Date.now() + waitMs;
  for (;;) {
    try {
      await writeFile(lock, `${process.pid}\n`, { flag: 'wx' });
      const release = () => rm(lock, { force: true });
      // Its owner may have finished between our miss and our claim.
      const entry = await readEntry(file);
      if (entry === undefined) return { release };
      await release();
      return { entry };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const entry = await readEntry(file);
    if (entry !== undefined) return { entry };
    // Never wait forever on someone else: a hung owner costs one more synthesis, not a stuck run.
    if (Date.now() > giveUpAt) return { release: async () => {} };
    if (!(await ownerRuns(lock))) await rm(lock, { force: true });
    else await delay(100);
  }
}

/**
 * The synthesized state machines and IAM view for this configuration, synthesized at most once per
 * key, also across processes sharing the cache directory.
 */
export async function cachedSynthesis(
  config: PipelineConfig,
  options: CachedTemplateOptions = {},
): Promise<CachedSynthesis> {
  const cacheDir = options.cacheDir ?? DEFAULT_SYNTH_CACHE_DIR;
  const file = join(cacheDir, `synth-${await synthesisKey(config, options.sources)}.json`);
  const hit = await readEntry(file);
  if (hit !== undefined) return hit;
  await mkdir(cacheDir, { recursive: true });
  const claimed = await claim(file, options.waitMs ?? SYNTHESIS_WAIT_MS);
  if ('entry' in claimed) return claimed.entry;
  try {
    const full = await (options.synthesize ?? synthesizeInProcess)(config);
    const synthesis: CachedSynthesis = { template: stateMachinesOnly(full), iam: iamViewOf(full) };
    // Write then rename: a reader must never see half an entry.
    const partial = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(partial, JSON.stringify(synthesis));
    await rename(partial, file);
    return synthesis;
  } finally {
    await claimed.release();
  }
}

/** The synthesized template's state machines for this configuration (see cachedSynthesis). */
export async function cachedTemplate(
  config: PipelineConfig,
  options: CachedTemplateOptions = {},
): Promise<CfnTemplate> {
  return (await cachedSynthesis(config, options)).template;
}
