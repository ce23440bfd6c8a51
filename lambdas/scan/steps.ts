/**
 * The scan workflow steps, one per Task state of the per-domain state machine (docs/contracts.md).
 * Plain functions over `ScanDeps`: no Lambda or Step Functions types, so the handlers, the local
 * runner and the tests call the same code.
 */

export { cleanMessage, describeCaught, MAX_ERROR_MESSAGE_BYTES } from '#lambdas/platform/redaction/caught';
export { type DeleteScanOutput, deleteScanAtVendor } from './delete-scan.ts';
export { type ScanApi, type ScanDeps, withLogKeys } from './deps.ts';
export { extensionFor, type FetchScanOutputInput, fetchScanOutput } from './fetch-scan-output.ts';
export { MAX_RAW_STATUS_BYTES, pollScanStatus, toSnapshot, truncateUtf8 } from './poll-scan-status.ts';
export {
  FAILURE_FILE,
  type FailureName,
  type FailureRecord,
  type RecordedFailure,
  type RecordScanFailureInput,
  type RecordScanFailureOutput,
  recordScanFailure,
} from './record-scan-failure.ts';
export { startScan, startScanOrWait } from './start-scan.ts';
export {
  MANIFEST_FILE,
  type ScanManifest,
  type WriteScanManifestInput,
  writeScanManifest,
} from './write-scan-manifest.ts';
