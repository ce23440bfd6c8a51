#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { loadPipelineConfig, type PipelineConfig, PipelineConfigError } from '../lib/config/index.ts';
import { PipelineChecks } from '../lib/platform/rules/pipeline-checks.ts';
import { SecurityPipelineStack } from '../lib/security-pipeline-stack.ts';

const app = new App();

let config: PipelineConfig;
try {
  config = loadPipelineConfig({
    pipeline: app.node.tryGetContext('pipeline'),
    pipelineConfigFile: app.node.tryGetContext('pipelineConfigFile'),
  });
} catch (error) {
  if (!(error instanceof PipelineConfigError)) throw error;
  // The message lists every problem with the setting it is about; a stack trace would only hide it.
  console.error(error.message);
  process.exit(1);
}

new SecurityPipelineStack(app, 'SecurityPipeline', { config });

// cdk-nag 3 packs are policy-validation plugins: an unacknowledged finding fails the synth.
Validations.of(app).addPlugins(
  new AwsSolutionsChecks(app, { verbose: true }),
  new ServerlessChecks(app, { verbose: true }),
  new PipelineChecks(app, { verbose: true }),
);
