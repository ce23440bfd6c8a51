/**
 * The scanning API's own shapes: what its client answers. Core code only: no
 * AWS or Lambda types. The vendor's API description leaves most shapes "not shown", so parsed results keep the raw body
 * next to whatever fields we could find.
 */

export type ScanState = 'pending' | 'running' | 'succeeded' | 'failed' | 'unknown';

/** Configurable mapping of vendor status words to states. Matching is case-insensitive. */
export interface StatusVocabulary {
  readonly pending: readonly string[];
  readonly running: readonly string[];
  readonly succeeded: readonly string[];
  readonly failed: readonly string[];
}

export interface ScanStatus {
  readonly state: ScanState;
  /** The vendor's own word, when one was found, e.g. "completed". */
  readonly vendorStatus: string | undefined;
  /** 0..100 when the body carries a progress/percent field. */
  readonly progress: number | undefined;
  /**
   * The body text as received but redacted (`redactVendorText`: every key value in use and the
   * shapes of secrets and addresses; JSON stays JSON), bounded to 64 KiB.
   */
  readonly raw: string;
  readonly contentType: string | undefined;
}

export interface StartScanResult {
  readonly uuid: string;
  readonly raw: unknown;
}
