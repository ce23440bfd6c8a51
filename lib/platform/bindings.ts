/**
 * Grant-and-bind helpers: a function gets exactly the access its handler declares in
 * lambdas/registry.ts AND the environment variables that handler reads (docs/contracts.md), so
 * grants, variables and declarations never drift apart.
 */
import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStringParameter } from 'aws-cdk-lib/aws-ssm';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { BucketName, BucketUse, StateMachineAction } from '#lambdas/platform/handler-declaration';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { MirrorSecret } from '../config/rotation-schema.ts';
import { grantBucketKey, grantSecretKey, s3KeyUse } from './customer-keys.ts';
import { acknowledgeWildcards, arnFinding, executionsFinding } from './nag.ts';
import type { PipelineFunction } from './pipeline-function.ts';
import type { VendorSecrets } from './vendor-secrets.ts';

/** The resources a handler's declaration (lambdas/registry.ts) may refer to. */
export interface DeclaredResources {
  readonly resultsBucket?: IBucket;
  readonly inputBucket?: IBucket;
  readonly vendorSecrets?: VendorSecrets;
  /** The workflows' state machines handlers start or look up, by the workflow that owns each. */
  readonly stateMachines?: { readonly [workflow: string]: IStateMachine | undefined };
  /** The secrets (other than vendor keys) handlers read, by their registered name. */
  readonly secrets?: { readonly [secret: string]: ISecret | undefined };
  /** The pause switch, and for the resume function the intakes whose refused events it replays. */
  readonly pause?: {
    readonly parameter: IStringParameter;
    readonly held?: readonly { readonly queue: IQueue; readonly fn: IFunction }[];
  };
  /** The vendor key secret that native rotation rotates, and the secrets that mirror it. */
  readonly rotatedSecret?: { readonly secret: ISecret; readonly mirrors: readonly MirrorSecret[] };
}

/**
 * Grants `fn` exactly what its handler declares in lambdas/registry.ts and sets the variables the
 * handler reads for it (`RESULTS_BUCKET`, `INPUT_BUCKET`, the secret ARNs, and the variables each
 * workflow gives for its state machine and secrets, its `WorkflowBindings`). A declared resource the
 * caller did not pass is a synth error.
 */
export function bindDeclared(fn: PipelineFunction, resources: DeclaredResources): void {
  const declaration = fn.registered.declaration;
  const bucketOf = (name: BucketName): IBucket => {
    const bucket = name === 'results' ? resources.resultsBucket : resources.inputBucket;
    if (!bucket) throw missing(fn, `the ${name} bucket`);
    return bucket;
  };
  for (const name of declaration.bucketNamesOnly) {
    fn.addEnvironment(BUCKET_VARIABLES[name], bucketOf(name).bucketName);
  }
  for (const use of declaration.s3) {
    const bucket = bucketOf(use.bucket);
    grantObjects(fn, bucket, use);
    fn.addEnvironment(BUCKET_VARIABLES[use.bucket], bucket.bucketName);
  }
  if (declaration.vendorApis.length > 0) {
    if (!resources.vendorSecrets) throw missing(fn, 'the vendor secrets');
    bindVendorSecrets(fn, resources.vendorSecrets, declaration.vendorApis);
  }
  for (const [owner, actions] of Object.entries(declaration.stateMachines ?? {})) {
    bindStateMachine(fn, owner, actions ?? [], resources, declaration.workflow);
  }
  if (declaration.rotatedSecret !== undefined) {
    if (!resources.rotatedSecret) throw missing(fn, 'the rotated vendor key secret');
    bindRotatedSecret(fn, declaration.rotatedSecret, resources.rotatedSecret, declaration.workflow);
  }
  if (declaration.readsPauseSwitch === true || declaration.replaysHeldStarts === true) {
    if (!resources.pause) throw missing(fn, 'the pause switch');
    bindPause(fn, resources.pause, declaration.replaysHeldStarts === true);
  }
  if (declaration.sendsTaskSuccess === true) {
    // The Service Authorization Reference lists no resource type for SendTaskSuccess: a policy must
    // name "*". Only a task token, which a workflow hands out with its callback task, selects a task.
    fn.addToRolePolicy(new PolicyStatement({ actions: ['states:SendTaskSuccess'], resources: ['*'] }));
    acknowledgeWildcards(
      fn.executionRole,
      ['Resource::*'],
      `states:SendTaskSuccess supports no resource-level permission (Service Authorization Reference); ${fn.handlerFile} ends only the callback tasks whose tokens it was given.`,
    );
  }
  if (declaration.publishesEvents === true) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['events:PutEvents'],
        resources: [
          Stack.of(fn).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' }),
        ],
      }),
    );
  }
  for (const name of declaration.secrets ?? []) {
    bindSecret(fn, name, resources);
  }
}

