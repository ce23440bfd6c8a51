/**
 * The shapes platform teams deploy the pipeline in, built as `cdk synth` builds them (the app's
 * checks: cdk-nag's AwsSolutions and Serverless packs and the pipeline's own rules), without asset
 * bundling: no template property checked here depends on the bundles' contents.
 *
 * Four axes: the environment (agnostic, or a pinned account and Region), the configuration (the
 * defaults, the documented example, per-API keys on the other runtime), the resources (made by the
 * pipeline, brought from the same app, imported by name, brought under a customer managed key) and
 * the neighbours (alone, dev and prod stacks in one app, two pipelines in one stack).
 */
import { readFileSync } from 'node:fs';
import {
  type App,
  CfnElement,
  CfnResource,
  type Environment,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket } from 'aws-cdk-lib/aws-s3';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { ANNOTATIONS_IN_VALIDATION_REPORT } from 'aws-cdk-lib/cx-api';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { pipelinePropsFromConfig } from '../../lib/construct/config-to-props.ts';
import { addPipelineChecks } from '../../lib/pipeline-app.ts';
import { physicalNameOf } from '../../lib/platform/rules/fixed-name-lifetime.ts';
import { SecurityPipeline, type SecurityPipelineProps } from '../../lib/security-pipeline.ts';
import { testApp } from './synth.ts';

export const ENVIRONMENTS = ['agnostic', 'pinned'] as const;
export const CONFIGURATIONS = ['defaults', 'example', 'per-api'] as const;
export const RESOURCES = ['made', 'brought', 'imported', 'customer-key'] as const;
export const NEIGHBOURS = ['alone', 'dev-and-prod', 'two-in-one-stack'] as const;

export interface MatrixRow {
  readonly environment: (typeof ENVIRONMENTS)[number];
  readonly configuration: (typeof CONFIGURATIONS)[number];
  readonly resources: (typeof RESOURCES)[number];
  readonly neighbours: (typeof NEIGHBOURS)[number];
}

/** The documented example configuration (docs/configuration.md), without its stack settings. */
function exampleSettings(): PipelineConfigInput {
  const file = JSON.parse(
    readFileSync(new URL('../../config/pipeline.example.json', import.meta.url), 'utf8'),
  ) as PipelineConfigInput;
  const { stack: _stack, $schema: _schema, ...settings } = file;
  return settings;
}

export function settingsFor(configuration: MatrixRow['configuration']): PipelineConfigInput {
  switch (configuration) {
    case 'defaults':
      return {};
    case 'example':
      return exampleSettings();
    case 'per-api':
      return { vendor: { keys: 'per-api' }, lambdaRuntime: 'nodejs22.x' };
  }
}

