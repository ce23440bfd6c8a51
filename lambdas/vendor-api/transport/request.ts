/** The requests the vendor clients hand to the transport, and the whole-text answers they get back. */

import type { RetryMode } from './retry-policy.ts';
import type { VendorOperation } from './types.ts';

/** How the vendor wants the key: scan and keys APIs use a bearer token, breach uses X-API-Key. */
export type AuthScheme = 'bearer' | 'x-api-key';

export interface VendorRequest {
  /** `<api>.<method>`, e.g. `scan.startScan`; named in every error and log line. */
  readonly operation: VendorOperation;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Relative to the base URL, starting with `/`; every dynamic segment already percent-encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: { readonly contentType: string; readonly data: string };
  readonly retry: RetryMode;
  /**
   * Re-read the credential with `forceRefresh` after a 401/403 and try once more, then once with
   * the pending key of a rotation in progress if there is one. @default true.
   * Off for rotate: see `KeysClient.rotateKey`.
   */
  readonly refreshOnAuthFailure?: boolean;
  readonly accept?: string;
  /**
   * Downloads: the body is cut at the first byte past this many, counted after transparent
   * decoding (a gzip bomb is stopped as it inflates); a larger Content-Length is refused unread.
   * Whole-text answers: the most that is read (a listing that grows with the vendor's history
   * needs more than the usual answer).
   * @default no cap for downloads; MAX_TEXT_BYTES (8 MiB) for whole-text answers
   */
  readonly maxBytes?: number;
  /**
   * Downloads: a content-coded body is cut once it has decoded to more than this many times the
   * bytes received, past the first MiB (VendorDecodingRatioError). @default no ratio bound
   */
  readonly maxDecodingRatio?: number;
}

/** What every 2xx answer tells besides its body. */
export interface VendorAnswerFacts {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly requestId: string | undefined;
}

/** A 2xx answer read whole (JSON, status and small text answers). */
export interface VendorTextResponse extends VendorAnswerFacts {
  readonly text: string;
}

/** An answer (any status) whose body a consumer read as it streamed (`VendorHttp.requestAnswer`). */
export interface VendorConsumedResponse<T> extends VendorAnswerFacts {
  readonly value: T;
}
