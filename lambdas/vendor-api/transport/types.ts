/**
 * The contract every vendor client shares (`#lambdas/vendor-api/transport/*`): credentials, retries,
 * attempts, downloads. Core code only: no AWS or Lambda types. One API's own request and answer
 * shapes live with its client (`lambdas/vendor-api/<api>/types.ts`).
 */
import type { Readable } from 'node:stream';
import type { HostResolver } from './destination.ts';

/**
 * Which credential a request asks for.
 * - `forceRefresh`: bypass any cache (asked once after a 401/403: the key may have just rotated).
 * - `pending`: the key a rotation in progress has issued but not yet promoted (Secrets Manager's
 *   AWSPENDING), asked when the refreshed current key is refused too. Resolves to undefined when
 *   no rotation holds a key.
 */
export interface CredentialRequest {
  readonly forceRefresh?: boolean;
  readonly pending?: boolean;
}

/**
 * Returns the current credential. Called before each request (implementations cache); called with
 * `forceRefresh: true` once after a 401/403, then with `pending: true` if that key is refused too.
 */
export type CredentialProvider = (options?: CredentialRequest) => Promise<string | undefined>;

/** Minimal structured logger; Powertools' Logger satisfies it. Never pass a credential to it. */
export interface VendorLogger {
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
}

export interface RetryPolicy {
  /** Total attempts including the first. @default 5 */
  readonly maxAttempts: number;
  /** Base of the exponential backoff (full jitter: sleep = random() * min(max, base * 2^n)). @default 500 */
  readonly baseDelayMs: number;
  /** Cap of a single backoff sleep, and of an honoured Retry-After. @default 20_000 */
  readonly maxDelayMs: number;
  /** Give up retrying once this much time has passed since the first attempt. @default 60_000 */
  readonly maxElapsedMs: number;
}

export interface VendorHttpSettings {
  /** Base URL of this API, e.g. https://scan.vendor.example; credentials go to this origin only. */
  readonly baseUrl: string;
  readonly credentials: CredentialProvider;
  /** Per-request timeout (connect + headers, and whole body for JSON answers). @default 30_000 */
  readonly requestTimeoutMs?: number;
  /** For streamed downloads: the longest gap between two chunks. @default 60_000 */
  readonly idleTimeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly logger?: VendorLogger;
  /** Injected for tests: `sleep(ms)` and `random()` drive backoff deterministically and fast. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  /** Max redirects a download follows. @default 5 */
  readonly maxRedirects?: number;
  /**
   * Certificate authorities (PEM) to trust instead of the system's: for tests against a loopback
   * TLS server only. Verification itself is never turned off.
   * @default - the system's trust store
   */
  readonly trustedCertificates?: readonly string[];
  /** Told about every retry and every final failure: metrics in AWS, live progress locally. */
  readonly observer?: VendorAttemptObserver;
  /**
   * Origins (`scheme://host[:port]`) requests may go to as they are, besides the base URL's: e.g.
   * the simulator's storage origin in a local run. Every other destination, redirects included,
   * must be https to a public address (transport/destination.ts).
   * @default []
   */
  readonly allowedOrigins?: readonly string[];
  /** Injected for tests: resolves a host name to its addresses instead of the system's DNS. */
  readonly resolveHost?: HostResolver;
}

/** A vendor client operation, `<api>.<method>`, e.g. `scan.getStatus`: a metric dimension. */
export type VendorOperation = `${string}.${string}`;

/**
 * Why an attempt failed in a way the transport retries, as a word from a closed set: safe as a
 * metric dimension (never a URL, a domain or a key).
 */
export type VendorFailureClass = 'throttled' | 'unavailable' | 'network' | 'timeout' | 'auth' | 'refused';

/** One retry decision or final failure of a vendor call. */
export interface VendorAttemptEvent {
  /** The client operation, e.g. `scan.getStatus`. */
  readonly operation: VendorOperation;
  /** The attempt that just failed, from 1. */
  readonly attempt: number;
  /** Attempts allowed by the retry policy. */
  readonly maxAttempts: number;
  readonly failure: VendorFailureClass;
  /** HTTP status when the vendor answered. */
  readonly status?: number;
  /** Network error code (ECONNRESET …) or TIMEOUT. */
  readonly errorCode?: string;
  /** How long the failed attempt took. */
  readonly attemptMs: number;
  /** The wait before the next attempt; undefined on a final failure. */
  readonly retryInMs?: number;
  /** The vendor's Retry-After, when it sent one, before any cap. */
  readonly retryAfterMs?: number;
  /** The request timeout in force, for messages like "timed out after 30 s". */
  readonly timeoutMs: number;
}

export interface VendorAttemptObserver {
  retrying?(event: VendorAttemptEvent & { readonly retryInMs: number }): void;
  failed?(event: VendorAttemptEvent): void;
}

/** A streamed body (report, logs, debug, ZIP). Never buffered whole. */
export interface VendorDownload {
  readonly body: Readable;
  /** As the vendor sent it; undefined when it sent none. */
  readonly contentType: string | undefined;
  readonly contentLength: number | undefined;
  readonly etag: string | undefined;
  /**
   * The content-coding still applied to the bytes of `body`: undefined after transparent
   * gzip/br/deflate decoding (the bytes are then identity); set only for a coding we could not
   * decode, so a store that records it serves the bytes correctly.
   */
  readonly contentEncoding: string | undefined;
  /** The Content-Encoding the vendor sent and the client removed, e.g. `gzip`; undefined when none. */
  readonly decodedContentEncoding?: string | undefined;
  /** Where the bytes finally came from, after redirects, with signatures redacted. */
  readonly finalUrl: string;
  readonly redirects: number;
}
