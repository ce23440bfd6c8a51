/**
 * `npm run check-config -- FILE`: a configuration file checked as `cdk synth` would check it (the
 * schema, the rules across sections, what the constructs refuse, cdk-nag), without bundling, and
 * every problem named by its setting or its resource.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigFile } from '../../scripts/check-config.ts';

const REPO = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'check-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, config: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

describe('check-config', () => {
  it('passes the example configuration, naming its stack', async () => {
    const result = await checkConfigFile('config/pipeline.example.json', { cwd: REPO });
    expect(result).toEqual({ problems: [], stackName: 'SecurityPipeline' });
  });

  it('names the setting of every problem in the file, all at once', async () => {
    const { problems } = await checkConfigFile(
      file('bad.json', {
        poll: { maxWaitSeconds: 99_999 },
        stack: { name: '9lives' },
        notifications: { email: 'x' },
      }),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^pipeline\.poll\.maxWaitSeconds must be between 1 and 3600 \(got 99999\)$/),
      expect.stringMatching(/^pipeline\.notifications\.email /),
      expect.stringMatching(/^pipeline\.stack\.name must be a CloudFormation stack name/),
    ]);
  });

  it("reports what the synth refuses beyond the schema: status words past Lambda's 4 KB of environment", async () => {
    // Each list is valid on its own; together they pass the 4 KB Lambda allows a function's variables.
    const words = (state: string) => Array.from({ length: 60 }, (_, i) => `${state}-vendor-word-${i}`);
    const statusVocabulary = Object.fromEntries(
      ['pending', 'running', 'succeeded', 'failed'].map((state) => [state, words(state)]),
    );
    const { problems } = await checkConfigFile(file('words.json', { scan: { statusVocabulary } }));
    expect(problems).toEqual([expect.stringMatching(/STATUS_VOCABULARY \d+ bytes/)]);
  });

  it('takes the stack name from --stack-name over the file', async () => {
    const result = await checkConfigFile('config/pipeline.example.json', {
      cwd: REPO,
      stackName: 'SecurityPipeline-dev',
    });
    expect(result.stackName).toBe('SecurityPipeline-dev');
  });

  it('names the file setting when the file cannot be read', async () => {
    const { problems } = await checkConfigFile(join(dir, 'missing.json'));
    expect(problems).toEqual([expect.stringMatching(/^pipelineConfigFile cannot be read \(ENOENT\)/)]);
  });

  it('exits 1 with the problems on stderr, and 2 with the usage when no file is given', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-config.ts', ...args], {
        cwd: REPO,
        encoding: 'utf8',
      });
    const bad = run([file('cli.json', { vendor: { keys: 'many' } })]);
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringContaining('pipeline.vendor.keys')]);
    const usage = run([]);
    expect([usage.status, usage.stderr.trim()]).toEqual([
      2,
      'usage: npm run check-config -- FILE [--stack-name NAME]',
    ]);
  });
});
