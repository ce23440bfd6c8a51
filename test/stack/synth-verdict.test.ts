/**
 * What `npx cdk synth --quiet` prints of the app's own: a closing line saying which stacks were
 * synthesized and what the checks found, and no esbuild chatter for the functions it bundles. The
 * app runs as the CDK CLI runs it (cdk.json's `app`, in a process of its own, with the context and
 * the output folder in CDK_CONTEXT_JSON and CDK_OUTDIR).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ProcessRun, runProcess } from '../kit/child-process.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const CDK_JSON = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'synth-verdict-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Node and its arguments for `args` as the CDK CLI would run them: `npx tsx X` is node with tsx's
 * loader. As `cdk synth --no-validation` runs them (CDK_VALIDATION=false): aws-cdk-lib's
 * CloudFormation validation is two thirds of a cold synthesizing process's CPU (about 6.5 s of
 * 10 s), it prints nothing here and is not one of the checks the verdict names. It runs on this
 * stack in test/stack/cloudformation-validation.cdk.test.ts and, as `cdk synth` runs it on the
 * documented configuration, in test/docs/documented-configs.cdk.test.ts.
 */
function asCdkRunsIt(args: readonly string[], context: Record<string, unknown>): Promise<ProcessRun> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_OUTDIR: join(dir, 'cdk.out'),
    CDK_CONTEXT_JSON: JSON.stringify(context),
    CDK_VALIDATION: 'false',
  };
  // The CLI's app is not a test: aws-cdk-lib would report as it does in memory.
  delete env.NODE_ENV;
  return runProcess(process.execPath, ['--import', 'tsx', ...args], { cwd: REPO_ROOT, env });
}

describe('cdk synth', () => {
  it("ends with the app's verdict: the stack synthesized, the checks run, 0 findings", async () => {
    expect(CDK_JSON.app).toBe('npx tsx bin/security-pipeline.ts');
    // Bundling skipped here (the next test bundles): it changes no check.
    const run = await asCdkRunsIt(['bin/security-pipeline.ts'], {
      ...CDK_JSON.context,
      'aws:cdk:bundling-stacks': [],
    });

    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(
      `Synthesized SecurityPipeline into ${join(dir, 'cdk.out')}; the checks AwsSolutions, Serverless and Pipeline ran: 0 findings; ` +
        '1 warning(s) printed above (Construct Annotations)',
    );
    expect(run.stderr).toContain('vendor.scanApiUrl is the placeholder');
  }, 300_000);

  it("bundles a function with no esbuild output: only CDK's one line per asset", async () => {
    // One PipelineFunction in a stack of its own, bundled as the app bundles every function.
    const script = [
      "import { App, Duration, Stack } from 'aws-cdk-lib';",
      "import { PipelineFunction } from './lib/platform/pipeline-function.ts';",
      "import { registeredHandler } from './lambdas/registry.ts';",
      'const app = new App();',
      "new PipelineFunction(new Stack(app, 'Bundled'), 'Fn', { handler: registeredHandler('write-scan-manifest'), timeout: Duration.seconds(30) });",
      'app.synth();',
    ].join('\n');
    const run = await asCdkRunsIt(['--input-type=module', '-e', script], CDK_JSON.context);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^Bundling asset Bundled\/Fn\/Code\/Stage\.\.\.$/m);
    // esbuild's info lines: the bundle's name and size, and `⚡ Done in 850ms`.
    expect(run.stderr).not.toMatch(/index\.mjs|Done in/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  }, 300_000);
});
