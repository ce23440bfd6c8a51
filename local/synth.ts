/**
 * Synthesizes the real CDK stack in-process (asset bundling skipped: the runner executes the
 * TypeScript handlers directly) and returns the state machine definitions `cdk synth` produces.
 * The runner, tests and bench go through local/synth-cache.ts, which calls this only on a miss.
 */
import { App } from 'aws-cdk-lib';
import type { PipelineConfig } from '../lib/config/index.ts';
import { SecurityPipelineStack } from '../lib/security-pipeline-stack.ts';
import type { CfnTemplate } from './definitions.ts';

export function synthesizeTemplate(config: PipelineConfig): CfnTemplate {
  const app = new App({
    context: { 'aws:cdk:bundling-stacks': [] },
    // aws-cdk-lib's built-in CloudFormation validation (a WebAssembly rule engine) was most of a
    // synthesis here: about 7 s of a cold 10 s, 2.5 s of a warm one. Its report is never read by
    // the runner, which keeps only the state machines and the IAM view; `cdk synth` still runs it.
    builtinCloudFormationValidation: false,
  });
  const stack = new SecurityPipelineStack(app, 'SecurityPipeline', { config });
  return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
}

export { domainListStateMachine, scanDomainStateMachine } from './definitions.ts';
