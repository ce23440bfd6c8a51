/**
 * What the operations handlers declare they touch: their part of the registry that
 * lambdas/registry.ts composes. The resume function serves every intake, so it belongs to no intake.
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';

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
} as const satisfies Record<string, HandlerDeclaration>;
