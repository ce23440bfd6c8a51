/**
 * The shared HTTP transport of the three vendor clients: a thin layer over `node:http` (see
 * transport/send.ts for why not undici) that adds the
 * vendor's authentication, retries with backoff, manual redirects for downloads, streamed bodies
 * and typed, credential-free errors.
 *
 * Retries are a small loop here rather than a generic retrying agent, because:
 * - a 401/403 must re-read the credential (an async provider call) and resend with new headers;
 *   the retry handler re-dispatches the same options object;
 * - whether a retry is allowed depends on the operation (start scan, recon and rotate are not
 *   idempotent) and on proof that the vendor did not process the request;
 * - a download restarts its whole redirect chain from the base URL (pre-signed URLs expire), with
 *   credentials decided per hop; the retry handler would resume a body with `Range` instead;
 * - after the last attempt we throw our own typed errors with status, request id and Retry-After;
 *   the retry handler's `RequestRetryError` carries the raw response headers instead.
 * Timing: an overall abort signal per request (a connect timeout is told apart: the request was
 * never sent), and the idle timeout of a download's body in the body guard.
 */

import { MAX_BODY_SNIPPET_CHARS, VendorError, vendorHttpError } from '#lambdas/platform/errors';
import { redactText } from '#lambdas/platform/redaction/redact';
import { decodedBody, discard, header, MAX_TEXT_BYTES, readText } from './body.ts';
import { currentKey, pendingKey } from './credentials.ts';
import { downloadAttempt } from './download.ts';
import {
  type AttemptOutcome,
  authError,
  errorCode,
  finalError,
  NOT_SENT_CODES,
  outcomeFacts,
  permanent,
  sanitizeCause,
} from './outcome.ts';
import { readAttempt } from './read.ts';
import type { AuthScheme, VendorConsumedResponse, VendorRequest, VendorTextResponse } from './request.ts';
import { failureClass, parseRetryAfter, retryDelay } from './retry-policy.ts';
import { CONNECT_TIMEOUT, ConnectionPools, type HttpResponse } from './send.ts';
import { type ResolvedSettings, resolveSettings } from './settings.ts';

export type {
  AuthScheme,
  VendorConsumedResponse,
  VendorRequest,
  VendorTextResponse,
} from './request.ts';

import type { VendorAttemptEvent, VendorDownload, VendorHttpSettings } from './types.ts';

export { hasFraming, header } from './body.ts';
export { DEFAULT_RETRY_POLICY, parseRetryAfter, type RetryMode } from './retry-policy.ts';
export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_REDIRECTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from './settings.ts';

const RETRYABLE_STATUSES = new Set([500, 502, 503, 504]);

/**
 * One instance per client, created once (module scope in a Lambda) and reused, so connections are
 * kept alive across invocations.
 */
export class VendorHttp {
  readonly api: string;
  /** @internal for the download attempt (transport/download.ts) */
  readonly settings: ResolvedSettings;
  private readonly authScheme: AuthScheme;
  /** Keep-alive sockets for idempotent calls, a fresh connection for the others. */
  private readonly pools: ConnectionPools;
  /** Keys seen by this transport, to scrub from anything we surface (belt and braces). */
  private readonly seenKeys = new Set<string>();

  constructor(api: string, settings: VendorHttpSettings, authScheme: AuthScheme) {
    this.api = api;
    this.authScheme = authScheme;
    this.settings = resolveSettings(api, settings);
    const ca = settings.trustedCertificates;
    this.pools = new ConnectionPools({ keepAliveMs: 4_000, ...(ca === undefined ? {} : { ca }) });
  }

  /** The origin credentials may be sent to. */
  get baseOrigin(): string {
    return this.settings.baseUrl.origin;
  }

  async close(): Promise<void> {
    this.pools.close();
  }

  /** Sends a request whose 2xx answer is read whole as text; any other answer throws a typed error. */
  requestText(req: VendorRequest): Promise<VendorTextResponse> {
    return this.execute(req, (key) => this.attemptText(req, key));
  }

  /**
   * Sends a GET whose 2xx body is returned as a stream, following redirects. Retries cover
   * everything up to the final response headers; once the body is handed over, errors surface on
   * the stream (the caller, e.g. a Step Functions retry, restarts the download).
   */
  download(req: VendorRequest): Promise<VendorDownload> {
    return this.execute(req, (key) => downloadAttempt(this, req, key));
  }

  // -------------------------------------------------------------------------------------------
  // The retry loop
  // -------------------------------------------------------------------------------------------

