/**
 * `npm start` runs the state machines and IAM policies `cdk synth` produces: local/synth/synth.ts must
 * build its App as the CDK CLI does from cdk.json, whose context holds the feature flags that
 * change what aws-cdk-lib synthesizes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it, vi } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { synthesizeTemplate } from '../../local/synth/synth.ts';
import { testOutdir } from '../kit/synth-outdir.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};

describe('the local runner synthesis', () => {
  it('produces the template cdk synth produces from cdk.json (bundling aside), prints nothing, and leaves no cloud assembly behind', () => {
    // Prepare: the App the CDK CLI builds, with cdk.json's context, and without asset bundling and
    // the validation plugin, which change no template (test/stack/cloudformation-validation runs it).
    // The default configuration carries the placeholder vendor URL, which is annotated.
    const config = parsePipelineConfig(undefined, 'test');
    const app = new App({
      context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: false,
      outdir: testOutdir(),
    });
    const stack = new SecurityPipelineStack(app, 'SecurityPipeline', { config });
    const expected = app.synth().getStackArtifact(stack.artifactId).template;
    const printed: unknown[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args) => printed.push(args));
    vi.spyOn(console, 'warn').mockImplementation((...args) => printed.push(args));
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => printed.push(chunk) > 0);

    // Act
    const workDir = testOutdir();
    const local = synthesizeTemplate(config, { workDir });

    // Assess
    expect(Object.keys(cdkJson.context).filter((key) => key.startsWith('@aws-cdk/')).length).toBeGreaterThan(
      10,
    );
    expect(local).toEqual(expected);
    // The annotations cdk synth reports stay out of a local run
    expect(printed).toEqual([]);
    // and its cloud assembly is gone once the template is read
    expect(readdirSync(workDir)).toEqual([]);
  });
});
