/**
 * DeleteScanAtVendor: optional clean-up once the manifest is written. Its input is whatever the
 * state machine passes (the ScanOutcome, or the in-progress state); only `scanUuid` matters.
 */
import { VendorHttpError } from '#lambdas/platform/errors';
import type { ScanDeps } from './deps.ts';

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
