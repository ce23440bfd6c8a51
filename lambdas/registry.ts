/**
 * What exists, in one place: the workflows, the vendor's APIs, the secrets handlers read, every
 * metric the pipeline records, and what each handler touches. Plain data and unions, no CDK: the
 * constructs grant exactly what a handler declares here and bind the matching environment variables
 * (lib/platform/bindings.ts); the least-privilege test compares it with what the handlers were seen
 * doing and with the synthesized policies.
 *
 * The platform (lambdas/platform/, lib/platform/) names none of these: it takes them as parameters
 * (a `RegisteredHandler`, the list of APIs) or type parameters (`HandlerDeclaration<…>`,
 * `PipelineMetrics<MetricName>`), so this file, not the platform, says what the pipeline is.
 */

import { BREACH_BINDINGS, BREACH_HANDLERS } from './breach/registry.ts';
import { DOMAIN_LIST_BINDINGS, DOMAIN_LIST_HANDLERS } from './domain-list/registry.ts';
import { OPERATIONS_HANDLERS } from './operations/registry.ts';
import type {
  HandlerDeclaration,
  RegisteredHandler,
  WorkflowBindings,
} from './platform/handler-declaration.ts';
import type { PlatformMetricName } from './platform/metrics.ts';
import { ROTATION_BINDINGS, ROTATION_HANDLERS } from './rotation/registry.ts';
import { SCAN_BINDINGS, SCAN_HANDLERS } from './scan/registry.ts';
import { WATCHLIST_BINDINGS, WATCHLIST_HANDLERS } from './watchlist/registry.ts';

export type {
  BucketName,
  BucketUse,
  RegisteredHandler,
  S3Action,
  StateMachineAction,
} from './platform/handler-declaration.ts';

// --- Workflows --------------------------------------------------------------------------------

/**
 * The workflows, by name, with the folder each one's code lives in (`lambdas/<folder>/`, mirrored
 * by `lib/workflows/<folder>/` and `test/<folder>/`). The names stay as they are: they are metric
 * dimensions and configuration words.
 */
export const WORKFLOW_FOLDERS = {
  scan: 'scan',
  list: 'domain-list',
  breach: 'breach',
  watchlist: 'watchlist',
  rotation: 'rotation',
  operations: 'operations',
} as const;

/** A workflow; its deps are built the same way for every handler of one workflow. */
export type WorkflowName = keyof typeof WORKFLOW_FOLDERS;

// --- Vendor APIs ------------------------------------------------------------------------------

/**
 * The vendor's APIs (the vendor documents three), in the order it documents them, and what each
 * is, as a key secret's description names it. Each one's client is `lambdas/vendor-api/<api>/`.
 */
export const VENDOR_API_TITLES = {
  scan: 'scanning API',
  keys: 'key-management API',
  breach: 'breach-report API',
} as const;

/** A vendor API by the name the vendor gives it, e.g. `scan`: its URL, key and operations. */
export type VendorApi = keyof typeof VENDOR_API_TITLES;

/** Every vendor API, in the order the vendor documents them. */
export const VENDOR_APIS = Object.keys(VENDOR_API_TITLES) as readonly VendorApi[];

/** What the one org key serves when every API shares it (its secret's description). */
export const ORG_KEY_USED_FOR = 'all three vendor APIs (scanning, key management, breach reports)';

/**
 * The API whose key is the org key: its rotate endpoint rotates it (rotation), so in per-api mode
 * its secret is the one native rotation rotates, and in single mode the one secret is.
 */
export const ORG_KEY_API: VendorApi = 'keys';

// --- Secrets ----------------------------------------------------------------------------------

/**
 * The secrets other than vendor keys that handlers read, by name, and the workflow that owns each
 * (its `WorkflowBindings.secrets` gives the variable that carries the ARN).
 */
export const SECRETS = {
  /** The key of the keyed hash that names breach report folders. */
  reportNamingKey: 'breach',
  /** The key of the keyed hash that names people. */
  identityKey: 'watchlist',
} as const satisfies Record<string, WorkflowName>;

