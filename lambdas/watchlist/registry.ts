/**
 * What the watchlist workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration, WorkflowBindings } from '#lambdas/platform/handler-declaration';
import { WATCHLIST_VARIABLES } from './variables.ts';

/** The variables its machine (which its intake starts) and the identity key reach handlers through. */
export const WATCHLIST_BINDINGS = {
  stateMachine: { variable: WATCHLIST_VARIABLES.stateMachineArn, label: 'watchlist' },
  secrets: { identityKey: WATCHLIST_VARIABLES.identityKeySecretArn },
} as const satisfies WorkflowBindings;

export const WATCHLIST_HANDLERS = {
  'prepare-watchlist': {
    workflow: 'watchlist',
    states: ['PrepareWatchlist'],
    s3: [
      // The watchlist: by version when the upload event names one, the latest otherwise (schedules).
      { bucket: 'input', prefix: '', actions: ['GetObject', 'GetObjectVersion'] },
      // The request shards (1,000 people each), items.json and rows.json under the run's prefix.
      { bucket: 'results', prefix: 'breach/', actions: ['PutObject'] },
    ],
    bucketNamesOnly: [],
    vendorApis: [],
    secrets: ['identityKey'],
  },
  'write-watchlist-summary': {
    workflow: 'watchlist',
    states: ['WriteWatchlistSummary'],
    s3: [{ bucket: 'results', prefix: 'breach/', actions: ['GetObject', 'PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    stateMachines: { breach: ['DescribeExecution'] },
    publishesEvents: true,
  },
  'start-watchlist': {
    workflow: 'watchlist',
    states: [],
    s3: [],
    // Lets it ignore events of other buckets; it never reads the watchlist itself.
    bucketNamesOnly: ['input'],
    vendorApis: [],
    stateMachines: { watchlist: ['StartExecution'] },
    readsPauseSwitch: true,
  },
} as const satisfies Record<string, HandlerDeclaration>;
