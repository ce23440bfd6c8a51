/**
 * What the scan workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';
import { SCAN_OUTPUT_FETCH } from '#lambdas/platform/handler-declaration';
import { SCAN_OUTPUTS } from '#lambdas/scan/scan-outputs';

export const SCAN_HANDLERS = {
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
    // One Parallel branch per row of the outputs table: FetchReport, FetchLogs, FetchDebug.
    states: SCAN_OUTPUTS.map((output) => output.stateName),
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
} as const satisfies Record<string, HandlerDeclaration>;
