/**
 * What each handler declares it touches: plain data, no CDK. The constructs grant exactly this and
 * bind the matching environment variables (lib/platform/bindings.ts); the least-privilege test
 * compares it with what the handlers were seen doing and with the synthesized policies.
 *
 * Keyed by handler file (`lambdas/<file>.ts`), with the state names that invoke it, so that it can
 * grow into the one map from state names to handlers read by constructs, local runner and tests.
 */

import { BREACH_BINDINGS, BREACH_HANDLERS } from './breach/registry.ts';
import { DOMAIN_LIST_BINDINGS, DOMAIN_LIST_HANDLERS } from './domain-list/registry.ts';
import { OPERATIONS_HANDLERS } from './operations/registry.ts';
import type { HandlerDeclaration, WorkflowBindings, WorkflowName } from './platform/handler-declaration.ts';
import { ROTATION_BINDINGS, ROTATION_HANDLERS } from './rotation/registry.ts';
import { SCAN_BINDINGS, SCAN_HANDLERS } from './scan/registry.ts';
import { WATCHLIST_BINDINGS, WATCHLIST_HANDLERS } from './watchlist/registry.ts';

export type {
  BucketName,
  BucketUse,
  HandlerDeclaration,
  S3Action,
  SecretName,
  StateMachineAction,
  VendorApi,
  WorkflowBindings,
  WorkflowName,
} from './platform/handler-declaration.ts';

/** Every handler, composed from each workflow's part. */
export const HANDLERS = {
  ...SCAN_HANDLERS,
  ...DOMAIN_LIST_HANDLERS,
  ...BREACH_HANDLERS,
  ...WATCHLIST_HANDLERS,
  ...ROTATION_HANDLERS,
  ...OPERATIONS_HANDLERS,
} as const satisfies Record<string, HandlerDeclaration>;

export type HandlerFile = keyof typeof HANDLERS;

/** What each workflow gives the platform to bind its own resources (lib/platform/bindings.ts). */
export const WORKFLOW_BINDINGS: Readonly<Record<WorkflowName, WorkflowBindings>> = {
  scan: SCAN_BINDINGS,
  list: DOMAIN_LIST_BINDINGS,
  breach: BREACH_BINDINGS,
  watchlist: WATCHLIST_BINDINGS,
  rotation: ROTATION_BINDINGS,
  operations: {},
};

/** The handler files of one workflow. */
export type HandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFile]: (typeof HANDLERS)[F]['workflow'] extends W ? F : never;
}[HandlerFile];

/** The handler files of one workflow that serve a Task state (what a local run binds). */
export type TaskHandlerFileOf<W extends WorkflowName> = {
  [F in HandlerFileOf<W>]: (typeof HANDLERS)[F]['states'] extends readonly [] ? never : F;
}[HandlerFileOf<W>];

/** The declaration of `handlerFile`, or a clear error for a file the registry does not list. */
export function declarationOf(handlerFile: string): HandlerDeclaration {
  if (!Object.hasOwn(HANDLERS, handlerFile)) {
    throw new Error(
      `lambdas/registry.ts declares no handler '${handlerFile}'; add what it touches before deploying it`,
    );
  }
  return HANDLERS[handlerFile as HandlerFile];
}

/**
 * Refuses a Task state bound to a function whose handler does not declare it: the construct, the
 * local runner and the least-privilege test then all agree on which handler runs which state.
 * `addedStates`: states a construct made from its props for this handler (the fetch state of a
 * scan output that ScanWorkflow's `outputs` add), which this registry cannot list.
 */
export function checkStateBinding(
  state: string,
  handlerFile: string,
  addedStates: readonly string[] = [],
): void {
  const declared = [...declarationOf(handlerFile).states, ...addedStates];
  if (!declared.includes(state)) {
    throw new Error(
      `Task state '${state}' invokes ${handlerFile}, but lambdas/registry.ts declares it for ${declared.length > 0 ? declared.join(', ') : 'no Task state'}`,
    );
  }
}

/** The handler file a Task state invokes, or undefined. */
export function handlerForState(state: string): HandlerFile | undefined {
  return (Object.keys(HANDLERS) as HandlerFile[]).find((file) =>
    (HANDLERS[file].states as readonly string[]).includes(state),
  );
}

/**
 * The folder each workflow's runtime code lives in (`lambdas/<folder>/`, mirrored by
 * `lib/workflows/<folder>/` and `test/<folder>/`). The workflow names stay as they are: they are
 * metric dimensions and configuration words.
 */
export const WORKFLOW_FOLDERS: Readonly<Record<WorkflowName, string>> = {
  scan: 'scan',
  list: 'domain-list',
  breach: 'breach',
  watchlist: 'watchlist',
  rotation: 'rotation',
  operations: 'operations',
};

/**
 * A handler's file relative to the repository: `lambdas/<workflow folder>/<file>.ts`. That module
 * holds the step the Lambda runs (or imports it, where two Lambdas share it) and ends with the entry.
 */
export function handlerEntryPath(handlerFile: string): string {
  return `lambdas/${WORKFLOW_FOLDERS[declarationOf(handlerFile).workflow]}/${handlerFile}.ts`;
}

/**
 * Whether a handler's log may carry an email address despite the redaction every line passes: it
 * reads the vendor's answers (a vendor API, or the key API during rotation) or handles people (the
 * breach and watchlist workflows). Its log group gets a CloudWatch Logs data protection policy as a
 * second net; see PipelineFunction.
 */
export function logsMayCarryPersonalData(handlerFile: string): boolean {
  const declaration = declarationOf(handlerFile);
  return (
    declaration.vendorApis.length > 0 ||
    declaration.rotatedSecret === 'rotate' ||
    declaration.workflow === 'breach' ||
    declaration.workflow === 'watchlist'
  );
}
