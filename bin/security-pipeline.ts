#!/usr/bin/env node
import { App } from 'aws-cdk-lib';
import { SecurityPipelineStack } from '../lib/security-pipeline-stack.ts';

const app = new App();
new SecurityPipelineStack(app, 'SecurityPipeline');
