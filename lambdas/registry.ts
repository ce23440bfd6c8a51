/**
 * What each handler declares it touches: plain data, no CDK. The constructs grant exactly this and
 * bind the matching environment variables (lib/constructs/bindings.ts); the least-privilege test
 * compares it with what the handlers were seen doing and with the synthesized policies.
 *
 * Keyed by handler file (`lambdas/<file>.ts`), with the state names that invoke it, so that it can
 * grow into the one map from state names to handlers read by constructs, local runner and tests.
 */

import type { BucketUse, HandlerDeclaration, S3Action, WorkflowName } from './registry-types.ts';

export type {
  BucketName,
  BucketUse,
  HandlerDeclaration,
  S3Action,
  StateMachineAction,
  VendorApi,
  WorkflowName,
} from './registry-types.ts';

/**
 * Writes on the results bucket go through `streamToS3` (lambdas/core/s3/stream-upload.ts):
 * PutObject or a multipart upload (PutObject, AbortMultipartUpload on failure), then a multipart
 * copy of the version just written to the final key to add the sha256 metadata (UploadPartCopy
 * reads its source by version id: GetObjectVersion, as the buckets are versioned; PutObject for
 * CreateMultipartUpload, UploadPartCopy and the conditional CompleteMultipartUpload), then the
 * uploaded version is deleted by its id (DeleteObjectVersion), so no noncurrent copy stays.
 */
const STREAMED_WRITE: readonly S3Action[] = [
  'PutObject',
  'AbortMultipartUpload',
  'GetObjectVersion',
  'DeleteObjectVersion',
];

/**
 * A breach archive is staged with `recordDigest: false` (no copy onto itself, never a tag), read
 * back by ranged GETs of that version for the ZIP check, and copied from that version to its final
 * key: PutObject, AbortMultipartUpload on a failed upload, GetObjectVersion.
 */
const STAGED_ARCHIVE_WRITE: readonly S3Action[] = ['PutObject', 'AbortMultipartUpload', 'GetObjectVersion'];

/**
 * What the fetch step holds on `scans/`: STREAMED_WRITE; ListBucket + GetObject (HeadObject) to
 * find a verified object of an earlier attempt and keep it, and the version id of each unverified
 * leftover, which it deletes by that id (DeleteObjectVersion); DeleteObject for a bucket that does
 * not return version ids (unversioned, as the local S3 is).
 */
const SCAN_OUTPUT_FETCH: BucketUse = {
  bucket: 'results',
  prefix: 'scans/',
  actions: [...STREAMED_WRITE, 'ListBucket', 'GetObject', 'DeleteObject'],
};

