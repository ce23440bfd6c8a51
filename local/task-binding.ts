/**
 * How the local runner binds a synthesized definition's Task states to the real handlers, for
 * every workflow: lambdas/registry.ts says which handler file serves a state (as it does for the
 * constructs), and each workflow passes the factories of its handler files.
 */
import type { RunOptions } from 'aws-local-stepfunctions';
import { type HandlerFile, handlerForState } from '../lambdas/registry.ts';
import { type AslDefinition, taskStates, walkStates } from './definitions.ts';
import { runAs } from './iam/attribution.ts';

/** What aws-local-stepfunctions calls in place of a Task's Lambda. */
export type TaskHandler = NonNullable<
  NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']
>[string];
export type JSONValue = Parameters<TaskHandler>[0];

export function asJson<T>(handler: (event: T) => Promise<unknown>): TaskHandler {
  return async (input) => (await handler(input as T)) as JSONValue;
}

/** A handler file's code over its workflow's deps. */
export type HandlerFactory<D> = (deps: D) => (event: never) => Promise<unknown>;

/**
 * Binds every Task state of `definition` to its real handler; a state left unbound is an error. Each
 * invocation runs as its handler file, so the IAM evaluator checks its calls as that function.
 */
export function bindTaskHandlers<D>(
  definition: AslDefinition,
  factories: Partial<Record<HandlerFile, HandlerFactory<D>>>,
  deps: D,
  machineName: string,
): Record<string, TaskHandler> {
  const bound: Record<string, TaskHandler> = {};
  for (const name of taskStates(definition).keys()) {
    const file = handlerForState(name);
    const factory = file === undefined ? undefined : factories[file];
    if (!factory) {
      throw new Error(
        `The synthesized ${machineName} definition has a Task state '${name}' the local runner cannot bind`,
      );
    }
    const handler = asJson(factory(deps));
    bound[name] = (input) => runAs(file as HandlerFile, async () => handler(input));
  }
  return bound;
}

/** Retry intervals of every state that has a Retry, for scaled-down local runs. */
export function retryOverrides(
  definition: AslDefinition,
  intervalMs: number | undefined,
): Record<string, number> {
  if (intervalMs === undefined) return {};
  const overrides: Record<string, number> = {};
  walkStates(definition, (name, state) => {
    if (Array.isArray(state.Retry)) overrides[name] = intervalMs;
  });
  return overrides;
}
