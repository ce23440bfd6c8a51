#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { PipelineConfigError } from '../lib/config/errors.ts';
import { buildPipelineApp } from '../lib/pipeline-app.ts';

const app = new App();
try {
  buildPipelineApp(app);
} catch (error) {
  if (!(error instanceof PipelineConfigError)) throw error;
  // The message lists every problem with the setting it is about; a stack trace would only hide it.
  console.error(error.message);
  process.exit(1);
}
