/** `DeleteScanAtVendor`: optional clean-up at the vendor after the manifest is written. */

import { InvalidInputError } from '#lambdas/platform/errors';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { validateScanUuid } from '#lambdas/platform/validation';
import { type DeleteScanOutput, deleteScanAtVendor } from '#lambdas/scan/delete';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { requireObject } from '#lambdas/scan/parse';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

type DeleteInput = Record<string, unknown> & { readonly scanUuid: string; readonly domain?: string };

/** Input: anything carrying `scanUuid` (the ScanOutcome or the in-progress state). */
export function createDeleteScanHandler(deps: ScanDeps): Handler<unknown, DeleteScanOutput<DeleteInput>> {
  return async (event, context) => {
    const fields = requireObject(event, 'input');
    if (typeof fields.scanUuid !== 'string') throw new InvalidInputError('scanUuid', 'must be a string');
    const scanUuid = validateScanUuid(fields.scanUuid, 'scanUuid');
    const domain = typeof fields.domain === 'string' ? fields.domain : undefined;
    const scoped = withLogKeys(deps, { domain, scanUuid, requestId: context?.awsRequestId });
    return deleteScanAtVendor(scoped, { ...fields, scanUuid, ...(domain === undefined ? {} : { domain }) });
  };
}

export const handler = createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools),
  handler: createDeleteScanHandler,
});
