/**
 * Synthesizes the real CDK stack in-process (asset bundling skipped: the runner executes the
 * TypeScript handlers directly) and returns the state machine definitions `cdk synth` produces.
 */
import { App } from 'aws-cdk-lib';
import type { PipelineConfig } from '../lib/config/index.ts';
import { SecurityPipelineStack } from '../lib/security-pipeline-stack.ts';
import { type CfnTemplate, type SynthesizedStateMachine, stateMachineWithState } from './definitions.ts';

export function synthesizeTemplate(config: PipelineConfig): CfnTemplate {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SecurityPipelineStack(app, 'SecurityPipeline', { config });
  return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
}

/** The per-domain scan state machine (the one whose first state is `StartScan`). */
export function scanDomainStateMachine(template: CfnTemplate): SynthesizedStateMachine {
  return stateMachineWithState(template, 'StartScan');
}

/** The domain-list state machine (the one with `PrepareDomainList`). */
export function domainListStateMachine(template: CfnTemplate): SynthesizedStateMachine {
  return stateMachineWithState(template, 'PrepareDomainList');
}
