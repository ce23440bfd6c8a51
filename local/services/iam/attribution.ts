/**
 * Which handler is running: every AWS call made inside `runAs(file, …)` (awaited promises, timers
 * and lib-storage's own requests included) is checked as that handler's function. Calls outside any
 * handler (the CLI uploading a list, exporting results, seeding a secret) are the user's, not a
 * function's, and are not evaluated.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const running = new AsyncLocalStorage<string>();

/** Runs `body` as the function built from `lambdas/<workflow>/<handlerFile>.ts`. */
export function runAs<T>(handlerFile: string, body: () => Promise<T>): Promise<T> {
  return running.run(handlerFile, body);
}

/** The handler file whose code is running, or undefined outside any handler. */
export function currentHandler(): string | undefined {
  return running.getStore();
}
