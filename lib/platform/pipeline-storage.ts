import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type BucketProps,
  type CfnBucket,
  type IBucket,
  type LifecycleRule,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { STAGING_PREFIX } from '#lambdas/platform/s3/staging';
import type { DataRemovalPolicy } from '../config/schema.ts';
import { acknowledge } from './nag.ts';

export interface PipelineStorageProps {
  /**
   * What happens to the buckets when the stack is deleted. `destroy` also empties them first.
   * @default 'retain'
   */
  readonly removalPolicy?: DataRemovalPolicy;
  /**
   * Days after which a non-current object version is deleted.
   * @default 90
   */
  readonly noncurrentVersionExpirationDays?: number;
  /**
   * Days after which server access logs are deleted; undefined keeps them forever.
   * @default 90
   */
  readonly accessLogExpirationDays?: number;
  /** A bucket the team brings for uploads (checked in lib/brought-resources.ts). @default - created here */
  readonly inputBucket?: IBucket;
  /** A bucket the team brings for results (checked in lib/brought-resources.ts). @default - created here */
  readonly resultsBucket?: IBucket;
}

/**
 * The pipeline's buckets: domain lists come in (input), scan outputs and list summaries go out
 * (results), and S3 server access logs of both land in a third bucket.
 *
 * Encryption is SSE-S3 (S3_MANAGED), not KMS: every reader (handlers, the Distributed Map's
 * ItemReader/ResultWriter, operators downloading reports) would need a key-policy grant, and a
 * customer-managed key adds a monthly and a per-request cost. SSE-S3 encrypts at rest with no policy
 * to keep in sync; switch to KMS here if your compliance regime demands it.
 */
export class PipelineStorage extends Construct {
  /** Domain lists are uploaded here; S3 sends its events to EventBridge. */
  public readonly inputBucket: IBucket;
  /** Scan outputs, manifests, failures, list items and summaries (docs/contracts.md S3 layout). */
  public readonly resultsBucket: IBucket;
  /** S3 server access logs of the buckets created here; undefined when both were brought. */
  public readonly accessLogsBucket: Bucket | undefined;

  constructor(scope: Construct, id: string, props: PipelineStorageProps = {}) {
    super(scope, id);
    // Log delivery authorised by a bucket policy (not the legacy LogDeliveryWrite ACL), so every
    // bucket can be BUCKET_OWNER_ENFORCED. Set here so the construct does not depend on cdk.json.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    const removal = props.removalPolicy ?? 'retain';
    if (removal !== 'retain' && removal !== 'destroy') {
      throw new Error(
        `PipelineStorage ${id}: removalPolicy must be 'retain' or 'destroy' (got '${String(removal)}')`,
      );
    }
    const noncurrentDays = props.noncurrentVersionExpirationDays ?? 90;
    if (!Number.isInteger(noncurrentDays) || noncurrentDays < 1) {
      throw new Error(
        `PipelineStorage ${id}: noncurrentVersionExpirationDays must be a whole number >= 1 (got ${noncurrentDays})`,
      );
    }
    const logDays = props.accessLogExpirationDays === undefined ? 90 : props.accessLogExpirationDays;
    if (!Number.isInteger(logDays) || logDays < 1) {
      throw new Error(
        `PipelineStorage ${id}: accessLogExpirationDays must be a whole number >= 1 (got ${logDays})`,
      );
    }

    const lifecycle: LifecycleRule[] = [
      {
        id: 'abort-incomplete-multipart-uploads',
        // Outputs are streamed as multipart uploads; a crashed fetch leaves parts that are billed until aborted.
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
      {
        id: 'expire-noncurrent-versions',
        // Versioning guards against overwrites; old versions need not be kept forever.
        noncurrentVersionExpiration: Duration.days(noncurrentDays),
      },
      {
        id: 'expire-abandoned-staging',
        // An upload is staged under staging/ only until it is verified and copied to its final key
        // (minutes, within one invocation); one still there after a week was left by a crash and
        // is no result. Nothing else is ever written there.
        prefix: STAGING_PREFIX,
        expiration: Duration.days(7),
        noncurrentVersionExpiration: Duration.days(1),
      },
    ];
    const common: BucketProps = {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: BucketEncryption.S3_MANAGED,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      // A non-empty bucket cannot be deleted; `destroy` is for throw-away stacks, so empty it first.
      autoDeleteObjects: removal === 'destroy',
    };

    const accessLogsBucket =
      props.inputBucket !== undefined && props.resultsBucket !== undefined
        ? undefined
        : new Bucket(this, 'AccessLogs', {
            ...common,
            lifecycleRules: [...lifecycle, { id: 'expire-access-logs', expiration: Duration.days(logDays) }],
          });
    this.accessLogsBucket = accessLogsBucket;
    if (accessLogsBucket !== undefined) {
      acknowledge(
        accessLogsBucket,
        'AwsSolutions-S1',
        'This is the server access log bucket; logging it into itself would log its own log deliveries.',
      );
    }
    const created = (bucketId: string, logPrefix: string) =>
      new Bucket(this, bucketId, {
        ...common,
        serverAccessLogsBucket: accessLogsBucket,
        serverAccessLogsPrefix: logPrefix,
        lifecycleRules: lifecycle,
      });

    const inputBucket = props.inputBucket ?? created('Input', 'input/');
    if (props.inputBucket === undefined) {
      // EventBridge delivery set on the bucket itself, not through `eventBridgeEnabled`: that
      // property makes CDK add a Python custom resource (function, role, managed policy, log group
      // without retention) to apply a setting CloudFormation supports natively. A brought bucket
      // gets the same setting in lib/brought-resources.ts.
      (inputBucket.node.defaultChild as CfnBucket).addPropertyOverride(
        'NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled',
        true,
      );
    }
    this.inputBucket = inputBucket;
    this.resultsBucket = props.resultsBucket ?? created('Results', 'results/');
  }
}
