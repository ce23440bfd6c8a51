/**
 * The resources a team may bring to `SecurityPipeline` instead of letting it create them, as props
 * (the rules each must meet are checked in lib/brought-resources.ts). Plain interfaces of CDK's
 * own types, so jsii compiles them as they are.
 */
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';

/** The resources a team may already own and hand to the pipeline instead of letting it create them. */
export interface SecurityPipelineResources {
  /**
   * Domain lists and watchlists are uploaded here. It must be versioned (a run is named by the
   * uploaded object's version), SSL-only, with S3 Block Public Access on, encrypted with SSE-S3 or a
   * customer managed KMS key (its `encryptionKey`: the roles that read it are granted that key). It
   * must not be `resultsBucket`.
   *
   * The pipeline turns its EventBridge notifications on: on a bucket defined in this app through its
   * `NotificationConfiguration`; on an imported one (`Bucket.fromBucketName`) through CDK's bucket
   * notifications custom resource, which reads the bucket's notification configuration and writes it
   * back with EventBridge on, keeping every notification it did not add (and leaves EventBridge on
   * when the stack is deleted, as it cannot tell whether another stack relies on it).
   * @default - a bucket the pipeline creates, with the same rules and server access logs
   */
  readonly inputBucket?: IBucket;
  /**
   * Scan outputs, list summaries and breach reports are written here. The same rules as
   * `inputBucket`: versioned, SSL-only, Block Public Access on, SSE-S3 or a customer managed key.
   * @default - a bucket the pipeline creates
   */
  readonly resultsBucket?: IBucket;
  /**
   * Every alarm of the pipeline notifies this topic on ALARM and OK. When encrypted, its key must be
   * a customer managed key (CloudWatch cannot use the AWS managed `alias/aws/sns` key); the pipeline
   * adds CloudWatch's statements to the topic's and the key's policies when they are in this app.
   * @default - an SSL-only topic the pipeline creates under its own KMS key
   */
  readonly alarmTopic?: ITopic;
  /**
   * The Secrets Manager secret holding the vendor org API key as JSON `{"apiKey": "…", "orgUuid":
   * "…"}`, for `vendor.keys: 'single'` only. Encrypted with the AWS managed key, or a customer
   * managed key given as its `encryptionKey` (the roles that read or rotate it are granted that key,
   * through Secrets Manager only); its value never in the template. With
   * `rotation.enabled` the pipeline adds its rotation schedule, so it must have none of its own.
   * @default - a secret the pipeline creates with a placeholder value
   */
  readonly vendorKeySecret?: ISecret;
  /**
   * Secrets holding each vendor API's own key, for `vendor.keys: 'per-api'` only: any of them, by
   * API name (`scan`, `keys`, `breach`); the pipeline creates the others with a placeholder. Each
   * meets the rules of `vendorKeySecret`; the `keys` API's secret holds the org key, which
   * `rotation.enabled` rotates, so it must then have no rotation of its own.
   * @default - one secret per API, created with a placeholder value
   */
  readonly vendorKeySecrets?: VendorKeySecrets;
}

/** A secret per vendor API, for `vendor.keys: VendorKeyStorage.PER_API`; any left out is created. */
export interface VendorKeySecrets {
  /**
   * The scanning API's key.
   * @default - a secret the pipeline creates with a placeholder value
   */
  readonly scan?: ISecret;
  /**
   * The key-management API's key: the org key, which `rotation.enabled` rotates.
   * @default - a secret the pipeline creates with a placeholder value
   */
  readonly keys?: ISecret;
  /**
   * The breach-report API's key.
   * @default - a secret the pipeline creates with a placeholder value
   */
  readonly breach?: ISecret;
}
