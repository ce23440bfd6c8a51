/**
 * Grant-and-bind helpers: each one grants a function exactly the access a handler needs AND sets
 * the environment variable that handler reads (docs/contracts.md), so the two never drift apart.
 */
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { VendorApiName } from '../config/index.ts';
import { acknowledgeWildcards, arnFinding } from './nag.ts';
import type { PipelineFunction } from './pipeline-function.ts';
import type { VendorSecrets } from './vendor-secrets.ts';

/** What a function may do with the objects under its prefix. */
export type BucketAccess = 'read' | 'write' | 'readWrite';

/** Result-bucket prefixes from the S3 layout in docs/contracts.md. */
export type ResultsPrefix = 'scans/' | 'lists/';

/**
 * Grants `access` to `<prefix>*` of the results bucket and sets `RESULTS_BUCKET`.
 *
 * - read: `s3:GetObject` on the prefix, plus `s3:ListBucket` on the bucket. Without ListBucket S3
 *   answers 403 instead of 404 for a missing key, and the handlers treat "not there yet" as normal.
 * - write: `s3:PutObject`, `s3:AbortMultipartUpload` (outputs are streamed as multipart uploads)
 *   and object tagging. Never `s3:DeleteObject`: the pipeline does not delete what it stored.
 * - readWrite: both; a CopyObject onto the same key (adding the sha256 metadata after a multipart
 *   upload) needs GetObject/GetObjectVersion on the source and PutObject on the target.
 */
export function bindResultsBucket(
  fn: PipelineFunction,
  bucket: IBucket,
  access: BucketAccess,
  prefix: ResultsPrefix,
): void {
  grantObjects(fn, bucket, access, prefix, `the ${prefix} prefix of the results bucket`);
  fn.addEnvironment('RESULTS_BUCKET', bucket.bucketName);
}

/**
 * Sets `RESULTS_BUCKET` without any grant, for a handler that never touches S3 but whose shared
 * settings (`#core/runtime/settings`) validate the variable at cold start (StartScan).
 */
export function bindResultsBucketName(fn: PipelineFunction, bucket: IBucket): void {
  fn.addEnvironment('RESULTS_BUCKET', bucket.bucketName);
}

/**
 * Grants read access to the input bucket (domain lists) and sets `INPUT_BUCKET`. The whole bucket:
 * a schedule's list object may live outside the intake prefix.
 */
export function bindInputBucket(fn: PipelineFunction, bucket: IBucket): void {
  grantObjects(fn, bucket, 'read', '', 'the input bucket, which holds only domain lists');
  fn.addEnvironment('INPUT_BUCKET', bucket.bucketName);
}

/**
 * Grants `secretsmanager:GetSecretValue` on exactly the secrets of `apis` and sets their variables.
 *
 * - `single` mode: `VENDOR_API_KEY_SECRET_ARN` (the one org key).
 * - `per-api` mode: `SCAN_/KEYS_/BREACH_API_KEY_SECRET_ARN` for each API in `apis`, and also
 *   `VENDOR_API_KEY_SECRET_ARN` when exactly one API is bound, so a handler that only knows the
 *   default variable still reads the right key.
 */
export function bindVendorSecrets(
  fn: PipelineFunction,
  secrets: VendorSecrets,
  apis: readonly VendorApiName[],
): void {
  for (const api of setSecretVariables(fn, secrets, apis)) secrets.secretFor(api).grantRead(fn);
}

function setSecretVariables(
  fn: PipelineFunction,
  secrets: VendorSecrets,
  apis: readonly VendorApiName[],
): VendorApiName[] {
  if (apis.length === 0)
    throw new Error(`${fn.node.path}: a vendor secret binding must name at least one API`);
  const unique = [...new Set(apis)];
  if (secrets.mode === 'single') {
    fn.addEnvironment('VENDOR_API_KEY_SECRET_ARN', secrets.secretFor('scan').secretArn);
    return unique;
  }
  for (const api of unique) {
    fn.addEnvironment(`${api.toUpperCase()}_API_KEY_SECRET_ARN`, secrets.secretFor(api).secretArn);
  }
  if (unique.length === 1) {
    fn.addEnvironment('VENDOR_API_KEY_SECRET_ARN', secrets.secretFor(unique[0] as VendorApiName).secretArn);
  }
  return unique;
}

/** Grants `states:StartExecution` on the domain-list machine and sets `DOMAIN_LIST_STATE_MACHINE_ARN`. */
export function bindStateMachineStarter(fn: PipelineFunction, stateMachine: IStateMachine): void {
  stateMachine.grantStartExecution(fn);
  fn.addEnvironment('DOMAIN_LIST_STATE_MACHINE_ARN', stateMachine.stateMachineArn);
}

function grantObjects(
  fn: PipelineFunction,
  bucket: IBucket,
  access: BucketAccess,
  prefix: string,
  scopeDescription: string,
): void {
  const objects = bucket.arnForObjects(`${prefix}*`);
  if (access === 'read' || access === 'readWrite') {
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:GetObject', 's3:GetObjectVersion'], resources: [objects] }),
    );
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  }
  if (access === 'write' || access === 'readWrite') {
    fn.addToRolePolicy(
      new PolicyStatement({
        // Tagging: outputs over 5 GiB carry their sha256 as a tag (a copy cannot rewrite their metadata).
        actions: [
          's3:PutObject',
          's3:AbortMultipartUpload',
          's3:PutObjectTagging',
          's3:PutObjectVersionTagging',
        ],
        resources: [objects],
      }),
    );
  }
  acknowledgeWildcards(
    fn.executionRole,
    [arnFinding(bucket, `/${prefix}*`)],
    `Object access is scoped to ${scopeDescription}; object keys are only known at run time (domain, date, scan id).`,
  );
}
