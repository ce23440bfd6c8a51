/**
 * Every configuration the docs show a user synthesizes as `cdk synth` would, with cdk-nag, the
 * pipeline's own rules and CloudFormation's validation on, read from the files the user reads (a
 * doc edit cannot drift from what is tested):
 *
 * - docs/runbooks/first-deploy.md, its offline steps run as written: each command of its `sh`
 *   blocks before the bootstrap step, in order, in a scratch folder holding the repository's
 *   `config/` (`cp`, `npm run check-config`, `npx cdk synth`); a command this test cannot run
 *   fails it, so the runbook cannot grow a step nobody tried;
 * - every `json` block in README.md and docs/ that is a pipeline configuration (its keys are
 *   configuration sections), also checked against config/pipeline.schema.json as an editor would;
 * - every `npx cdk synth|deploy -c …` command in the docs, with the example configuration: one of
 *   each shape (agnostic, pinned) synthesized, every other one built for the stack it names.
 */
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { rootSchema } from '../../lib/config/schema.ts';
import { buildPipelineApp } from '../../lib/pipeline-app.ts';
import { checkConfigFile } from '../../scripts/check-config.ts';
import { appAsCdkSynth, cdkSynth } from '../kit/cdk-synth.ts';

const REPO = new URL('../../', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'documented-configs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh folder holding a copy of the repository's config/, as a fresh clone has it. */
function cloneConfig(): string {
  const dir = mkdtempSync(join(scratch, 'clone-'));
  cpSync(join(REPO, 'config'), join(dir, 'config'), { recursive: true });
  return dir;
}

function markdownFiles(): string[] {
  const docs = readdirSync(join(REPO, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => join(REPO, 'docs', file));
  return [join(REPO, 'README.md'), ...docs];
}

/** The fenced blocks of `markdown` in language `lang`, in order. */
function fencedBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\\s*\`\`\`${lang}\\n([\\s\\S]*?)^\\s*\`\`\``, 'gm'))].map((m) =>
    (m[1] as string).replace(/^ {3}/gm, ''),
  );
}

const CONFIG_SECTIONS = new Set(Object.keys(rootSchema.def.shape));

// The docs' configurations first: aws-cdk-lib's CloudFormation validation builds its rule engine
// again (0.2 to 0.4 s of CPU) whenever a template has a resource type the engine was not built
// for, and the configuration of docs/deploying.md has every type the others have and one more.
describe('every configuration the docs show', () => {
  const configs = markdownFiles().flatMap((file) =>
    fencedBlocks(readFileSync(file, 'utf8'), 'json').flatMap((block, index) => {
      let value: unknown;
      try {
        value = JSON.parse(block);
      } catch {
        return [];
      }
      const isConfig =
        value !== null &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        Object.keys(value).length > 0 &&
        Object.keys(value).every((key) => CONFIG_SECTIONS.has(key));
      return isConfig ? [{ where: `${relative(REPO, file)} json block ${index + 1}`, config: value }] : [];
    }),
  );
  const schema = JSON.parse(readFileSync(join(REPO, 'config/pipeline.schema.json'), 'utf8')) as object;
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);

  it('finds the configurations the docs give (the test stack among them)', () => {
    expect(configs.map((c) => c.where)).toContain('docs/deploying.md json block 1');
  });

  it.each(configs.map((c) => [c.where, c.config] as const))(
    '%s synthesizes with every check on',
    (_where, config) => {
      const clone = cloneConfig();
      writeFileSync(join(clone, 'config/pipeline.json'), JSON.stringify(config));
      expect(cdkSynth({ pipelineConfigFile: 'config/pipeline.json' }, clone).findings).toEqual([]);
    },
  );

  const example: unknown = JSON.parse(readFileSync(join(REPO, 'config/pipeline.example.json'), 'utf8'));
  it.each<[string, unknown]>([
    ...configs.map((c): [string, unknown] => [c.where, c.config]),
    ['config/pipeline.example.json', example],
  ])('%s passes config/pipeline.schema.json, as an editor checks it', (_where, config) => {
    expect(validate(config) ? [] : validate.errors).toEqual([]);
  });
});