/**
 * The declared actions on the state machine of workflow `owner`, and the variable that workflow
 * registers for its ARN. DescribeExecution is on executions whose names the run that starts them
 * chooses (`describer`'s run), so it is granted on all of that machine's executions.
 */
function bindStateMachine(
  fn: PipelineFunction,
  owner: string,
  actions: readonly StateMachineAction[],
  resources: DeclaredResources,
  describer: string,
): void {
  if (actions.length === 0) return;
  const binding = fn.registered.workflowBindings[owner]?.stateMachine;
  if (binding === undefined) {
    throw new Error(`${fn.node.path}: the ${owner} workflow registers no state machine variable`);
  }
  const machine = resources.stateMachines?.[owner];
  if (!machine) throw missing(fn, `the ${binding.label} state machine`);
  if (actions.includes('StartExecution')) machine.grantStartExecution(fn);
  if (actions.includes('DescribeExecution')) {
    machine.grantExecution(fn, 'states:DescribeExecution');
    acknowledgeWildcards(
      fn.executionRole,
      [executionsFinding(machine, ':*')],
      `DescribeExecution on the executions of the ${binding.label} machine only: child names are chosen per ${describer} run, so they cannot be listed in advance.`,
    );
  }
  fn.addEnvironment(binding.variable, machine.stateMachineArn);
}

/** GetSecretValue on one registered secret, and the variable its workflow registers for it. */
function bindSecret(fn: PipelineFunction, name: string, resources: DeclaredResources): void {
  const variable = Object.values(fn.registered.workflowBindings)
    .map((bindings) => bindings.secrets?.[name])
    .find((found) => found !== undefined);
  if (variable === undefined) throw new Error(`${fn.node.path}: no workflow registers the secret ${name}`);
  const secret = resources.secrets?.[name];
  if (!secret) throw missing(fn, `the secret ${name}`);
  // Not grantRead: it adds secretsmanager:DescribeSecret, which no handler calls.
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
  );
  grantSecretKey(fn, secret, 'read');
  fn.addEnvironment(variable, secret.secretArn);
}

/**
 * The rotation function may version this one secret (and write its mirrors); the age check may only
 * describe it. The rotation function gets the secret's id from Secrets Manager's event, the age
 * check from ROTATED_SECRET_ARN. ApiKeyRotated is granted by `publishesEvents`.
 */
function bindRotatedSecret(
  fn: PipelineFunction,
  use: 'rotate' | 'describe',
  rotated: NonNullable<DeclaredResources['rotatedSecret']>,
  workflow: string,
): void {
  const arn = rotated.secret.secretArn;
  if (use === 'describe') {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:DescribeSecret'], resources: [arn] }));
    fn.addEnvironment(ENV.rotatedSecretArn, arn);
    return;
  }
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: [
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ],
      resources: [arn],
    }),
  );
  grantSecretKey(fn, rotated.secret, 'write');
  const mirrorArns = rotated.mirrors.map((mirror) => mirror.secretArn);
  if (mirrorArns.length === 0) return;
  const mirrorsVariable = fn.registered.workflowBindings[workflow]?.mirrorSecretsVariable;
  if (mirrorsVariable === undefined) {
    throw new Error(`${fn.node.path}: the ${workflow} workflow registers no variable for mirror secrets`);
  }
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['secretsmanager:PutSecretValue', 'secretsmanager:GetSecretValue'],
      resources: mirrorArns,
    }),
  );
  fn.addEnvironment(mirrorsVariable, mirrorArns.join(','));
  grantMirrorKeys(fn, rotated.mirrors);
}

/**
 * A mirror encrypted with a customer managed key: Secrets Manager uses the key on the caller's
 * behalf, so the caller needs it too (GenerateDataKey and Encrypt to write a version, Decrypt to
 * read it back), and only through Secrets Manager in the secret's Region (kms:ViaService), never
 * directly. https://docs.aws.amazon.com/secretsmanager/latest/userguide/security-encryption.html
 * The key's own policy must also allow the account's IAM policies (the default key policy does).
 */
