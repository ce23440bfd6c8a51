import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG, type PipelineConfig } from '../../lib/config/index.ts';
import { type CfnTemplate, scanDomainStateMachine } from '../../local/definitions.ts';
import { synthesizeTemplate } from '../../local/synth.ts';
import { cachedTemplate, SYNTHESIS_SOURCES } from '../../local/synth-cache.ts';

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

describe('synthesize once (local/synth-cache.ts)', () => {
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

  it('keeps only the state machines, which is all the runner reads', async () => {
    // Act
    const template = await cachedTemplate(DEFAULT_PIPELINE_CONFIG, {
      cacheDir,
      sources: [source],
      synthesize: countingSynth,
    });
    // Assess
    const types = new Set(Object.values(template.Resources ?? {}).map((resource) => resource.Type));
    expect([...types]).toEqual(['AWS::StepFunctions::StateMachine']);
  }, 60_000);

  it('hashes every source that decides synthesis: the stack, the handlers, cdk.json and the lock file', () => {
    const names = SYNTHESIS_SOURCES.map((path) => path.replace(/\\/g, '/'));
    for (const expected of [
      '/lib',
      '/bin',
      '/lambdas',
      '/local/synth.ts',
      '/cdk.json',
      '/package-lock.json',
    ]) {
      expect(names.some((name) => name.endsWith(expected))).toBe(true);
    }
  });
});
