/**
 * The breach-report API's own shapes: what its client answers. Core code only:
 * no AWS or Lambda types. The vendor's API description leaves most shapes "not shown", so parsed results keep the raw
 * body next to whatever fields we could find.
 */

export interface ReconRequest {
  readonly name: string;
  readonly emails: readonly string[];
}

export interface ReconResult {
  readonly status: 'success' | 'no_results' | string;
  /** report_name for downloads; may be absent when status is no_results. */
  readonly output: string | undefined;
  readonly totalBreaches: number | undefined;
  readonly raw: unknown;
}
