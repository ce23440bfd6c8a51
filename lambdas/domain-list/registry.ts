/**
 * What the domain-list workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration, WorkflowBindings } from '#lambdas/platform/handler-declaration';
import { DOMAIN_LIST_VARIABLES } from './variables.ts';

/** The variable its machine (which its intake starts) reaches handlers through. */
export const DOMAIN_LIST_BINDINGS = {
  stateMachine: { variable: DOMAIN_LIST_VARIABLES.stateMachineArn, label: 'domain-list' },
} as const satisfies WorkflowBindings;

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
  },
  'write-list-summary': {
    workflow: 'list',
    states: ['WriteListSummary'],
    s3: [{ bucket: 'results', prefix: 'lists/', actions: ['GetObject', 'PutObject'] }],
    bucketNamesOnly: [],
    vendorApis: [],
    stateMachines: { scan: ['DescribeExecution'] },
    publishesEvents: true,
  },
  'start-domain-list': {
    workflow: 'list',
    states: [],
    s3: [],
    // Lets it ignore events of other buckets; it never reads the list itself.
    bucketNamesOnly: ['input'],
    vendorApis: [],
    stateMachines: { list: ['StartExecution'] },
    readsPauseSwitch: true,
  },
} as const satisfies Record<string, HandlerDeclaration>;
