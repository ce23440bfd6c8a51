/** `StartScan`: validate the domain, `POST /scan`, compute the output prefix and the first wait. */
import { scanDepsFromEnvironment } from '#core/runtime/deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import type { ScanInProgress } from '#core/workflows/scan/contracts';
import { type ScanDeps, withLogKeys } from '#core/workflows/scan/deps';
import { parseScanDomainInput } from '#core/workflows/scan/parse';
import { startScan } from '#core/workflows/scan/start';

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
