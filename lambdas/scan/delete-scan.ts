/**
 * DeleteScanAtVendor: optional clean-up once the manifest is written. Its input is whatever the
 * state machine passes (the ScanOutcome, or the in-progress state); only `scanUuid` matters.
 */
import { InvalidInputError, VendorHttpError } from '#lambdas/platform/errors';
import { validateUuid } from '#lambdas/platform/input/validation';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { requireObject } from '#lambdas/scan/parse';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

export type DeleteScanOutput<T> = T & { readonly deletedAtVendor: true };

export async function deleteScanAtVendor<T extends { readonly scanUuid: string; readonly domain?: string }>(
  deps: ScanDeps,
  state: T,
): Promise<DeleteScanOutput<T>> {
  try {
    await deps.scanClient.deleteScan(state.scanUuid);
    deps.logger.info('Scan deleted at the vendor', { domain: state.domain, scanUuid: state.scanUuid });
  } catch (error) {
    // DELETE is retried; a retry after a lost answer finds the scan gone. Gone is what we wanted.
    if (!(error instanceof VendorHttpError && (error.status === 404 || error.status === 410))) throw error;
    deps.logger.info('Scan was already gone at the vendor', {
      domain: state.domain,
      scanUuid: state.scanUuid,
      status: error.status,
    });
  }
  return { ...state, deletedAtVendor: true };
}

/** `DeleteScanAtVendor`: optional clean-up at the vendor after the manifest is written. */
type DeleteInput = Record<string, unknown> & { readonly scanUuid: string; readonly domain?: string };

/** Input: anything carrying `scanUuid` (the ScanOutcome or the in-progress state). */
export function createDeleteScanHandler(deps: ScanDeps): Handler<unknown, DeleteScanOutput<DeleteInput>> {
  return async (event, context) => {
    const fields = requireObject(event, 'input');
    if (typeof fields.scanUuid !== 'string') throw new InvalidInputError('scanUuid', 'must be a string');
    const scanUuid = validateUuid(fields.scanUuid, 'scanUuid');
    const domain = typeof fields.domain === 'string' ? fields.domain : undefined;
    const scoped = withLogKeys(deps, { domain, scanUuid, requestId: context?.awsRequestId });
    return deleteScanAtVendor(scoped, { ...fields, scanUuid, ...(domain === undefined ? {} : { domain }) });
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools),
  handler: createDeleteScanHandler,
});
