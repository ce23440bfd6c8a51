/** `StartScan`: validate the domain, `POST /scan`, compute the output prefix and the first wait. */

import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { parseScanDomainInput } from '#lambdas/scan/parse';
import { startScan } from '#lambdas/scan/start';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

export function createStartScanHandler(deps: ScanDeps): Handler<unknown, ScanInProgress> {
  return async (event, context) => {
    const input = parseScanDomainInput(event);
    // The raw input may be invalid: log it only once normalised (startScan does), never the event.
    const scoped = withLogKeys(deps, { runId: input.runId, requestId: context?.awsRequestId });
    // The settle waits must fit the invocation: no new start without time for its answer.
    const timeLeft = context?.getRemainingTimeInMillis;
    return startScan(scoped, input, timeLeft ? { timeLeftMs: () => timeLeft.call(context) } : {});
  };
}

export const handler = createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools),
  handler: createStartScanHandler,
});
