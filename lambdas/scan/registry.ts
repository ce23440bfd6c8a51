/**
 * What the scan workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import {
  type BucketUse,
  type HandlerDeclaration,
  STREAMED_WRITE,
  type WorkflowBindings,
} from '#lambdas/platform/handler-declaration';
import { SCAN_OUTPUTS } from '#lambdas/scan/scan-outputs';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';

/**
 * What the fetch step holds on `scans/`, where verified outputs live: PutObject (a whole small
 * output, and the promotion copy's CreateMultipartUpload and conditional CompleteMultipartUpload),
 * AbortMultipartUpload, ListBucket + GetObject (HeadObject) to find a verified object of an earlier
 * attempt and keep it, and DeleteObject for an unverified leftover: in the versioned bucket that
 * only adds a delete marker, so no version under `scans/` can ever be deleted by this code, which
 * streams what the vendor sends.
 */
export const SCAN_OUTPUT_FETCH: BucketUse = {
  bucket: 'results',
  prefix: 'scans/',
  actions: ['PutObject', 'AbortMultipartUpload', 'ListBucket', 'GetObject', 'DeleteObject'],
};

/**
 * Where a large output is uploaded before it is verified (SCAN_STAGING_PREFIX): STREAMED_WRITE,
 * whose DeleteObjectVersion removes the staged version once it is copied, held on this prefix only;
 * ListBucket + GetObject (HeadObject) to find a dead attempt's staged upload, and DeleteObject for a
 * bucket that returns no version ids (unversioned, as the local S3 is).
 */
export const SCAN_OUTPUT_STAGING: BucketUse = {
  bucket: 'results',
  prefix: 'staging/scans/',
  actions: [...STREAMED_WRITE, 'ListBucket', 'GetObject', 'DeleteObject'],
};

/** The variable its ScanDomain machine reaches handlers through. */
export const SCAN_BINDINGS = {
  stateMachine: { variable: SCAN_VARIABLES.stateMachineArn, label: 'ScanDomain' },
} as const satisfies WorkflowBindings;

export const SCAN_HANDLERS = {
  'start-scan': {
    workflow: 'scan',
    states: ['StartScan'],
    // The learned scan durations (lambdas/scan/learned-durations.ts), read to plan the first wait;
    // listed to find a new domain's neighbours.
    s3: [{ bucket: 'results', prefix: 'learned/', actions: ['GetObject', 'ListBucket'] }],
    bucketNamesOnly: [],
    // POST /scan, and GET /scans to settle a start whose answer was lost: one key, one grant.
    vendorApis: ['scan'],
  },
  'poll-scan-status': {
    workflow: 'scan',
    states: ['PollScanStatus'],
    // Its function also runs the early-end watcher every minute (lambdas/scan/early-end-watch.ts):
    // the waiting records of WaitForScan (listed; a body read only to release a wait), its check
    // markers beside them, and the removal of both.
    s3: [
      {
        bucket: 'results',
        prefix: 'scans/waiting/',
        actions: ['ListBucket', 'GetObject', 'PutObject', 'DeleteObject'],
      },
    ],
    bucketNamesOnly: [],
    // GET /status, for the execution's poll and the watcher's checks.
    vendorApis: ['scan'],
    // The watcher ends the wait of a scan that ended (the task token is the capability).
    sendsTaskSuccess: true,
  },
  'fetch-scan-output': {
    workflow: 'scan',
    // One Parallel branch per row of the outputs table: FetchReport, FetchLogs, FetchDebug.
    states: SCAN_OUTPUTS.map((output) => output.stateName),
    s3: [SCAN_OUTPUT_FETCH, SCAN_OUTPUT_STAGING],
    bucketNamesOnly: [],
    vendorApis: ['scan'],
  },
  'write-scan-manifest': {
    workflow: 'scan',
    states: ['WriteManifest'],
    // ListBucket: the manifest accounts for every object under the scan's prefix. learned/: the
    // scan durations it learns from (read, then a conditional write).
    s3: [
      { bucket: 'results', prefix: 'scans/', actions: ['PutObject', 'ListBucket'] },
      { bucket: 'results', prefix: 'learned/', actions: ['GetObject', 'PutObject'] },
    ],
    bucketNamesOnly: [],
    vendorApis: [],
  },
  'record-scan-failure': {
    workflow: 'scan',
    states: ['RecordFailure'],
    s3: [{ bucket: 'results', prefix: 'scans/', actions: ['PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
  },
  'delete-scan': {
    workflow: 'scan',
    states: ['DeleteScanAtVendor'],
    s3: [],
    bucketNamesOnly: ['results'],
    vendorApis: ['scan'],
  },
  'reconcile-scans': {
    workflow: 'scan',
    states: [],
    // What the fetch steps and WriteManifest do, for every orphan: streamed writes, the reuse of
    // verified objects, removal of leftovers; plus reading and linking failure records, the
    // reconciliation record (GetObject, PutObject), and one
    // listing per domain (ListBucket): the fetch step's access covers them all.
    s3: [SCAN_OUTPUT_FETCH, SCAN_OUTPUT_STAGING],
    bucketNamesOnly: [],
    vendorApis: ['scan'],
  },
} as const satisfies Record<string, HandlerDeclaration>;
