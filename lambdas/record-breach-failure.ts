/**
 * `RecordBreachFailure`: write failure.json and return `{ failure: { error, cause } }` for the Fail
 * state. Accepts any payload: it runs after something already broke.
 */
import { breachStorageDepsFromEnvironment } from '#core/runtime/breach-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import type { BreachDeps } from '#core/workflows/breach/deps';
import { type RecordedBreachFailure, recordBreachFailure } from '#core/workflows/breach/records';

export function createRecordBreachFailureHandler(deps: BreachDeps): Handler<unknown, RecordedBreachFailure> {
  return async (event) => recordBreachFailure(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordBreachFailureHandler,
});
