/**
 * What the domain-list workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';

declare module '#lambdas/platform/handler-declaration' {
  /** Registers the workflow name with the platform (see WorkflowRegistry). */
  interface WorkflowRegistry {
    list: true;
  }
}

export const DOMAIN_LIST_HANDLERS = {
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
} as const satisfies Record<string, HandlerDeclaration>;
