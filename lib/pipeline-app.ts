/**
 * What `cdk synth` builds (bin/security-pipeline.ts), as functions the tests and
 * `npm run check-config` call too, so they synthesize and check exactly what a deploy would: the
 * configuration from CDK context, the stack named and placed by its `stack` settings, and the
 * synth-time checks (cdk-nag's AwsSolutions and Serverless packs and the pipeline's own rules).
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { loadPipelineConfig } from './config/load.ts';
import type { PipelineConfig } from './config/schema.ts';
import { PipelineChecks } from './platform/rules/pipeline-checks.ts';
import { SecurityPipelineStack } from './security-pipeline-stack.ts';

/** The CDK context keys the app reads (`-c key=value`, or cdk.json's `context`). */
export const PIPELINE_CONTEXT_KEYS = [
  'pipeline',
  'pipelineConfigFile',
  'stackName',
  'account',
  'region',
] as const;

/** What `buildPipelineApp` added to the app. */
export interface PipelineAppParts {
  readonly stack: SecurityPipelineStack;
  /** The synth-time checks, by the name their reports carry. */
  readonly checks: readonly string[];
}

/**
 * The whole app from its context: the configuration (`pipeline` or `pipelineConfigFile`, with
 * `stackName`, `account` and `region` over the file's `stack` settings), the stack and the checks.
 * @throws PipelineConfigError naming every setting that is wrong
 */
export function buildPipelineApp(app: App, cwd: string = process.cwd()): PipelineAppParts {
  const context = Object.fromEntries(PIPELINE_CONTEXT_KEYS.map((key) => [key, app.node.tryGetContext(key)]));
  const stack = addPipelineStack(app, loadPipelineConfig(context, cwd));
  return { stack, checks: addPipelineChecks(app) };
}

/** The pipeline's stack for `config`, its construct id and CloudFormation name `stack.name`. */
export function addPipelineStack(app: App, config: PipelineConfig): SecurityPipelineStack {
  const { name, account, region } = config.stack;
  return new SecurityPipelineStack(app, name, {
    config,
    stackName: name,
    // Unset, the stack stays environment-agnostic: `cdk deploy` takes the credentials' account and Region.
    ...(account === undefined && region === undefined ? {} : { env: { account, region } }),
  });
}

/**
 * cdk-nag 3 packs are policy-validation plugins: an unacknowledged finding fails the synth.
 * Returns their names, as their reports carry them.
 */
export function addPipelineChecks(app: App): readonly string[] {
  const plugins = [
    new AwsSolutionsChecks(app, { verbose: true }),
    new ServerlessChecks(app, { verbose: true }),
    new PipelineChecks(app, { verbose: true }),
  ];
  Validations.of(app).addPlugins(...plugins);
  return plugins.map((plugin) => plugin.name);
}