function grantMirrorKeys(fn: PipelineFunction, mirrors: readonly MirrorSecret[]): void {
  const keysByRegion = new Map<string, Set<string>>();
  for (const { secretArn, kmsKeyArn } of mirrors) {
    if (kmsKeyArn === undefined) continue;
    const region = secretArn.split(':')[3] ?? '';
    keysByRegion.set(region, (keysByRegion.get(region) ?? new Set()).add(kmsKeyArn));
  }
  for (const [region, keys] of keysByRegion) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'],
        resources: [...keys],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${region}.amazonaws.com` } },
      }),
    );
  }
}

/**
 * The pause switch: `ssm:GetParameter` on that one parameter (not grantRead: no history or
 * describe). The resume function also receives and deletes on the intake dead-letter queues and
 * invokes the intake functions, the only way a held event goes back in.
 */
function bindPause(
  fn: PipelineFunction,
  pause: NonNullable<DeclaredResources['pause']>,
  replays: boolean,
): void {
  fn.addToRolePolicy(
    new PolicyStatement({ actions: ['ssm:GetParameter'], resources: [pause.parameter.parameterArn] }),
  );
  fn.addEnvironment(ENV.pauseParameterName, pause.parameter.parameterName);
  if (!replays) return;
  const held = pause.held ?? [];
  if (held.length === 0) throw missing(fn, 'the intakes whose held starts it replays');
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage'],
      resources: held.map(({ queue }) => queue.queueArn),
    }),
  );
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['lambda:InvokeFunction'],
      resources: held.map(({ fn: intake }) => intake.functionArn),
    }),
  );
  fn.addEnvironment(ENV.heldStartQueueUrls, held.map(({ queue }) => queue.queueUrl).join(','));
}

const BUCKET_VARIABLES: Record<BucketName, string> = {
  results: ENV.resultsBucket,
  input: ENV.inputBucket,
};

function missing(fn: PipelineFunction, what: string): Error {
  return new Error(
    `${fn.node.path}: lambdas/registry.ts declares that ${fn.handlerFile} uses ${what}, but none was passed to bindDeclared`,
  );
}

/**
 * Grants `secretsmanager:GetSecretValue` on exactly the secrets of `apis` and sets their variables.
 *
 * - `single` mode: `VENDOR_API_KEY_SECRET_ARN` (the one org key).
 * - `per-api` mode: `<API>_API_KEY_SECRET_ARN` (e.g. `SCAN_API_KEY_SECRET_ARN`, from
 *   `vendorApiVariables`) for each API in `apis`, and also
 *   `VENDOR_API_KEY_SECRET_ARN` when exactly one API is bound, so a handler that only knows the
 *   default variable still reads the right key.
 */
function bindVendorSecrets(fn: PipelineFunction, secrets: VendorSecrets, apis: readonly string[]): void {
  // Not grantRead: it adds secretsmanager:DescribeSecret, which no handler calls.
  const arns = setSecretVariables(fn, secrets, apis).map((api) => secrets.secretFor(api).secretArn);
  fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: arns }));
  for (const api of new Set(apis)) grantSecretKey(fn, secrets.secretFor(api), 'read');
}

function setSecretVariables(fn: PipelineFunction, secrets: VendorSecrets, apis: readonly string[]): string[] {
  const unique = [...new Set(apis)];
  const [first] = unique;
  if (first === undefined)
    throw new Error(`${fn.node.path}: a vendor secret binding must name at least one API`);
  if (secrets.mode === 'single') {
    // One secret serves every API: the first one's is the org key.
    fn.addEnvironment(ENV.vendorKeySecretArn, secrets.secretFor(first).secretArn);
    return unique;
  }
  for (const api of unique) {
    fn.addEnvironment(vendorApiVariables(api).keySecretArn, secrets.secretFor(api).secretArn);
  }
  if (unique.length === 1) {
    fn.addEnvironment(ENV.vendorKeySecretArn, secrets.secretFor(first).secretArn);
  }
  return unique;
}

function grantObjects(fn: PipelineFunction, bucket: IBucket, use: BucketUse): void {
  const objectActions = use.actions.filter((a) => a !== 'ListBucket');
  grantBucketKey(fn, bucket, s3KeyUse(objectActions));
  if (objectActions.length > 0) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: objectActions.map((a) => `s3:${a}`),
        resources: [bucket.arnForObjects(`${use.prefix}*`)],
      }),
    );
    const scope =
      use.prefix === '' ? `the ${use.bucket} bucket` : `the ${use.prefix} prefix of the ${use.bucket} bucket`;
    acknowledgeWildcards(
      fn.executionRole,
      [arnFinding(bucket, `/${use.prefix}*`)],
      `Object access is scoped to ${scope}; object keys are only known at run time (dates, domains, run ids).`,
    );
  }
  if (use.actions.includes('ListBucket')) {
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        ...(use.prefix === '' ? {} : { conditions: { StringLike: { 's3:prefix': [`${use.prefix}*`] } } }),
      }),
    );
  }
}
