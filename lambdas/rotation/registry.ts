/**
 * What the rotation workflow's handlers declare they touch: its part of the registry that
 * lambdas/registry.ts composes (the constructs grant exactly this and bind the matching variables).
 */
import type { HandlerDeclaration, WorkflowBindings } from '#lambdas/platform/handler-declaration';
import { ROTATION_VARIABLES } from './variables.ts';

/** The variable the rotation function finds the mirror secrets in. */
export const ROTATION_BINDINGS = {
  mirrorSecretsVariable: ROTATION_VARIABLES.mirrorSecretArns,
} as const satisfies WorkflowBindings;

export const ROTATION_HANDLERS = {
  'rotate-api-key': {
    workflow: 'rotation',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    // It calls the key API with keys it reads itself (current, then pending), never the bound one.
    vendorApis: [],
    rotatedSecret: 'rotate',
    publishesEvents: true,
  },
  'check-api-key-age': {
    workflow: 'rotation',
    states: [],
    s3: [],
    bucketNamesOnly: [],
    vendorApis: [],
    rotatedSecret: 'describe',
  },
} as const satisfies Record<string, HandlerDeclaration>;