/** One pipeline of a synthesized shape, with what a check needs to tell it from its neighbours. */
export interface MatrixUnit {
  readonly label: string;
  readonly stack: Stack;
  readonly pipeline: SecurityPipeline;
  /** The stack's template as the cloud assembly holds it. */
  readonly template: { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
  /** Logical IDs of the resources under this pipeline. */
  readonly logicalIds: ReadonlySet<string>;
  /** What was brought or imported for it. */
  readonly brought: {
    readonly inputBucketName?: string;
    readonly key?: Key;
    readonly buckets: readonly IBucket[];
    readonly secrets: readonly ISecret[];
  };
}

export interface MatrixShape {
  readonly app: App;
  readonly units: readonly MatrixUnit[];
  /** Every stack's outputs' export names. */
  readonly exports: readonly string[];
}

/** Builds and synthesizes `row` in `pinned` (when it is pinned), with the app's checks. */
export function synthesizeRow(row: MatrixRow, pinned: Required<Environment>): MatrixShape {
  const app = testApp();
  // Warnings (the placeholder vendor URL, an imported resource's rules) stay out of the validation
  // report, which would print them on every row; an error annotation still fails the row after
  // synth, as it fails `cdk synth`.
  app.node.setContext(ANNOTATIONS_IN_VALIDATION_REPORT, false);
  const env = row.environment === 'pinned' ? { env: pinned } : {};
  const settings = settingsFor(row.configuration);
  const placements: { stack: Stack; id: string; label: string }[] = [];
  if (row.neighbours === 'dev-and-prod') {
    for (const stage of ['dev', 'prod']) {
      const stack = new Stack(app, `SecurityPipeline-${stage}`, env);
      placements.push({ stack, id: 'Default', label: stack.stackName });
    }
  } else {
    const stack = new Stack(app, 'SecurityPipeline', env);
    placements.push({ stack, id: 'Default', label: 'Default' });
    if (row.neighbours === 'two-in-one-stack') placements.push({ stack, id: 'Second', label: 'Second' });
  }
  const built = placements.map(({ stack, id, label }) => {
    const brought = bring(stack, `${id}Brought`, row, settings);
    // The configuration file's settings as the app passes them: mapped onto the construct's props.
    const props = pipelinePropsFromConfig(parsePipelineConfig(settings, 'the matrix row'));
    const pipeline = new SecurityPipeline(stack, id, { ...props, ...brought.props });
    return { stack, pipeline, label, brought: brought.record };
  });
  addPipelineChecks(app);
  const assembly = app.synth();
  const errors = assembly.stacks
    .flatMap((artifact) => artifact.messages)
    .filter((message) => message.level === 'error')
    .map((message) => `${message.id}: ${String(message.entry.data)}`);
  if (errors.length > 0) throw new Error(`synth errors:\n${errors.join('\n')}`);
  const units = built.map(({ stack, pipeline, label, brought }) => ({
    label,
    stack,
    pipeline,
    template: assembly.getStackByName(stack.stackName).template as MatrixUnit['template'],
    logicalIds: new Set(
      pipeline.node
        .findAll()
        .filter((c): c is CfnElement => c instanceof CfnElement)
        .map((c) => stack.resolve(c.logicalId) as string),
    ),
    brought,
  }));
  const exports = assembly.stacks.flatMap((artifact) =>
    Object.values(
      (artifact.template as { Outputs?: Record<string, { Export?: { Name?: unknown } }> }).Outputs ?? {},
    )
      .map((output) => output.Export?.Name)
      .filter((name) => name !== undefined)
      .map((name) => JSON.stringify(name)),
  );
  return { app, units, exports };
}

/** The resources a row brings to one pipeline, created under `id` in `stack`. */
function bring(
  stack: Stack,
  id: string,
  row: MatrixRow,
  settings: PipelineConfigInput,
): { props: Partial<SecurityPipelineProps>; record: MatrixUnit['brought'] } {
  const perApi = settings.vendor?.keys === 'per-api';
  const secretProp = (secret: ISecret): Partial<SecurityPipelineProps> =>
    perApi ? { vendorKeySecrets: { keys: secret } } : { vendorKeySecret: secret };
  switch (row.resources) {
    case 'made':
      return { props: {}, record: { buckets: [], secrets: [] } };
    case 'imported': {
      const inputBucketName = `${stack.stackName.toLowerCase()}-${id.toLowerCase()}-input`;
      const inputBucket = Bucket.fromBucketName(stack, `${id}Input`, inputBucketName);
      const secret = Secret.fromSecretNameV2(stack, `${id}Key`, `${stack.stackName}/${id}/vendor-key`);
      return {
        props: { inputBucket, ...secretProp(secret) },
        record: { inputBucketName, buckets: [inputBucket], secrets: [secret] },
      };
    }
    case 'brought':
    case 'customer-key': {
      const key =
        row.resources === 'customer-key'
          ? new Key(stack, `${id}Cmk`, { enableKeyRotation: true, removalPolicy: RemovalPolicy.RETAIN })
          : undefined;
      // The team's buckets log their requests, as cdk-nag asks of every bucket, to a bucket of its own.
      const accessLogs = new Bucket(stack, `${id}AccessLogs`, {
        enforceSSL: true,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        encryption: BucketEncryption.S3_MANAGED,
      });
      Validations.of(accessLogs).acknowledge({
        id: 'AwsSolutions-S1',
        reason: 'The access log bucket of the brought buckets does not log into itself.',
      });
      const bucket = (bucketId: string) =>
        new Bucket(stack, `${id}${bucketId}`, {
          versioned: true,
          enforceSSL: true,
          serverAccessLogsBucket: accessLogs,
          serverAccessLogsPrefix: `${bucketId.toLowerCase()}/`,
          blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
          ...(key === undefined
            ? { encryption: BucketEncryption.S3_MANAGED }
            : { encryption: BucketEncryption.KMS, encryptionKey: key, bucketKeyEnabled: true }),
        });
      const [inputBucket, resultsBucket] = [bucket('Input'), bucket('Results')];
      const secret = new Secret(stack, `${id}Key`, {
        generateSecretString: {
          secretStringTemplate: '{"placeholder":"put the key here"}',
          generateStringKey: 'nonce',
        },
        ...(key === undefined ? {} : { encryptionKey: key }),
      });
      return {
        props: { inputBucket, resultsBucket, ...secretProp(secret) },
        record: { ...(key ? { key } : {}), buckets: [inputBucket, resultsBucket], secrets: [secret] },
      };
    }
  }
}

/** The physical names (and their resource paths) given to resources under the unit's pipeline. */
export function physicalNames(unit: MatrixUnit): Map<string, string> {
  const names = new Map<string, string>();
  for (const node of unit.pipeline.node.findAll()) {
    if (!(node instanceof CfnResource)) continue;
    const name = physicalNameOf(node);
    if (name !== undefined) names.set(JSON.stringify(unit.stack.resolve(name)), node.node.path);
  }
  return names;
}
