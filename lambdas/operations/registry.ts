/**
 * What the operations handlers declare they touch: their part of the registry that
 * lambdas/registry.ts composes. The resume function serves every intake, so it belongs to no intake;
 * the vendor statistics are the organisation's, so their job belongs to no scan intake either.
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';

/** The vendor statistics job's folder in the results bucket: its grant is this prefix and nothing else. */
export const VENDOR_STATS_FOLDER = 'operations/vendor-stats/';

export const OPERATIONS_HANDLERS = {
  'resume-paused-starts': {
    workflow: 'operations',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    vendorApis: [],
    readsPauseSwitch: true,
    replaysHeldStarts: true,
  },
  'record-vendor-stats': {
    workflow: 'operations',
    states: [],
    // Its own folder only: the previous read (GetObject, then PutObject), the day's history object
    // (a conditional PutObject), and ListBucket so that a first run's missing previous read is a
    // 404, not AccessDenied. Nothing of the scan archive or the reconciliation records.
    s3: [
      { bucket: 'results', prefix: VENDOR_STATS_FOLDER, actions: ['GetObject', 'PutObject', 'ListBucket'] },
    ],
    bucketNamesOnly: [],
    // GET /stats, through the shared scan client.
    vendorApis: ['scan'],
  },
} as const satisfies Record<string, HandlerDeclaration>;
