/**
 * `RecordBreachFailure`: write failure.json and return `{ failure: { error, cause } }` for the Fail
 * state. Accepts any payload: it runs after something already broke.
 */

import { type BreachDeps, breachStorageDepsFromEnvironment } from '#lambdas/breach/deps';
import { type RecordedBreachFailure, recordBreachFailure } from '#lambdas/breach/records';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';

export function createRecordBreachFailureHandler(deps: BreachDeps): Handler<unknown, RecordedBreachFailure> {
  return async (event) => recordBreachFailure(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordBreachFailureHandler,
});