export type SecretName = keyof typeof SECRETS;

// --- Metrics ----------------------------------------------------------------------------------

/**
 * The scan workflow's metric names. Each workflow's table is here so that the handlers that record
 * a name and the alarms and dashboard that read it are type-checked against one list.
 */
export const SCAN_METRIC = {
  scansStarted: 'ScansStarted',
  /**
   * Starts whose answer was lost and that StartScan settled from the vendor's listing, by outcome:
   * `adopted` (the scan the start created), `retried` (none was created; sent again),
   * `unresolved` (recorded as ScanRejected for reconciliation).
   */
  startsSettled: 'StartsSettled',
  /** Starts the vendor throttled past the transport's own wait, waited out by the state machine. */
  startsThrottled: 'StartsThrottled',
  scansSucceeded: 'ScansSucceeded',
  scansFailed: 'ScansFailed',
  scansTimedOut: 'ScansTimedOut',
  scanDuration: 'ScanDurationSeconds',
  /** Scans the vendor ran that reconciliation archived (the workflow never wrote their manifest). */
  scansReconciled: 'ScansReconciled',
  /** Each numeric field of the vendor's `GET /stats`, by its dot path (the `statistic` dimension). */
  vendorStatistic: 'VendorScanStatistic',
  /** Growth of the vendor's count of finished scans since the previous reconciliation read it. */
  vendorFinishedIncrease: 'VendorScansFinishedIncrease',
  /** Growth of the vendor's count of failed scans since the previous reconciliation read it. */
  vendorFailedIncrease: 'VendorScansFailedIncrease',
} as const;

/** The breach workflow's metric names. */
export const BREACH_METRIC = {
  /** Recons answered, by outcome (`success`, `no_results`). */
  breachReports: 'BreachReports',
  /** Report ZIPs verified and archived, by origin (`workflow`, `reconciled`). */
  breachArchived: 'BreachReportsArchived',
  /** Report ZIPs refused by the archive check, by the check that failed. */
  archiveVerificationFailures: 'ArchiveVerificationFailures',
  /** Verified report ZIPs kept beside other verified bytes under the same report name, by origin. */
  archiveConflicts: 'ArchiveConflicts',
} as const;

/** The rotation workflow's metric names. */
export const ROTATION_METRIC = {
  /** Key rotations finished (AWSCURRENT moved to the vendor's new key). */
  keyRotations: 'KeyRotations',
  /** Seconds the vendor held a key AWSCURRENT did not name: stored as pending → promoted. */
  rotationWindow: 'RotationWindowSeconds',
  /** The vendor rotated and the new key was lost: a lockout. */
  rotationResponseLost: 'RotationResponseLost',
  /** A rotate answer in which no key worked within the propagation window (kept in ROTATION-ANSWER). */
  rotateAnswerUnparsable: 'RotateAnswerUnparsable',
  /** A rotate answered with the key already in use: the vendor did not change the key. */
  rotateKeyUnchanged: 'RotateKeyUnchanged',
  /** Mirror secrets that could not be written and verified after a rotation. */
  mirrorWriteFailures: 'MirrorWriteFailures',
  /** ApiKeyRotated events that could not be published. */
  rotationEventFailures: 'RotationEventFailures',
  /** Days since the org key was last rotated (or the secret created), measured daily. */
  apiKeyAge: 'ApiKeyAgeDays',
} as const;

/**
 * Every metric the pipeline records: the platform's own (`METRIC` in lambdas/platform/metrics.ts:
 * bytes stored, vendor retries and errors) and the workflows' tables above.
 */
export type MetricName =
  | PlatformMetricName
  | (typeof SCAN_METRIC)[keyof typeof SCAN_METRIC]
  | (typeof BREACH_METRIC)[keyof typeof BREACH_METRIC]
  | (typeof ROTATION_METRIC)[keyof typeof ROTATION_METRIC];

