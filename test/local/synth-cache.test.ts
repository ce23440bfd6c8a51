import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { type CfnTemplate, scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { synthesizeTemplate } from '../../local/synth/synth.ts';
import { cachedTemplate, SYNTHESIS_SOURCES, synthesisKey } from '../../local/synth/synth-cache.ts';

let work: string;
let cacheDir: string;
let source: string;
let synthesized: PipelineConfig[];

/**
 * The real synthesis, counted. What is counted is the cache's calls; the synthesis behind them runs
 * once per configuration in this file (a whole stack costs seconds), each call getting its own copy.
 */
const templates = new Map<string, CfnTemplate>();
function countingSynth(config: PipelineConfig): CfnTemplate {
  synthesized.push(config);
  const key = JSON.stringify(config);
  const template = templates.get(key) ?? synthesizeTemplate(config);
  templates.set(key, template);
  return structuredClone(template);
}

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), 'synth-cache-'));
  cacheDir = join(work, 'cache');
  source = join(work, 'stack.ts');
  await writeFile(source, 'export const version = 1;\n');
  synthesized = [];
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('synthesize once (local/synth/synth-cache.ts)', () => {
  it('synthesizes once per configuration and source, then serves the same definition from the cache', async () => {
    // Act
    const first = await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: countingSynth,
    });
    const second = await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: countingSynth,
    });
    // Assess
    expect(synthesized).toHaveLength(1);
    expect(scanDomainStateMachine(second).definition).toEqual(scanDomainStateMachine(first).definition);
    expect(scanDomainStateMachine(second).definition.StartAt).toBe('StartScan');
  }, 60_000);

  it('never runs a stale definition: a changed source file synthesizes again', async () => {
    // Prepare: cache a template, then change the source and make synthesis produce something new.
    await cachedTemplate(DEFAULT_PIPELINE_CONFIG, { cacheDir, sources: [source], synthesize: countingSynth });
    await writeFile(source, 'export const version = 2;\n');
    const changed: CfnTemplate = {
      Resources: {
        Changed: {
          Type: 'AWS::StepFunctions::StateMachine',
          Properties: {
            DefinitionString: JSON.stringify({
              StartAt: 'StartScan',
              States: { StartScan: { Type: 'Succeed' } },
            }),
          },
        },
      },
    };
    // Act
    const after = await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: () => changed,
    });
    // Assess
    expect(scanDomainStateMachine(after).logicalId).toBe('Changed');
    expect(await readdir(cacheDir)).toHaveLength(2);
  }, 60_000);

  it('keys by configuration: another deadline gets its own synthesis', async () => {
    // Prepare
    const longer: PipelineConfig = {
      ...DEFAULT_PIPELINE_CONFIG,
      poll: {
        ...DEFAULT_PIPELINE_CONFIG.poll,
        deadlineSeconds: DEFAULT_PIPELINE_CONFIG.poll.deadlineSeconds + 60,
      },
    };
    // Act
    await cachedTemplate(DEFAULT_PIPELINE_CONFIG, { cacheDir, sources: [source], synthesize: countingSynth });
    await cachedTemplate(longer, { cacheDir, sources: [source], synthesize: countingSynth });
    // Assess
    expect(synthesized).toEqual([DEFAULT_PIPELINE_CONFIG, longer]);
  }, 60_000);

  it("keeps only the state machines and each function's timeout, which is all the runner reads", async () => {
    // Act
    const template = await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: countingSynth,
    });
    // Assess
    const resources = Object.values(template.Resources ?? {});
    const types = new Set(resources.map((resource) => resource.Type));
    expect([...types].sort()).toEqual(['AWS::Lambda::Function', 'AWS::StepFunctions::StateMachine']);
    for (const fn of resources.filter((resource) => resource.Type === 'AWS::Lambda::Function')) {
      expect(Object.keys(fn.Properties ?? {})).toEqual(['Timeout']);
    }
  }, 60_000);

  it('synthesizes once when callers miss together, as parallel test workers and runs do', async () => {
    // Prepare: a synthesis slow enough that the second caller misses while the first one runs
    const slowSynth = async (config: PipelineConfig) => {
      await delay(300);
      return countingSynth(config);
    };
    const options = { cacheDir, sources: [source], synthesize: slowSynth };
    // Act
    const [first, second] = await Promise.all([
      cachedTemplate(DEFAULT_PIPELINE_CONFIG, options),
      cachedTemplate(DEFAULT_PIPELINE_CONFIG, options),
    ]);
    // Assess: one synthesis, both served, and no lock left behind
    expect(synthesized).toHaveLength(1);
    expect(second).toEqual(first);
    expect(await readdir(cacheDir)).toEqual([expect.stringMatching(/^synth-[0-9a-f]{32}\.json$/)]);
  }, 60_000);

  it('takes over from a process that died mid-synthesis, and never waits past its limit', async () => {
    // Prepare: a lock left by a process that no longer runs
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((done) => dead.once('exit', done));
    const key = await synthesisKey(DEFAULT_PIPELINE_CONFIG, [source]);
    await mkdir(cacheDir, { recursive: true });
    const lock = join(cacheDir, `synth-${key}.json.lock`);
    await writeFile(lock, `${dead.pid}\n`);
    // Act
    await cachedTemplate(DEFAULT_PIPELINE_CONFIG, { cacheDir, sources: [source], synthesize: countingSynth });
    // Assess
    expect(synthesized).toHaveLength(1);
    expect(await readdir(cacheDir)).toEqual([`synth-${key}.json`]);

    // Prepare: a lock held by a live process (this one) that never finishes, for another source
    await writeFile(source, 'export const version = 3;\n');
    const stuck = join(cacheDir, `synth-${await synthesisKey(DEFAULT_PIPELINE_CONFIG, [source])}.json.lock`);
    await writeFile(stuck, `${process.pid}\n`);
    // Act
    const started = Date.now();
    await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: countingSynth,
      waitMs: 300,
    });
    // Assess: synthesized itself once the wait ran out, and left the other owner's lock alone
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(synthesized).toHaveLength(2);
    expect(await readdir(cacheDir)).toContain(stuck.slice(cacheDir.length + 1));
  }, 60_000);

  it('hashes every source that decides synthesis: the stack, the handlers, cdk.json and the lock file', () => {
    const names = SYNTHESIS_SOURCES.map((path) => path.replace(/\\/g, '/'));
    for (const expected of [
      '/lib',
      '/bin',
      '/lambdas',
      '/local/synth/synth.ts',
      '/cdk.json',
      '/package-lock.json',
    ]) {
      expect(names.some((name) => name.endsWith(expected))).toBe(true);
    }
  });
});
