/**
 * Synthesizes the real CDK stack in-process (asset bundling skipped: the runner executes the
 * TypeScript handlers directly) and returns the state machine definitions `cdk synth` produces.
 * The runner, tests and bench go through local/synth/synth-cache.ts, which calls this only on a miss.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ANNOTATIONS_IN_VALIDATION_REPORT, DISABLE_CREATION_STACK_TRACES } from 'aws-cdk-lib/cx-api';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import type { CfnTemplate } from './definitions.ts';

/** cdk.json's context: the feature flags that change what aws-cdk-lib synthesizes (IAM policy
 * minimisation and ordering among them), as the CDK CLI passes them to bin/app.ts. */
const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  }
).context;

/**
 * An App that synthesizes what `cdk synth` does from cdk.json, less three things that cost time and
 * change no template: asset bundling (the runner executes the TypeScript handlers directly),
 * aws-cdk-lib's built-in CloudFormation validation (a WebAssembly rule engine: about 7 s of a cold
 * 10 s synthesis, 2.5 s of a warm one) and the stack trace every construct records of its creation
 * (manifest metadata for `cdk --debug`; under vitest's source-mapped stack traces a tenth of a
 * synthesis). test/stack/cloudformation-validation.cdk.test.ts runs the validation as `cdk synth`
 * does. The CDK tests build their Apps here too (test/kit).
 */
export function cdkSynthApp(
  options: {
    readonly outdir?: string;
    /** More context, as `-c key=value` gives it. */
    readonly context?: Record<string, unknown>;
    /** Run aws-cdk-lib's CloudFormation validation as `cdk synth` does. @default false */
    readonly cloudFormationValidation?: boolean;
  } = {},
): App {
  return new App({
    context: {
      ...CDK_JSON_CONTEXT,
      [DISABLE_CREATION_STACK_TRACES]: true,
      ...options.context,
      'aws:cdk:bundling-stacks': [],
    },
    builtinCloudFormationValidation: options.cloudFormationValidation ?? false,
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
  });
}

/**
 * The template of the stack for `config`. The cloud assembly goes to a folder of its own under
 * `workDir` that is removed once the template is read: aws-cdk-lib's default is a new /tmp/cdk.out
 * folder per synthesis that nothing ever removes.
 */
export function synthesizeTemplate(
  config: PipelineConfig,
  options: { readonly workDir?: string } = {},
): CfnTemplate {
  const outdir = mkdtempSync(join(options.workDir ?? tmpdir(), 'security-pipeline-synth-'));
  try {
    const app = cdkSynthApp({ outdir });
    // cdk.json turns the stack's annotations into a validation report that synth prints to stderr,
    // naming a file in this folder, which is gone by then. They are deploy advice (the placeholder
    // vendor URL): `cdk synth` reports them; a local run's terminal stays the CLI's own.
    app.node.setContext(ANNOTATIONS_IN_VALIDATION_REPORT, false);
    const stack = new SecurityPipelineStack(app, 'SecurityPipeline', { config });
    return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export { domainListStateMachine, scanDomainStateMachine } from './definitions.ts';