// --- Handlers ---------------------------------------------------------------------------------

/** A handler's declaration with this registry's names: a misspelt workflow, API or secret fails here. */
export type PipelineHandlerDeclaration = HandlerDeclaration<WorkflowName, VendorApi, SecretName>;

/** Every handler, composed from each workflow's part. */
export const HANDLERS = {
  ...SCAN_HANDLERS,
  ...DOMAIN_LIST_HANDLERS,
  ...BREACH_HANDLERS,
  ...WATCHLIST_HANDLERS,
  ...ROTATION_HANDLERS,
  ...OPERATIONS_HANDLERS,
} as const satisfies Record<string, PipelineHandlerDeclaration>;

export type HandlerFile = keyof typeof HANDLERS;

/** What each workflow gives the platform to bind its own resources (lib/platform/bindings.ts). */
export const WORKFLOW_BINDINGS: Readonly<Record<WorkflowName, WorkflowBindings<SecretName>>> = {
  scan: SCAN_BINDINGS,
  list: DOMAIN_LIST_BINDINGS,
  breach: BREACH_BINDINGS,
  watchlist: WATCHLIST_BINDINGS,
  rotation: ROTATION_BINDINGS,
  operations: {},
};

/** The handler files of one workflow. */
export type HandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFile]: (typeof HANDLERS)[F]['workflow'] extends W ? F : never;
}[HandlerFile];

/** The handler files of one workflow that serve a Task state (what a local run binds). */
export type TaskHandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFileOf<W>]: (typeof HANDLERS)[F]['states'] extends readonly [] ? never : F;
}[HandlerFileOf<W>];

/** The declaration of `handlerFile`, or a clear error for a file the registry does not list. */
export function declarationOf(handlerFile: string): PipelineHandlerDeclaration {
  if (!Object.hasOwn(HANDLERS, handlerFile)) {
    throw new Error(
      `lambdas/registry.ts declares no handler '${handlerFile}'; add what it touches before deploying it`,
    );
  }
  return HANDLERS[handlerFile as HandlerFile];
}

/** The handler file a Task state invokes, or undefined. */
export function handlerForState(state: string): HandlerFile | undefined {
  return (Object.keys(HANDLERS) as HandlerFile[]).find((file) =>
    (HANDLERS[file].states as readonly string[]).includes(state),
  );
}

/**
 * A handler's file relative to the repository: `lambdas/<workflow folder>/<file>.ts`. That module
 * holds the step the Lambda runs (or imports it, where two Lambdas share it) and ends with the entry.
 */
export function handlerEntryPath(handlerFile: string): string {
  return `lambdas/${WORKFLOW_FOLDERS[declarationOf(handlerFile).workflow]}/${handlerFile}.ts`;
}

/**
 * Whether a handler's log may carry an email address despite the redaction every line passes: it
 * reads the vendor's answers (a vendor API, or the key API during rotation) or handles people (the
 * breach and watchlist workflows). Its log group gets a CloudWatch Logs data protection policy as a
 * second net; see PipelineFunction.
 */
export function logsMayCarryPersonalData(handlerFile: string): boolean {
  const declaration = declarationOf(handlerFile);
  return (
    declaration.vendorApis.length > 0 ||
    declaration.rotatedSecret === 'rotate' ||
    declaration.workflow === 'breach' ||
    declaration.workflow === 'watchlist'
  );
}

/**
 * A handler resolved for the platform's constructs (PipelineFunction and those built on it): its
 * entry module, its declaration, and where the resources it names reach it.
 */
export function registeredHandler(handlerFile: HandlerFile): RegisteredHandler {
  return {
    file: handlerFile,
    entryPath: handlerEntryPath(handlerFile),
    declaration: declarationOf(handlerFile),
    logsMayCarryPersonalData: logsMayCarryPersonalData(handlerFile),
    workflowBindings: WORKFLOW_BINDINGS,
  };
}
