/** The vocabulary of lambdas/registry.ts: what a handler can declare it touches. Plain types, no CDK. */

/** S3 actions, named as IAM names them (`s3:<action>`). */
export type S3Action =
  | 'GetObject'
  | 'GetObjectVersion'
  | 'PutObject'
  | 'AbortMultipartUpload'
  | 'DeleteObjectVersion'
  | 'ListBucket'
  | 'DeleteObject';

export type BucketName = 'results' | 'input';

/**
 * The workflows the platform serves, filled by each workflow's registry through declaration
 * merging (`declare module '#lambdas/platform/handler-declaration' { interface WorkflowRegistry {
 * <name>: true } }`), so the platform names none and every use of a name is still type-checked.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the workflows' registries add the members
export interface WorkflowRegistry {}

/** The workflow a handler serves; its deps are built the same way for every handler of one workflow. */
export type WorkflowName = keyof WorkflowRegistry & string;

export interface BucketUse {
  readonly bucket: BucketName;
  /** Key prefix the actions apply to, ending in `/` (the workflow's folder); '' is the whole bucket. */
  readonly prefix: '' | `${string}/`;
  readonly actions: readonly S3Action[];
}

export type VendorApi = 'scan' | 'keys' | 'breach';

export type StateMachineAction = 'StartExecution' | 'DescribeExecution';

export interface HandlerDeclaration {
  readonly workflow: WorkflowName;
  /** Task states of the synthesized workflows that invoke this handler. */
  readonly states: readonly string[];
  /** Object access, per bucket and prefix. */
  readonly s3: readonly BucketUse[];
  /**
   * Buckets whose name the handler's settings read without any access (validated at cold start or
   * used to ignore foreign events): env var only, no grant.
   */
  readonly bucketNamesOnly: readonly BucketName[];
  /** Vendor APIs called; each means reading that API's key secret. */
  readonly vendorApis: readonly VendorApi[];
  /** Actions on the domain-list state machine (its executions for DescribeExecution). */
  readonly listStateMachine: readonly StateMachineAction[];
  /**
   * Actions on the per-domain ScanDomain machine's executions: the list summary looks up a child
   * that already ran when a redriven run meets ExecutionAlreadyExists.
   * @default []
   */
  readonly scanStateMachine?: readonly StateMachineAction[];
  /**
   * Actions on the per-person BreachReport machine's executions: the watchlist summary looks up a
   * child that already ran when a redriven run meets ExecutionAlreadyExists.
   * @default []
   */
  readonly breachStateMachine?: readonly StateMachineAction[];
  /**
   * Reads the key of the keyed hash that names people (`BREACH_IDENTITY_KEY_SECRET_ARN`).
   * @default false
   */
  readonly breachIdentityKey?: boolean;
  /**
   * Reads the key of the keyed hash that names report folders (`BREACH_REPORT_NAMING_KEY_SECRET_ARN`).
   * @default false
   */
  readonly breachReportNamingKey?: boolean;
  /**
   * What it does with the rotated vendor key secret:
   * - `rotate`: the four rotation steps (DescribeSecret, GetSecretValue, PutSecretValue,
   *   UpdateSecretVersionStage on that secret only), the mirror secrets (PutSecretValue,
   *   GetSecretValue) and ApiKeyRotated on the default event bus (events:PutEvents);
   * - `describe`: its rotation dates only (DescribeSecret), for the key-age check.
   * @default none
   */
  readonly rotatedSecret?: 'rotate' | 'describe';
  /**
   * Puts events on the default EventBridge bus (`events:PutEvents`): run-finished, ApiKeyRotated.
   * @default false
   */
  readonly publishesEvents?: boolean;
  /**
   * Reads the pause switch (`ssm:GetParameter` on that parameter, `PAUSE_PARAMETER_NAME`).
   * @default false
   */
  readonly readsPauseSwitch?: boolean;
  /**
   * Replays the starts a pause held: receives and deletes messages of the intake dead-letter queues
   * and invokes the intake functions (`HELD_START_QUEUE_URLS`).
   * @default false
   */
  readonly replaysHeldStarts?: boolean;
}

/**
 * Writes on the results bucket go through `streamToS3` (lambdas/platform/s3/stream-upload.ts):
 * PutObject or a multipart upload (PutObject, AbortMultipartUpload on failure), then a multipart
 * copy of the version just written to the final key to add the sha256 metadata (UploadPartCopy
 * reads its source by version id: GetObjectVersion, as the buckets are versioned; PutObject for
 * CreateMultipartUpload, UploadPartCopy and the conditional CompleteMultipartUpload), then the
 * uploaded version is deleted by its id (DeleteObjectVersion), so no noncurrent copy stays.
 */
export const STREAMED_WRITE: readonly S3Action[] = [
  'PutObject',
  'AbortMultipartUpload',
  'GetObjectVersion',
  'DeleteObjectVersion',
];