  private async execute<T>(
    req: VendorRequest,
    attemptOnce: (key: string) => Promise<AttemptOutcome<T>>,
  ): Promise<T> {
    const { sleep } = this.settings;
    // The retry budget runs on wall time plus any sleep that returned early (an injected test
    // sleep), so maxElapsedMs means the same with a real timer and with a fake one.
    const clock = { started: Date.now(), skipped: 0 };
    const elapsed = () => Date.now() - clock.started + clock.skipped;
    let attempt = 0;
    /** Failures that count against maxAttempts (the one auth refresh does not). */
    let failures = 0;
    let refreshed = false;
    let forceRefresh = false;
    /** The key a rotation in progress issued, once the refreshed current key was refused too. */
    let pendingKey: string | undefined;
    let pendingTried = false;
    for (;;) {
      attempt += 1;
      const key = pendingKey ?? (await this.credential(req.operation, forceRefresh));
      forceRefresh = false;
      const t0 = Date.now();
      const outcome = await attemptOnce(key);
      const ms = Date.now() - t0;
      const log = (decision: string, extra: Record<string, unknown> = {}) =>
        this.logAttempt(req, attempt, ms, outcome, decision, extra);

      switch (outcome.kind) {
        case 'ok':
          log('ok');
          return outcome.value;
        case 'permanent':
          log('fail');
          this.tellFailed(req, attempt, ms, outcome);
          throw outcome.error;
        case 'auth':
          if ((req.refreshOnAuthFailure ?? true) && !refreshed) {
            refreshed = true;
            forceRefresh = true;
            log('refresh-credential');
            continue;
          }
          // Between the vendor's rotate and finishSecret, AWSCURRENT still names the dead key and
          // only AWSPENDING holds the working one: try it once (a 401 proves nothing was done).
          if (refreshed && !pendingTried) {
            pendingTried = true;
            pendingKey = await this.pendingCredential(req.operation, key);
            if (pendingKey !== undefined) {
              log('pending-credential');
              continue;
            }
          }
          log('fail');
          this.tellFailed(req, attempt, ms, outcome);
          throw authError(req.operation, outcome.status, outcome.requestId, refreshed);
        default: {
          failures += 1;
          const delay = retryDelay({
            policy: this.settings.retry,
            mode: req.retry,
            outcome,
            failures,
            elapsedMs: elapsed(),
            random: this.settings.random,
          });
          if (delay === undefined) {
            log('fail');
            this.tellFailed(req, attempt, ms, outcome);
            throw finalError(req.operation, outcome, this.settings.requestTimeoutMs);
          }
          log('retry', { retryInMs: delay });
          this.settings.observer?.retrying?.({
            ...this.attemptEvent(req, attempt, ms, outcome),
            retryInMs: delay,
          });
          const sleptFrom = Date.now();
          await sleep(delay);
          clock.skipped += Math.max(0, delay - (Date.now() - sleptFrom));
        }
      }
    }
  }

  private tellFailed(
    req: VendorRequest,
    attempt: number,
    ms: number,
    outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' }>,
  ): void {
    // A refusal for a reason of our own (bad input, unsafe redirect) is not a vendor failure.
    if (outcome.kind === 'permanent' && outcome.status === undefined) return;
    this.settings.observer?.failed?.(this.attemptEvent(req, attempt, ms, outcome));
  }

