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

/**
 * The secrets (other than vendor keys) handlers may read, filled by the workflow that owns each,
 * through declaration merging as WorkflowRegistry is.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the workflows' registries add the members
export interface SecretRegistry {}

export type SecretName = keyof SecretRegistry & string;

/**
 * What a workflow gives the platform so that it can bind the workflow's own resources to handlers
 * without naming any: the variable names the workflow's handlers read (they are in the deployed
 * template, and each workflow names its own).
 */
export interface WorkflowBindings {
  /**
   * Its state machine: the variable that carries the ARN, and the machine's name in nag reasons
   * and synth errors.
   */
  readonly stateMachine?: { readonly variable: string; readonly label: string };
  /** The variable that carries each of its secrets' ARN. */
  readonly secrets?: { readonly [S in SecretName]?: string };
  /**
   * The variable listing the mirror secrets' ARNs, for its handler that declares
   * `rotatedSecret: 'rotate'`.
   */
  readonly mirrorSecretsVariable?: string;
}

export interface BucketUse {
  readonly bucket: BucketName;
  /** Key prefix the actions apply to, ending in `/` (the workflow's folder); '' is the whole bucket. */
  readonly prefix: '' | `${string}/`;
  readonly actions: readonly S3Action[];
}

/**
 * The vendor's APIs (the vendor documents three), filled by each API's client folder through
 * declaration merging (`declare module '#lambdas/platform/handler-declaration' { interface
 * VendorApiRegistry { <name>: true } }` in `lambdas/<workflow>/vendor-api/types.ts`), so the
 * platform names none and every use of a name is still type-checked. The values the platform
 * needs (every API's name, for the per-API secrets and a secret's `apiKeys`) come from its callers:
 * lambdas/vendor-apis.ts holds them.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the API clients' type modules add the members
export interface VendorApiRegistry {}

/** A vendor API by the name the vendor gives it, e.g. `scan`: its URL, key and operations. */
export type VendorApi = keyof VendorApiRegistry & string;

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
  /**
   * Actions on workflows' state machines, by the workflow that owns the machine: an intake starts
   * its workflow's machine; a run's summary looks up a child that already ran when a redriven run
   * meets ExecutionAlreadyExists. Each machine reaches the handler through the variable its
   * workflow registers (`WorkflowBindings.stateMachine`).
   * @default {}
   */
  readonly stateMachines?: { readonly [W in WorkflowName]?: readonly StateMachineAction[] };
  /**
   * Secrets other than vendor keys it reads (GetSecretValue), by the name their workflow
   * registers (`SecretRegistry`, `WorkflowBindings.secrets`): e.g. the keys of keyed hashes.
   * @default []
   */
  readonly secrets?: readonly SecretName[];
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
