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
 * What a workflow gives the platform so that it can bind the workflow's own resources to handlers
 * without naming any: the variable names the workflow's handlers read (they are in the deployed
 * template, and each workflow names its own). `Secret`: the secret names (lambdas/registry.ts).
 */
export interface WorkflowBindings<Secret extends string = string> {
  /**
   * Its state machine: the variable that carries the ARN, and the machine's name in nag reasons
   * and synth errors.
   */
  readonly stateMachine?: { readonly variable: string; readonly label: string };
  /** The variable that carries each of its secrets' ARN. */
  readonly secrets?: { readonly [S in Secret]?: string };
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

export type StateMachineAction = 'StartExecution' | 'DescribeExecution';

/**
 * What one handler touches. The platform names no workflow, API or secret: their names are type
 * parameters, which lambdas/registry.ts fills with its unions when it lists every handler.
 */
export interface HandlerDeclaration<
  Workflow extends string = string,
  Api extends string = string,
  Secret extends string = string,
> {
  readonly workflow: Workflow;
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
  readonly vendorApis: readonly Api[];
  /**
   * Actions on workflows' state machines, by the workflow that owns the machine: an intake starts
   * its workflow's machine; a run's summary looks up a child that already ran when a redriven run
   * meets ExecutionAlreadyExists. Each machine reaches the handler through the variable its
   * workflow registers (`WorkflowBindings.stateMachine`).
   * @default {}
   */
  readonly stateMachines?: { readonly [W in Workflow]?: readonly StateMachineAction[] };
  /**
   * Secrets other than vendor keys it reads (GetSecretValue), by their name in lambdas/registry.ts
   * (`WorkflowBindings.secrets` gives each one's variable): e.g. the keys of keyed hashes.
   * @default []
   */
  readonly secrets?: readonly Secret[];
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
   * Ends callback tasks with the task tokens it holds (`states:SendTaskSuccess`, which IAM grants on
   * "*" only: the token selects the task).
   * @default false
   */
  readonly sendsTaskSuccess?: boolean;
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
 * A handler as the platform's constructs take it, resolved by lambdas/registry.ts from its file
 * name: the platform reads what it needs from here and so names no workflow itself.
 */
export interface RegisteredHandler {
  /** The handler's file name without extension, e.g. `write-summary`. */
  readonly file: string;
  /** Its module, relative to the repository: `lambdas/<workflow folder>/<file>.ts`. */
  readonly entryPath: string;
  readonly declaration: HandlerDeclaration;
  /**
   * Whether its log may carry an email address despite the redaction every line passes (it reads
   * the vendor's answers or handles people): its log group then masks them as a second net.
   */
  readonly logsMayCarryPersonalData: boolean;
  /**
   * Every workflow's bindings, by workflow name: the variables through which the state machines
   * and secrets its declaration names reach it.
   */
  readonly workflowBindings: Readonly<Record<string, WorkflowBindings>>;
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