  private attemptEvent(
    req: VendorRequest,
    attempt: number,
    ms: number,
    outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' }>,
  ): VendorAttemptEvent {
    const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
    return {
      operation: req.operation,
      attempt,
      maxAttempts: this.settings.retry.maxAttempts,
      failure: failureClass(outcome),
      attemptMs: ms,
      timeoutMs: this.settings.requestTimeoutMs,
      ...outcomeFacts(outcome),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }

  private async credential(operation: string, forceRefresh: boolean): Promise<string> {
    const key = await currentKey(this.api, this.settings.credentials, operation, forceRefresh);
    this.seenKeys.add(key);
    return key;
  }

  private async pendingCredential(operation: string, refused: string): Promise<string | undefined> {
    const key = await pendingKey(
      this.api,
      this.settings.credentials,
      this.settings.logger,
      operation,
      refused,
    );
    if (key !== undefined) this.seenKeys.add(key);
    return key;
  }

  private logAttempt(
    req: VendorRequest,
    attempt: number,
    ms: number,
    outcome: AttemptOutcome<unknown>,
    decision: string,
    extra: Record<string, unknown>,
  ): void {
    const logger = this.settings.logger;
    if (!logger) return;
    const fields: Record<string, unknown> = {
      api: this.api,
      operation: req.operation,
      method: req.method,
      attempt,
      ms,
      decision,
      ...extra,
      ...outcomeFacts(outcome),
    };
    if ('requestId' in outcome && outcome.requestId) fields.vendorRequestId = outcome.requestId;
    logger.debug('vendor request attempt', fields);
  }

  // -------------------------------------------------------------------------------------------
  // One attempt
  // -------------------------------------------------------------------------------------------

  /** @internal for the download attempt (transport/download.ts) */
  agentFor(req: VendorRequest, url: URL) {
    return this.pools.agentFor(url, req.retry === 'idempotent');
  }

  /** @internal for the download attempt (transport/download.ts) */
  authHeaders(key: string): Record<string, string> {
    return this.authScheme === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  }

  /** @internal for the download attempt (transport/download.ts) */
  buildUrl(req: VendorRequest): URL {
    const url = new URL(this.settings.basePath + req.path, this.settings.baseUrl.origin);
    for (const [name, value] of Object.entries(req.query ?? {})) url.searchParams.set(name, value);
    return url;
  }

  private attemptText(req: VendorRequest, key: string): Promise<AttemptOutcome<VendorTextResponse>> {
    return readAttempt(this, req, key, this.settings.requestTimeoutMs, async (res) => ({
      text: await readText(req.operation, res, req.maxBytes ?? MAX_TEXT_BYTES),
    }));
  }

  /**
   * Sends a request whose answer, whatever its status, is handed decoded to `consume` as it streams,
   * with no size cap (the consumer decides what to keep), and returned with its status and
   * Retry-After; only a failure to get an answer at all throws. `timeoutMs` bounds the whole
   * exchange, body included, instead of the per-request deadline. For the one call that cannot be
   * repeated (rotate): its answer must be read to its end however slowly or largely it comes, and a
   * vendor that rotated and then answered an error may still have sent the key in that error.
   */
  requestAnswer<T>(
    req: VendorRequest,
    timeoutMs: number,
    consume: (body: AsyncIterable<Buffer>) => Promise<T>,
  ): Promise<VendorConsumedResponse<T> & { readonly retryAfterMs: number | undefined }> {
    return this.execute(req, (key) =>
      readAttempt(
        this,
        req,
        key,
        timeoutMs,
        async (res) => ({
          value: await consume(decodedBody(req.operation, res) as AsyncIterable<Buffer>),
          retryAfterMs: parseRetryAfter(header(res.headers, 'retry-after')),
        }),
        true,
      ),
    );
  }

  /** Classifies a non-2xx answer; `trusted` means our credential was on the request. */
  /** @internal for the download attempt (transport/download.ts) */
  async nonSuccess<T>(
    req: VendorRequest,
    res: HttpResponse,
    requestId: string | undefined,
    trusted: boolean,
  ): Promise<AttemptOutcome<T>> {
    const status = res.statusCode;
    if ((status === 401 || status === 403) && trusted) {
      discard(res.body);
      return { kind: 'auth', status, requestId };
    }
    if (status === 429 || RETRYABLE_STATUSES.has(status)) {
      discard(res.body);
      return {
        kind: 'status',
        status,
        requestId,
        retryAfterMs: parseRetryAfter(header(res.headers, 'retry-after')),
        bodySnippet: undefined,
      };
    }
    // Permanent: a 3xx on a JSON call, any other 4xx, or an unusual 5xx (501, 505...).
    const bodySnippet = await this.snippet(res);
    return {
      kind: 'permanent',
      status,
      error: vendorHttpError({
        operation: req.operation,
        status,
        requestId,
        bodySnippet,
        retryable: false,
      }),
    };
  }

  private async snippet(res: HttpResponse): Promise<string | undefined> {
    try {
      const text = await readText('snippet', res, 16 * 1024, true);
      // Redacted before the cut, so a key or address at the edge is not left half-visible.
      const cut = redactText(text, this.seenKeys).slice(0, MAX_BODY_SNIPPET_CHARS);
      return cut === '' ? undefined : cut;
    } catch {
      return undefined;
    }
  }

  /** @internal for the download attempt (transport/download.ts) */
  attemptError<T>(err: unknown, signal: AbortSignal): AttemptOutcome<T> {
    if (err instanceof VendorError) return permanent(err);
    const code = errorCode(err);
    const cause = sanitizeCause(err, this.seenKeys);
    // Checked first: a connect timeout is also an aborted signal, but proves nothing was sent.
    if (code === CONNECT_TIMEOUT) return { kind: 'timeout', requestNotSent: true, cause };
    if (signal.aborted && (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError') {
      return { kind: 'timeout', requestNotSent: false, cause };
    }
    const syscall = (err as { syscall?: unknown } | undefined)?.syscall;
    const requestNotSent =
      (code !== undefined && NOT_SENT_CODES.has(code)) || syscall === 'connect' || syscall === 'getaddrinfo';
    return { kind: 'network', code, requestNotSent, cause };
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers (exported where tests or clients use them)
// ---------------------------------------------------------------------------------------------
