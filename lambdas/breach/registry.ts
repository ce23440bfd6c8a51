/**
 * What the breach workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration, S3Action, WorkflowBindings } from '#lambdas/platform/handler-declaration';
import { BREACH_VARIABLES } from './variables.ts';

/**
 * A breach archive is staged with `recordDigest: false` (no copy onto itself, never a tag), read
 * back by ranged GETs of that version for the ZIP check, and copied from that version to its final
 * key: PutObject, AbortMultipartUpload on a failed upload, GetObjectVersion.
 */
export const STAGED_ARCHIVE_WRITE: readonly S3Action[] = [
  'PutObject',
  'AbortMultipartUpload',
  'GetObjectVersion',
];

/** The variables its BreachReport machine and naming key reach handlers through. */
export const BREACH_BINDINGS = {
  stateMachine: { variable: BREACH_VARIABLES.stateMachineArn, label: 'BreachReport' },
  secrets: { reportNamingKey: BREACH_VARIABLES.reportNamingKeySecretArn },
} as const satisfies WorkflowBindings;

export const BREACH_HANDLERS = {
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
    // The key of the report folders' keyed hash.
    secrets: ['reportNamingKey'],
  },
  'write-breach-manifest': {
    workflow: 'breach',
    states: ['WriteBreachManifest'],
    // ListBucket: the manifest accounts for every object under the run's prefix.
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['PutObject', 'ListBucket'] }],
    bucketNamesOnly: [],
    vendorApis: [],
  },
  'record-breach-failure': {
    workflow: 'breach',
    states: ['RecordBreachFailure'],
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
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
    // The key of the report folders' keyed hash.
    secrets: ['reportNamingKey'],
  },
} as const satisfies Record<string, HandlerDeclaration>;
