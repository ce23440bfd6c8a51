/**
 * How the local runner binds a synthesized definition's Task states to the real handlers, for
 * every workflow: lambdas/registry.ts says which handler file serves a state (as it does for the
 * constructs), and each workflow passes the factories of its handler files.
 */
import { type RunOptions, StateMachine } from 'aws-local-stepfunctions';
import { type HandlerFile, handlerForState } from '../../lambdas/registry.ts';
import { runAs } from '../services/iam/attribution.ts';
import { type AslDefinition, lambdaTimeoutSeconds, taskStates, walkStates } from '../synth/definitions.ts';
import { DEFAULT_VERDICTS_DIR, knownValid, rememberValid } from './definition-verdicts.ts';

/** What aws-local-stepfunctions calls in place of a Task's Lambda. */
export type TaskHandler = NonNullable<
  NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']
>[string];
export type JSONValue = Parameters<TaskHandler>[0];

/**
 * Step Functions' payload quota: a state's input, a task's result and a state's output are at most
 * 256 KiB as UTF-8 encoded JSON; past it the state fails with States.DataLimitExceeded, a terminal
 * error that `States.ALL` does not catch and no Retry matches
 * (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html,
 * https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
 * aws-local-stepfunctions enforces none of it, so a local run would pass what AWS fails.
 */
export const MAX_STATE_PAYLOAD_BYTES = 256 * 1024;

/**
 * States.DataLimitExceeded as aws-local-stepfunctions understands a terminal error: its Catch
 * and Retry rules skip an error whose `isCatchable`/`isRetryable` are false (as for its own
 * States.Runtime), so the execution fails as it would in AWS.
 */
export class DataLimitExceededError extends Error {
  readonly isCatchable = false;
  readonly isRetryable = false;
  constructor(what: string, bytes: number) {
    super(
      `${what} is ${bytes} bytes of UTF-8 JSON; Step Functions accepts at most ${MAX_STATE_PAYLOAD_BYTES}`,
    );
    this.name = 'States.DataLimitExceeded';
  }
}

/** Told of every task input and result a local run passes, as the JSON Step Functions would keep. */
const payloadListeners = new Set<(what: string, json: string) => void>();

/**
 * Calls `listener` with every task input and result of every local execution from now on (what the
 * execution history holds), so a test can search them (test/kit/leak-watch.ts). Returns the
 * unsubscribe.
 */
export function onTaskPayload(listener: (what: string, json: string) => void): () => void {
  payloadListeners.add(listener);
  return () => payloadListeners.delete(listener);
}

/** Throws DataLimitExceededError when `value` would not fit a Step Functions payload. */
export function checkPayloadSize(value: unknown, what: string): void {
  const json = value === undefined ? '' : JSON.stringify(value);
  for (const listener of payloadListeners) listener(what, json);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_STATE_PAYLOAD_BYTES) throw new DataLimitExceededError(what, bytes);
}

/** A handler as a local Task: its input and its result held to the payload quota, as in AWS. */
export function asJson<T>(handler: (event: T) => Promise<unknown>, stateName = 'the task'): TaskHandler {
  return async (input) => {
    checkPayloadSize(input, `The input of ${stateName}`);
    const result = await handler(input as T);
    checkPayloadSize(result, `The result of ${stateName}`);
    return result as JSONValue;
  };
}

/**
 * A local invocation that ran past its function's timeout, as Step Functions reports a Lambda
 * timeout to Retry and Catch: error `Sandbox.Timedout`, "Task timed out after N.00 seconds"
 * (https://docs.aws.amazon.com/lambda/latest/dg/troubleshooting-invocation.html,
 * https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
 */
export class LambdaTimeoutError extends Error {
  constructor(seconds: number) {
    super(`Task timed out after ${seconds.toFixed(2)} seconds`);
    this.name = 'Sandbox.Timedout';
  }
}

/**
 * `run`, ended at `ms` with LambdaTimeoutError(`seconds`), as Lambda ends an invocation at its
 * timeout. Lambda freezes the sandbox; here the invocation's promise is abandoned (its result or
 * error is dropped) and its sockets close when the run closes its clients.
 */
export async function withLambdaTimeout<T>(run: () => Promise<T>, ms: number, seconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const work = run();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LambdaTimeoutError(seconds)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

/** A handler file's code over its workflow's deps. */
export type HandlerFactory<D> = (deps: D) => (event: never) => Promise<unknown>;

/**
 * Binds every Task state of `definition` to its real handler; a state left unbound is an error. Each
 * invocation runs as its handler file, so the IAM evaluator checks its calls as that function, and
 * ends at that function's synthesized timeout (`timeoutMs` replaces it, for scaled-down runs).
 */
export function bindTaskHandlers<D>(
  definition: AslDefinition,
  factories: Partial<Record<HandlerFile, HandlerFactory<D>>>,
  deps: D,
  machineName: string,
  timeoutMs?: number,
  /** Task states that invoke no handler (service integrations), bound by the caller. */
  integrations: Readonly<Record<string, TaskHandler>> = {},
): Record<string, TaskHandler> {
  const bound: Record<string, TaskHandler> = { ...integrations };
  for (const name of taskStates(definition).keys()) {
    if (Object.hasOwn(integrations, name)) continue;
    const file = handlerForState(name);
    const factory = file === undefined ? undefined : factories[file];
    if (!factory) {
      throw new Error(
        `The synthesized ${machineName} definition has a Task state '${name}' the local runner cannot bind`,
      );
    }
    const handler = asJson(factory(deps), name);
    const seconds = lambdaTimeoutSeconds(definition, name);
    const ms = timeoutMs ?? (seconds === undefined ? undefined : seconds * 1000);
    const invoke = (input: JSONValue) => runAs(file as HandlerFile, async () => handler(input));
    bound[name] =
      ms === undefined ? invoke : (input) => withLambdaTimeout(() => invoke(input), ms, ms / 1000);
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

/** Engines kept per definition text; a process runs a handful of definitions at most. */
const engines = new Map<string, StateMachine>();
const MAX_ENGINES = 16;

/** How the runner validates: Task resources are the CDK's tokens resolved locally, not ARNs. */
const VALIDATION = { checkArn: false } as const;
/** The validation options as a verdict records them (definition-verdicts.ts). */
export const VALIDATION_TEXT = JSON.stringify(VALIDATION);

/**
 * The engine for a definition. Building one validates the definition against the ASL schema
 * (asl-validator compiles its JSON schema anew: 240-400 ms of CPU each time, measured). A process
 * that runs the same definition again (the tests' in-process CLI runs, one list after another)
 * reuses the engine it validated, and a process that runs a definition an earlier one validated
 * (every `npm start` after the first, from the synthesis cache) skips the validation
 * (definition-verdicts.ts); executions share nothing else, and one engine already runs every item
 * of a list at once. An invalid definition throws every time: only valid engines and verdicts are
 * kept.
 */
export function localStateMachine(
  definition: AslDefinition,
  verdicts: string = DEFAULT_VERDICTS_DIR,
): StateMachine {
  const key = JSON.stringify(definition);
  const kept = engines.get(key);
  if (kept !== undefined) return kept;
  const validated = knownValid(key, VALIDATION_TEXT, verdicts);
  const machine = new StateMachine(definition as never, {
    validationOptions: validated ? { noValidate: true } : VALIDATION,
  });
  if (!validated) rememberValid(key, VALIDATION_TEXT, verdicts);
  if (engines.size >= MAX_ENGINES) engines.delete(engines.keys().next().value as string);
  engines.set(key, machine);
  return machine;
}
