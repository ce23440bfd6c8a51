/**
 * What the watchlist workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';

declare module '#lambdas/platform/handler-declaration' {
  /** Registers the workflow name with the platform (see WorkflowRegistry). */
  interface WorkflowRegistry {
    watchlist: true;
  }
}

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
} as const satisfies Record<string, HandlerDeclaration>;