describe('the first-deploy runbook, followed literally up to the bootstrap step', () => {
  const runbook = readFileSync(join(REPO, 'docs/runbooks/first-deploy.md'), 'utf8');
  const offline = runbook.slice(0, runbook.indexOf('**Bootstrap'));
  const commands = fencedBlocks(offline, 'sh')
    .flatMap((block) => block.split('\n'))
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('installs with npm ci, then copies, checks and synthesizes config/pipeline.json', () => {
    expect(offline).toMatch(/^1\. \*\*Install\.\*\* `npm ci`/m);
    expect(commands).toEqual([
      'cp config/pipeline.example.json config/pipeline.json',
      'npm run check-config -- config/pipeline.json',
      'npx cdk synth --quiet -c pipelineConfigFile=config/pipeline.json',
    ]);
  });

  it('runs every command without an error, cdk-nag and CloudFormation validation included', async () => {
    const clone = cloneConfig();
    const ran: string[] = [];
    for (const command of commands) {
      const copy = /^cp (\S+) (\S+)$/.exec(command);
      const check = /^npm run check-config -- (\S+)$/.exec(command);
      const synth = /^npx cdk synth --quiet -c pipelineConfigFile=(\S+)$/.exec(command);
      if (copy) {
        copyFileSync(join(clone, copy[1] as string), join(clone, copy[2] as string));
      } else if (check) {
        expect((await checkConfigFile(check[1] as string, { cwd: clone })).problems, command).toEqual([]);
      } else if (synth) {
        expect(cdkSynth({ pipelineConfigFile: synth[1] }, clone).findings, command).toEqual([]);
      } else {
        throw new Error(`first-deploy.md has a command this test cannot run as written: ${command}`);
      }
      ran.push(command);
    }
    expect(ran).toEqual(commands);
    // Several syntheses with bundling, cdk-nag and validation: 30-85 s on 2 cores under load.
  }, 240_000);
});

describe('every cdk command the docs show', () => {
  /** `-c key=value` sets of each `npx cdk synth|deploy` in the docs that names config/pipeline.json. */
  const contexts = [
    ...new Set(
      markdownFiles().flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/npx cdk (?:synth|deploy)[^`\n]*/g)]
          .map((m) => m[0])
          .filter((command) => command.includes('pipelineConfigFile=config/pipeline.json'))
          .map((command) =>
            JSON.stringify(
              Object.fromEntries([...command.matchAll(/-c (\w+)=(\S+)/g)].map((c) => [c[1], c[2]])),
            ),
          ),
      ),
    ),
  ].map((json) => JSON.parse(json) as Record<string, string>);

  it('finds the dev and prod stacks of docs/deploying.md', () => {
    expect(contexts).toContainEqual({
      pipelineConfigFile: 'config/pipeline.json',
      stackName: 'SecurityPipeline-dev',
    });
  });

  /**
   * The commands with more than the file: a stack name, an account and Region, or both. What tells
   * the commands of one shape (the example configuration, agnostic or pinned to an account and
   * Region) apart is the stack's name, so the first command of each shape synthesizes with every
   * check on, and each other one builds its app from its context and shows the stack it names and
   * where it is placed: another checked synthesis of the same shape (about 1.5 s of CPU each)
   * proved again what the first had proved.
   */
  const commands = contexts.filter((c) => Object.keys(c).length > 1);
  const shapeOf = (context: Record<string, string>) =>
    JSON.stringify({ account: context.account, region: context.region });
  const checked = commands.filter(
    (context, index) => commands.findIndex((other) => shapeOf(other) === shapeOf(context)) === index,
  );
  const named = commands.filter((context) => !checked.includes(context));
  const withExample = (): string => {
    const clone = cloneConfig();
    copyFileSync(join(clone, 'config/pipeline.example.json'), join(clone, 'config/pipeline.json'));
    return clone;
  };

  it('synthesizes a command of each shape: agnostic and pinned', () => {
    expect(checked.map((c) => c.account !== undefined)).toEqual([false, true]);
  });

  it.each(checked.map((c) => [JSON.stringify(c), c] as const))(
    'synthesizes -c %s with the example configuration',
    (_name, context) => {
      const { stackName, findings } = cdkSynth(context, withExample());
      expect(findings).toEqual([]);
      expect(stackName).toBe(context.stackName ?? 'SecurityPipeline');
    },
  );

  it.each(named.map((c) => [JSON.stringify(c), c] as const))(
    'builds -c %s with the example configuration: the stack it names, where it says',
    (_name, context) => {
      const { stack } = buildPipelineApp(appAsCdkSynth(context), withExample());
      expect(stack.stackName).toBe(context.stackName ?? 'SecurityPipeline');
      expect(stack.environment).toBe(
        context.account === undefined
          ? 'aws://unknown-account/unknown-region'
          : `aws://${context.account}/${context.region}`,
      );
    },
  );
});
