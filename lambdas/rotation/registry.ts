/**
 * What the rotation workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration } from '#lambdas/platform/handler-declaration';

declare module '#lambdas/platform/handler-declaration' {
  /** Registers the workflow name with the platform (see WorkflowRegistry). */
  interface WorkflowRegistry {
    rotation: true;
  }
}

export const ROTATION_HANDLERS = {
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
} as const satisfies Record<string, HandlerDeclaration>;
