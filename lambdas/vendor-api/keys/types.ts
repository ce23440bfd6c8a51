/**
 * The key-management API's own shapes: what its client answers. Core code only:
 * no AWS or Lambda types.
 */

export interface RotateKeyResult {
  /** The answer's HTTP status: kept and searched whatever it is (a vendor may rotate, then fail). */
  readonly status: number;
  /** A non-2xx answer's Retry-After, in milliseconds. */
  readonly retryAfterMs?: number | undefined;
  readonly requestId?: string | undefined;
  /**
   * The response body exactly as received, or its head when `truncated`. Persist it BEFORE
   * anything else: the old key is dead.
   */
  readonly rawBody: string;
  readonly contentType: string | undefined;
  /** True when the body was longer than `rawBody`; its size and hash are then the whole body's. */
  readonly truncated?: boolean;
  readonly bodyBytes?: number;
  readonly sha256?: string;
  /** Every key-shaped word of the whole body, in order (bounded); the ones past the head matter. */
  readonly words?: readonly { readonly text: string; readonly endByte: number }[];
  /** Key-shaped words seen in all, those past the bound included. */
  readonly wordsSeen?: number;
}

export interface RotateKeyOptions {
  /**
   * How long the rotate exchange may take, answer body included: the invocation's remaining time
   * less what storing the answer needs, never the per-request deadline of repeatable calls.
   */
  readonly timeoutMs: number;
}

/**
 * What one `GET …/api/key` with a candidate key says about that key alone:
 * - `works`: a 2xx that is the key's information (not an error dressed as a 2xx);
 * - `not-this-key`: any other definite answer (a 4xx other than 429, a 3xx, a 2xx error body);
 * - `try-later`: an answer that proves nothing about the key (429, 5xx, a timeout, a reset).
 */
export type KeyProbe =
  | { readonly verdict: 'works' }
  | { readonly verdict: 'not-this-key'; readonly status: number }
  | { readonly verdict: 'try-later'; readonly retryAfterMs: number | undefined; readonly error: Error };