export const HANDLERS = {
  'start-scan': {
    workflow: 'scan',
    states: ['StartScan'],
    s3: [],
    // It only computes the output prefix; the shared scan settings validate RESULTS_BUCKET.
    bucketNamesOnly: ['results'],
    // POST /scan, and GET /scans to settle a start whose answer was lost: one key, one grant.
    vendorApis: ['scan'],
    listStateMachine: [],
  },
  'poll-scan-status': {
    workflow: 'scan',
    states: ['PollScanStatus'],
    s3: [],
    bucketNamesOnly: ['results'],
    vendorApis: ['scan'],
    listStateMachine: [],
  },
  'fetch-scan-output': {
    workflow: 'scan',
    states: ['FetchReport', 'FetchLogs', 'FetchDebug'],
    s3: [SCAN_OUTPUT_FETCH],
    bucketNamesOnly: [],
    vendorApis: ['scan'],
    listStateMachine: [],
  },
  'write-scan-manifest': {
    workflow: 'scan',
    states: ['WriteManifest'],
    // ListBucket: the manifest accounts for every object under the scan's prefix.
    s3: [{ bucket: 'results', prefix: 'scans/', actions: ['PutObject', 'ListBucket'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
  },
  'record-scan-failure': {
    workflow: 'scan',
    states: ['RecordFailure'],
    s3: [{ bucket: 'results', prefix: 'scans/', actions: ['PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
  },
  'delete-scan': {
    workflow: 'scan',
    states: ['DeleteScanAtVendor'],
    s3: [],
    bucketNamesOnly: ['results'],
    vendorApis: ['scan'],
    listStateMachine: [],
  },
  'prepare-domain-list': {
    workflow: 'list',
    states: ['PrepareDomainList'],
    s3: [
      // By version when the upload event names one, the latest otherwise (schedules, manual runs).
      { bucket: 'input', prefix: '', actions: ['GetObject', 'GetObjectVersion'] },
      { bucket: 'results', prefix: 'lists/', actions: ['PutObject'] },
    ],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
  },
  'write-list-summary': {
    workflow: 'list',
    states: ['WriteListSummary'],
    s3: [{ bucket: 'results', prefix: 'lists/', actions: ['GetObject', 'PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
    scanStateMachine: ['DescribeExecution'],
    publishesEvents: true,
  },
  'start-domain-list': {
    workflow: 'list',
    states: [],
    s3: [],
    // Lets it ignore events of other buckets; it never reads the list itself.
    bucketNamesOnly: ['input'],
    vendorApis: [],
    listStateMachine: ['StartExecution'],
    readsPauseSwitch: true,
  },
  'breach-recon': {
    workflow: 'breach',
    states: ['Recon'],
    // GetObject: the request object and an earlier recon.json; PutObject/DeleteObject: the claim
    // and recon.json; ListBucket: a missing claim must answer 404, not 403.
    s3: [
      {
        bucket: 'results',
        prefix: 'breach/',
        actions: ['GetObject', 'PutObject', 'DeleteObject', 'ListBucket'],
      },
    ],
    bucketNamesOnly: [],
    vendorApis: ['breach'],
    listStateMachine: [],
  },
  'archive-breach-report': {
    workflow: 'breach',
    states: ['ArchiveReport'],
    // Staged upload, ranged reads of it for the ZIP check, the copy to the final key, removal of
    // the staged object, and the archive's manifest; ListBucket + GetObject: find an earlier
    // manifest or promoted archive (a missing key must answer 404, not 403).
    s3: [
      {
        bucket: 'results',
        prefix: 'breach/',
        actions: [...STAGED_ARCHIVE_WRITE, 'ListBucket', 'GetObject', 'DeleteObject'],
      },
    ],
    bucketNamesOnly: [],
    vendorApis: ['breach'],
    listStateMachine: [],
  },
  'write-breach-manifest': {
    workflow: 'breach',
    states: ['WriteBreachManifest'],
    // ListBucket: the manifest accounts for every object under the run's prefix.
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['PutObject', 'ListBucket'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
  },
  'record-breach-failure': {
    workflow: 'breach',
    states: ['RecordBreachFailure'],
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
  },
  'prepare-watchlist': {
    workflow: 'watchlist',
    states: ['PrepareWatchlist'],
    s3: [
      // The watchlist: by version when the upload event names one, the latest otherwise (schedules).
      { bucket: 'input', prefix: '', actions: ['GetObject', 'GetObjectVersion'] },
      // One request object per person, items.json and rows.json under the run's prefix.
      { bucket: 'results', prefix: 'breach/', actions: ['PutObject'] },
    ],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
    breachIdentityKey: true,
  },
  'write-watchlist-summary': {
    workflow: 'watchlist',
    states: ['WriteWatchlistSummary'],
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['GetObject', 'PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
    breachStateMachine: ['DescribeExecution'],
    publishesEvents: true,
  },
  'start-watchlist': {
    workflow: 'watchlist',
    states: [],
    s3: [],
    // Lets it ignore events of other buckets; it never reads the watchlist itself.
    bucketNamesOnly: ['input'],
    vendorApis: [],
    // The watchlist machine, bound where the domain-list intake binds the list machine.
    listStateMachine: ['StartExecution'],
    readsPauseSwitch: true,
  },
  'reconcile-breach-reports': {
    workflow: 'breach',
    states: [],
    // What ArchiveReport does, for every report not archived yet, plus the reconciliation record.
    s3: [
      {
        bucket: 'results',
        prefix: 'breach/',
        actions: [...STAGED_ARCHIVE_WRITE, 'ListBucket', 'GetObject', 'DeleteObject'],
      },
    ],
    bucketNamesOnly: [],
    vendorApis: ['breach'],
    listStateMachine: [],
  },
  'reconcile-scans': {
    workflow: 'scan',
    states: [],
    // What the fetch steps and WriteManifest do, for every orphan: streamed writes, the reuse of
    // verified objects, removal of leftovers; plus reading and linking failure records, the
    // vendor-statistics snapshot and the reconciliation record (GetObject, PutObject), and one
    // listing per domain (ListBucket): the fetch step's access covers them all.
    s3: [SCAN_OUTPUT_FETCH],
    bucketNamesOnly: [],
    vendorApis: ['scan'],
    listStateMachine: [],
  },
  'rotate-api-key': {
    workflow: 'rotation',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    // It calls the key API with keys it reads itself (current, then pending), never the bound one.
    vendorApis: [],
    listStateMachine: [],
    rotatedSecret: 'rotate',
    publishesEvents: true,
  },
  'check-api-key-age': {
    workflow: 'rotation',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
    rotatedSecret: 'describe',
  },
  'resume-paused-starts': {
    workflow: 'list',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    vendorApis: [],
    listStateMachine: [],
    readsPauseSwitch: true,
    replaysHeldStarts: true,
  },
} as const satisfies Record<string, HandlerDeclaration>;

export type HandlerFile = keyof typeof HANDLERS;

/** The handler files of one workflow. */
export type HandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFile]: (typeof HANDLERS)[F]['workflow'] extends W ? F : never;
}[HandlerFile];

/** The handler files of one workflow that serve a Task state (what a local run binds). */
export type TaskHandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFileOf<W>]: (typeof HANDLERS)[F]['states'] extends readonly [] ? never : F;
}[HandlerFileOf<W>];

/** The declaration of `handlerFile`, or a clear error for a file the registry does not list. */
export function declarationOf(handlerFile: string): HandlerDeclaration {
  if (!Object.hasOwn(HANDLERS, handlerFile)) {
    throw new Error(
      `lambdas/registry.ts declares no handler '${handlerFile}'; add what it touches before deploying it`,
    );
  }
  return HANDLERS[handlerFile as HandlerFile];
}

/**
 * Refuses a Task state bound to a function whose handler does not declare it: the construct, the
 * local runner and the least-privilege test then all agree on which handler runs which state.
 */
export function checkStateBinding(state: string, handlerFile: string): void {
  const declared = declarationOf(handlerFile).states;
  if (!declared.includes(state)) {
    throw new Error(
      `Task state '${state}' invokes ${handlerFile}, but lambdas/registry.ts declares it for ${declared.length > 0 ? declared.join(', ') : 'no Task state'}`,
    );
  }
}

/** The handler file a Task state invokes, or undefined. */
export function handlerForState(state: string): HandlerFile | undefined {
  return (Object.keys(HANDLERS) as HandlerFile[]).find((file) =>
    (HANDLERS[file].states as readonly string[]).includes(state),
  );
}

/**
 * The folder each workflow's runtime code lives in (`lambdas/<folder>/`, mirrored by
 * `lib/workflows/<folder>/` and `test/<folder>/`). The workflow names stay as they are: they are
 * metric dimensions and configuration words.
 */
const WORKFLOW_FOLDERS: Readonly<Record<WorkflowName, string>> = {
  scan: 'scan',
  list: 'domain-list',
  breach: 'breach',
  watchlist: 'watchlist',
  rotation: 'rotation',
};

/** A handler's file relative to the repository: `lambdas/<workflow folder>/handlers/<file>.ts`. */
export function handlerEntryPath(handlerFile: string): string {
  return `lambdas/${WORKFLOW_FOLDERS[declarationOf(handlerFile).workflow]}/handlers/${handlerFile}.ts`;
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
