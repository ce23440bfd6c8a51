/**
 * The shared HTTP transport of the three vendor clients: a thin layer over undici that adds the
 * vendor's authentication, retries with backoff, manual redirects for downloads, streamed bodies
 * and typed, credential-free errors.
 *
 * Retries are a small loop here rather than undici's `RetryAgent` / `interceptors.retry`, because:
 * - a 401/403 must re-read the credential (an async provider call) and resend with new headers;
 *   the retry handler re-dispatches the same options object;
 * - whether a retry is allowed depends on the operation (start scan, recon and rotate are not
 *   idempotent) and on proof that the vendor did not process the request;
 * - a download restarts its whole redirect chain from the base URL (pre-signed URLs expire), with
 *   credentials decided per hop; the retry handler would resume a body with `Range` instead;
 * - after the last attempt we throw our own typed errors with status, request id and Retry-After;
 *   the retry handler's `RequestRetryError` carries the raw response headers instead.
 * undici still does the timing: `headersTimeout`, `bodyTimeout` (the idle timeout of a download)
 * and connect timeouts, plus an overall abort signal per request.
 */

import type { Transform } from 'node:stream';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { Agent, request } from 'undici';
import {
  ConfigurationError,
  type VendorApi,
  VendorAuthError,
  VendorError,
  VendorInsecureRedirectError,
  VendorNetworkError,
  VendorResponseError,
  VendorThrottledError,
  VendorTimeoutError,
  VendorUnframedBodyError,
  vendorHttpError,
} from '#core/errors';
import { redactSecrets, redactUrl } from '#core/redact';
import type {
  CredentialProvider,
  RetryPolicy,
  VendorDownload,
  VendorHttpSettings,
  VendorLogger,
} from './types.ts';

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxElapsedMs: 60_000,
};
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_REDIRECTS = 5;

/** JSON and status answers are read whole; anything bigger than this is not a JSON answer we want. */
const MAX_TEXT_BYTES = 8 * 1024 * 1024;
const MAX_SNIPPET_CHARS = 512;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const RETRYABLE_STATUSES = new Set([500, 502, 503, 504]);
/** Codes that prove the request never reached the vendor: no connection was ever made. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
const REQUEST_ID_HEADERS = ['x-request-id', 'x-amzn-requestid', 'request-id'] as const;
/** The outcome code of a 2xx download whose end cannot be proven (see `hasFraming`). */
const UNFRAMED_BODY = 'UNFRAMED_BODY';

/** How the vendor wants the key: scan and keys APIs use a bearer token, breach uses X-API-Key. */
export type AuthScheme = 'bearer' | 'x-api-key';

/**
 * - `idempotent`: retried after 429, 5xx, network errors and timeouts.
 * - `non-idempotent`: retried only when the answer proves the request was not processed
 *   (429, or a connection that was never established).
 * - `never`: never retried (rotate: any second attempt could kill a key we never saw).
 */
export type RetryMode = 'idempotent' | 'non-idempotent' | 'never';

export interface VendorRequest {
  /** `<api>.<method>`, e.g. `scan.startScan`; named in every error and log line. */
  readonly operation: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Relative to the base URL, starting with `/`; every dynamic segment already percent-encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: { readonly contentType: string; readonly data: string };
  readonly retry: RetryMode;
  /**
   * Re-read the credential with `forceRefresh` after a 401/403 and try once more. @default true.
   * Off for rotate: see `KeysClient.rotateKey`.
   */
  readonly refreshOnAuthFailure?: boolean;
  readonly accept?: string;
}

/** A 2xx answer read whole (JSON, status and small text answers). */
export interface VendorTextResponse {
  readonly status: number;
  readonly text: string;
  readonly contentType: string | undefined;
  readonly requestId: string | undefined;
}

/** What one attempt came to; the loop in `execute` decides what happens next. */
type AttemptOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T; readonly status: number }
  | { readonly kind: 'auth'; readonly status: number; readonly requestId: string | undefined }
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly requestId: string | undefined;
      readonly retryAfterMs: number | undefined;
      readonly bodySnippet: string | undefined;
    }
  | {
      readonly kind: 'network';
      readonly code: string | undefined;
      readonly requestNotSent: boolean;
      readonly cause: Error;
    }
  | { readonly kind: 'timeout'; readonly requestNotSent: boolean; readonly cause: Error }
  | { readonly kind: 'permanent'; readonly error: Error; readonly status: number | undefined };

interface ResolvedSettings {
  readonly baseUrl: URL;
  readonly basePath: string;
  readonly credentials: CredentialProvider;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly logger: VendorLogger | undefined;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly maxRedirects: number;
}

/**
 * One instance per client, created once (module scope in a Lambda) and reused, so connections are
 * kept alive across invocations.
 */
export class VendorHttp {
  readonly api: VendorApi;
  private readonly settings: ResolvedSettings;
  private readonly authScheme: AuthScheme;
  /** Keep-alive pool for idempotent calls. */
  private readonly pooled: Agent;
  /**
   * No keep-alive (pipelining 0) for non-idempotent calls: a reset on a reused socket that went
   * stale (e.g. while a Lambda was frozen) would be indistinguishable from "the vendor may have
   * processed it", so those calls always get a fresh connection and a reset means what it says.
   */
  private readonly fresh: Agent;
  /** Keys seen by this transport, to scrub from anything we surface (belt and braces). */
  private readonly seenKeys = new Set<string>();

  constructor(api: VendorApi, settings: VendorHttpSettings, authScheme: AuthScheme) {
    this.api = api;
    this.authScheme = authScheme;
    this.settings = resolveSettings(api, settings);
    const timeout = this.settings.requestTimeoutMs;
    const ca = settings.trustedCertificates;
    const connect = ca === undefined ? { timeout } : { timeout, ca: [...ca] };
    const common = { connect, headersTimeout: timeout, bodyTimeout: timeout };
    this.pooled = new Agent({ ...common, keepAliveTimeout: 4_000 });
    this.fresh = new Agent({ ...common, pipelining: 0 });
  }

  /** The origin credentials may be sent to. */
  get baseOrigin(): string {
    return this.settings.baseUrl.origin;
  }

  async close(): Promise<void> {
    await Promise.all([this.pooled.close(), this.fresh.close()]);
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
    return this.execute(req, (key) => this.attemptDownload(req, key));
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
    for (;;) {
      attempt += 1;
      const key = await this.credential(req.operation, forceRefresh);
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
          throw outcome.error;
        case 'auth':
          if ((req.refreshOnAuthFailure ?? true) && !refreshed) {
            refreshed = true;
            forceRefresh = true;
            log('refresh-credential');
            continue;
          }
          log('fail');
          throw authError(req.operation, outcome.status, outcome.requestId, refreshed);
        default: {
          failures += 1;
          const delay = this.retryDelay(req, outcome, failures, elapsed());
          if (delay === undefined) {
            log('fail');
            throw this.finalError(req, outcome);
          }
          log('retry', { retryInMs: delay });
          const sleptFrom = Date.now();
          await sleep(delay);
          clock.skipped += Math.max(0, delay - (Date.now() - sleptFrom));
        }
      }
    }
  }

  /** Milliseconds to wait before the next attempt, or undefined when we must give up now. */
  private retryDelay(
    req: VendorRequest,
    outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>,
    failures: number,
    elapsedMs: number,
  ): number | undefined {
    const policy = this.settings.retry;
    if (!retryAllowed(req.retry, outcome)) return undefined;
    if (failures >= policy.maxAttempts) return undefined;
    // Full jitter: spreads retries of many concurrent executions instead of synchronising them.
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1));
    const jitter = Math.min(1, Math.max(0, this.settings.random()));
    let delay = Math.floor(jitter * ceiling);
    const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) {
      // Never retry sooner than the vendor asked, and never sleep longer than maxDelayMs in
      // process: a longer Retry-After surfaces as VendorThrottledError(retryAfterMs) so the
      // orchestrator (Step Functions) can wait instead of a billed Lambda.
      if (retryAfterMs > policy.maxDelayMs) return undefined;
      delay = Math.max(delay, retryAfterMs);
    }
    if (elapsedMs + delay > policy.maxElapsedMs) return undefined;
    return delay;
  }

  private finalError(
    req: VendorRequest,
    outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>,
  ): VendorError {
    const operation = req.operation;
    switch (outcome.kind) {
      case 'status':
        if (outcome.status === 429) {
          return new VendorThrottledError({
            operation,
            retryAfterMs: outcome.retryAfterMs,
            requestId: outcome.requestId,
          });
        }
        return vendorHttpError({
          operation,
          status: outcome.status,
          requestId: outcome.requestId,
          bodySnippet: outcome.bodySnippet,
        });
      case 'network':
        if (outcome.code === UNFRAMED_BODY) return new VendorUnframedBodyError(operation);
        return new VendorNetworkError({
          operation,
          code: outcome.code,
          requestNotSent: outcome.requestNotSent,
          cause: outcome.cause,
        });
      case 'timeout':
        return new VendorTimeoutError({
          operation,
          timeoutMs: this.settings.requestTimeoutMs,
          phase: 'request',
          cause: outcome.cause,
        });
    }
  }

  private async credential(operation: string, forceRefresh: boolean): Promise<string> {
    const key = await this.settings.credentials(forceRefresh ? { forceRefresh: true } : undefined);
    if (typeof key !== 'string' || key.trim() === '') {
      throw new ConfigurationError(
        `${this.api} credentials`,
        `the provider returned no key for ${operation}`,
      );
    }
    // A CR/LF in a header value is a header-injection vector; undici would reject it anyway.
    if (/[\r\n\0]/.test(key)) {
      throw new ConfigurationError(`${this.api} credentials`, 'the key contains a line break or NUL');
    }
    this.seenKeys.add(key);
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
    };
    if ('status' in outcome && outcome.status !== undefined) fields.status = outcome.status;
    if (outcome.kind === 'network') fields.errorCode = outcome.code;
    if (outcome.kind === 'timeout') fields.errorCode = 'TIMEOUT';
    if ('requestId' in outcome && outcome.requestId) fields.vendorRequestId = outcome.requestId;
    logger.debug('vendor request attempt', fields);
  }

  // -------------------------------------------------------------------------------------------
  // One attempt
  // -------------------------------------------------------------------------------------------

  private dispatcherFor(req: VendorRequest): Dispatcher {
    return req.retry === 'idempotent' ? this.pooled : this.fresh;
  }

  private authHeaders(key: string): Record<string, string> {
    return this.authScheme === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  }

  private buildUrl(req: VendorRequest): URL {
    const url = new URL(this.settings.basePath + req.path, this.settings.baseUrl.origin);
    for (const [name, value] of Object.entries(req.query ?? {})) url.searchParams.set(name, value);
    return url;
  }

  private async attemptText(req: VendorRequest, key: string): Promise<AttemptOutcome<VendorTextResponse>> {
    const timeoutMs = this.settings.requestTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(this.buildUrl(req), {
        dispatcher: this.dispatcherFor(req),
        method: req.method,
        headers: {
          accept: req.accept ?? 'application/json, text/plain;q=0.9, */*;q=0.8',
          'accept-encoding': 'gzip, deflate, br',
          'user-agent': USER_AGENT,
          ...(req.body ? { 'content-type': req.body.contentType } : {}),
          ...this.authHeaders(key),
        },
        body: req.body?.data,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const status = res.statusCode;
      const requestId = requestIdOf(res.headers);
      if (status >= 200 && status < 300) {
        const text = await readText(req.operation, res, MAX_TEXT_BYTES);
        return {
          kind: 'ok',
          status,
          value: { status, text, contentType: header(res.headers, 'content-type'), requestId },
        };
      }
      return await this.nonSuccess(req, res, requestId, true);
    } catch (err) {
      return this.attemptError(err, signal);
    }
  }

  private async attemptDownload(req: VendorRequest, key: string): Promise<AttemptOutcome<VendorDownload>> {
    const { requestTimeoutMs, idleTimeoutMs, maxRedirects } = this.settings;
    // Not AbortSignal.timeout: the overall deadline covers the redirect chain up to the final
    // headers only. It must be cancelled then, or it would cut a long (but live) body short;
    // the body is guarded by undici's bodyTimeout (idle) instead.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException(`timed out after ${requestTimeoutMs} ms`, 'TimeoutError')),
      requestTimeoutMs,
    );
    let url = this.buildUrl(req);
    let redirects = 0;
    // The credential rule of a redirect chain: the key goes only to the configured origin, and
    // only while the chain has never left it. Once a hop went elsewhere (a pre-signed storage
    // URL), no later hop carries the key, even one that comes back to the vendor's origin:
    // otherwise whoever controls the storage origin could steer a credentialed GET to any path
    // of the vendor's API.
    let leftBaseOrigin = false;
    try {
      for (;;) {
        leftBaseOrigin ||= url.origin !== this.baseOrigin;
        const trusted = !leftBaseOrigin;
        const res = await request(url, {
          dispatcher: this.dispatcherFor(req),
          method: 'GET',
          headers: {
            accept: req.accept ?? '*/*',
            'accept-encoding': 'gzip, deflate, br',
            'user-agent': USER_AGENT,
            ...(trusted ? this.authHeaders(key) : {}),
          },
          signal: controller.signal,
          headersTimeout: requestTimeoutMs,
          bodyTimeout: idleTimeoutMs,
        });
        const status = res.statusCode;
        const requestId = requestIdOf(res.headers);
        if (REDIRECT_STATUSES.has(status)) {
          discard(res.body);
          const location = header(res.headers, 'location');
          if (!location) {
            return permanent(
              new VendorResponseError(req.operation, `HTTP ${status} redirect without a Location`),
            );
          }
          redirects += 1;
          if (redirects > maxRedirects) {
            return permanent(new VendorResponseError(req.operation, `more than ${maxRedirects} redirects`));
          }
          const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
          if (!next || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
            return permanent(new VendorResponseError(req.operation, 'redirect to an unusable Location'));
          }
          // An https download stays https: the body would otherwise cross the network in clear.
          if (url.protocol === 'https:' && next.protocol === 'http:') {
            return permanent(new VendorInsecureRedirectError(req.operation));
          }
          url = next;
          continue;
        }
        clearTimeout(timer);
        if (status >= 200 && status < 300) {
          if (!hasFraming(res.headers)) {
            // Refused before a byte is read: nothing of it may ever be stored as complete.
            res.body.destroy();
            return {
              kind: 'network',
              code: UNFRAMED_BODY,
              requestNotSent: false,
              cause: new Error('response without Content-Length or chunked transfer coding'),
            };
          }
          return { kind: 'ok', status, value: this.toDownload(req, res, url, redirects) };
        }
        // A 401/403 from a foreign origin is about its pre-signed URL, not our key.
        return await this.nonSuccess(req, res, requestId, trusted);
      }
    } catch (err) {
      return this.attemptError(err, controller.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private toDownload(
    req: VendorRequest,
    res: Dispatcher.ResponseData,
    url: URL,
    redirects: number,
  ): VendorDownload {
    const contentEncoding = header(res.headers, 'content-encoding');
    const decoders = decodersFor(contentEncoding);
    const declaredLength = parseLength(header(res.headers, 'content-length'));
    const decoded = decoders !== undefined && decoders.length > 0;
    return {
      body: guardBody(req.operation, res.body, decoders ?? [], {
        idleTimeoutMs: this.settings.idleTimeoutMs,
        expectedBytes: decoded ? undefined : declaredLength,
      }),
      contentType: header(res.headers, 'content-type'),
      // After transparent decoding the declared length and encoding no longer describe `body`.
      contentLength: decoded ? undefined : declaredLength,
      etag: header(res.headers, 'etag'),
      contentEncoding: decoded ? undefined : normaliseIdentity(contentEncoding),
      decodedContentEncoding: decoded ? contentEncoding : undefined,
      finalUrl: redactUrl(url),
      redirects,
    };
  }

  /** Classifies a non-2xx answer; `trusted` means our credential was on the request. */
  private async nonSuccess<T>(
    req: VendorRequest,
    res: Dispatcher.ResponseData,
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

  private async snippet(res: Dispatcher.ResponseData): Promise<string | undefined> {
    try {
      const text = await readText('snippet', res, 16 * 1024, true);
      const cut = text.slice(0, MAX_SNIPPET_CHARS);
      return cut === '' ? undefined : redactSecrets(cut, this.seenKeys);
    } catch {
      return undefined;
    }
  }

  private attemptError<T>(err: unknown, signal: AbortSignal): AttemptOutcome<T> {
    if (err instanceof VendorError) return permanent(err);
    const code = errorCode(err);
    const cause = sanitizeCause(err, this.seenKeys);
    if (signal.aborted && (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError') {
      return { kind: 'timeout', requestNotSent: false, cause };
    }
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return { kind: 'timeout', requestNotSent: true, cause };
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return { kind: 'timeout', requestNotSent: false, cause };
    }
    const syscall = (err as { syscall?: unknown } | undefined)?.syscall;
    const requestNotSent =
      (code !== undefined && NOT_SENT_CODES.has(code)) || syscall === 'connect' || syscall === 'getaddrinfo';
    return { kind: 'network', code, requestNotSent, cause };
  }
}

const USER_AGENT = 'vendor-security-pipeline';

// ---------------------------------------------------------------------------------------------
// Helpers (exported where tests or clients use them)
// ---------------------------------------------------------------------------------------------

function resolveSettings(api: VendorApi, s: VendorHttpSettings): ResolvedSettings {
  const setting = (name: string) => `${api} ${name}`;
  if (typeof s.credentials !== 'function') {
    throw new ConfigurationError(setting('credentials'), 'a credential provider function is required');
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(s.baseUrl);
  } catch {
    throw new ConfigurationError(setting('baseUrl'), 'is not an absolute URL');
  }
  if (baseUrl.protocol !== 'https:' && baseUrl.protocol !== 'http:') {
    throw new ConfigurationError(setting('baseUrl'), 'must use https (or http for a local simulator)');
  }
  if (baseUrl.username || baseUrl.password || baseUrl.search || baseUrl.hash) {
    throw new ConfigurationError(setting('baseUrl'), 'must not carry user-info, a query or a fragment');
  }
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...definedOnly(s.retry ?? {}) };
  const positive = (name: string, value: number, min = 1) => {
    if (!Number.isFinite(value) || value < min) {
      throw new ConfigurationError(setting(name), `must be a number >= ${min}, got ${value}`);
    }
    return value;
  };
  positive('retry.maxAttempts', retry.maxAttempts);
  positive('retry.baseDelayMs', retry.baseDelayMs, 0);
  positive('retry.maxDelayMs', retry.maxDelayMs, 0);
  positive('retry.maxElapsedMs', retry.maxElapsedMs, 0);
  return {
    baseUrl,
    basePath: baseUrl.pathname.replace(/\/+$/, ''),
    credentials: s.credentials,
    requestTimeoutMs: positive('requestTimeoutMs', s.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    idleTimeoutMs: positive('idleTimeoutMs', s.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS),
    retry,
    logger: s.logger,
    sleep: s.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    random: s.random ?? Math.random,
    maxRedirects: positive('maxRedirects', s.maxRedirects ?? DEFAULT_MAX_REDIRECTS, 0),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function retryAllowed(
  mode: RetryMode,
  outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>,
): boolean {
  if (mode === 'never') return false;
  if (mode === 'idempotent') return true;
  // Non-idempotent: only when the vendor provably did not act on it. A 5xx, a timeout or a reset
  // may come after the scan was already created, and a second one would duplicate it.
  if (outcome.kind === 'status') return outcome.status === 429;
  return outcome.requestNotSent;
}

function permanent<T>(error: Error): AttemptOutcome<T> {
  return { kind: 'permanent', error, status: undefined };
}

/**
 * VendorAuthError's standard message says a refresh happened; when none did (rotate), say why,
 * keeping the error name Step Functions matches on.
 */
function authError(
  operation: string,
  status: number,
  requestId: string | undefined,
  refreshed: boolean,
): VendorAuthError {
  const error = new VendorAuthError({ operation, status, requestId });
  if (!refreshed) {
    const rid = requestId ? ` (vendor request id ${requestId})` : '';
    error.message = `${operation} was refused with HTTP ${status}${rid}; not retried with a refreshed credential, because a blind second attempt could act on a key nobody has stored yet`;
    Error.captureStackTrace(error, authError);
  }
  return error;
}

export function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

/** The vendor's request id, made safe to log: bounded and printable. */
function requestIdOf(headers: Dispatcher.ResponseData['headers']): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = header(headers, name);
    if (value) return value.replace(/[^\x21-\x7e]/g, '').slice(0, 128) || undefined;
  }
  return undefined;
}

/** Retry-After as delta-seconds or an HTTP-date, in ms from now; undefined when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // All three HTTP-date forms name the day or month; Date.parse alone would read "-5" as a year.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * True when the answer proves where its body ends: a Content-Length, or chunked transfer coding
 * (whose last chunk marks the end; undici fails the body when it never comes). Without either, an
 * HTTP/1.x body simply runs until the connection closes, and a clean close half-way is
 * indistinguishable from the real end.
 */
export function hasFraming(headers: Dispatcher.ResponseData['headers']): boolean {
  if (parseLength(header(headers, 'content-length')) !== undefined) return true;
  const coding = header(headers, 'transfer-encoding') ?? '';
  return coding
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .includes('chunked');
}

function parseLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

function normaliseIdentity(encoding: string | undefined): string | undefined {
  return encoding === undefined || encoding.trim().toLowerCase() === 'identity' ? undefined : encoding;
}

/**
 * zlib decoders for a Content-Encoding list, outermost last (so applied in reverse); `[]` for
 * none/identity; undefined when an encoding is unknown, in which case the bytes pass through as
 * sent and `contentEncoding` tells the caller.
 */
function decodersFor(encoding: string | undefined): Transform[] | undefined {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(zlib.createGunzip());
    else if (coding === 'deflate') decoders.push(zlib.createInflate());
    else if (coding === 'br') decoders.push(zlib.createBrotliDecompress());
    else {
      for (const d of decoders) d.destroy();
      return undefined;
    }
  }
  return decoders;
}

/** The body with any content-coding removed; errors of every stage surface on the returned stream. */
function decodedStream(body: Readable, decoders: Transform[]): Readable {
  if (decoders.length === 0) return body;
  // pipeline destroys every stage with the first error, so the last stage reports it.
  return pipeline([body, ...decoders], () => {}) as unknown as Readable;
}

function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** Reads a (decoded) body whole as UTF-8 text, refusing more than `limit` bytes. */
async function readText(
  operation: string,
  res: Dispatcher.ResponseData,
  limit: number,
  truncate = false,
): Promise<string> {
  const decoders = decodersFor(header(res.headers, 'content-encoding'));
  if (decoders === undefined) {
    discard(res.body);
    throw new VendorResponseError(operation, 'the answer uses an unsupported Content-Encoding');
  }
  const stream = decodedStream(res.body, decoders);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      stream.destroy();
      if (truncate) break;
      throw new VendorResponseError(operation, `the answer is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Wraps a download body so that every failure surfaces as a typed, credential-free error on the
 * stream: idle -> VendorTimeoutError('idle'), reset or premature close -> VendorNetworkError.
 * Backpressure is preserved: the generator pulls a chunk only when the consumer reads.
 */
function guardBody(
  operation: string,
  body: Readable,
  decoders: Transform[],
  options: { idleTimeoutMs: number; expectedBytes: number | undefined },
): Readable {
  const source = decodedStream(body, decoders);
  async function* relay(): AsyncGenerator<Buffer> {
    let bytes = 0;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        yield chunk;
      }
    } catch (err) {
      throw streamError(operation, err, options.idleTimeoutMs);
    }
    // undici checks Content-Length on most paths; this makes a short body an error on all of them.
    if (options.expectedBytes !== undefined && bytes !== options.expectedBytes) {
      throw new VendorNetworkError({ operation, code: 'TRUNCATED_BODY', requestNotSent: false });
    }
  }
  return Readable.from(relay(), { objectMode: false });
}

function streamError(operation: string, err: unknown, idleTimeoutMs: number): Error {
  if (err instanceof VendorError) return err;
  const code = errorCode(err);
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new VendorTimeoutError({ operation, timeoutMs: idleTimeoutMs, phase: 'idle' });
  }
  if (code === 'Z_BUF_ERROR') {
    // zlib saw the compressed stream end early: the body was cut short.
    return new VendorNetworkError({ operation, code: 'TRUNCATED_BODY', requestNotSent: false });
  }
  if (code?.startsWith('Z_') || code === 'ERR_BROTLI_DECOMPRESSION_FAILED') {
    return new VendorResponseError(operation, `the body could not be decoded (${code})`);
  }
  return new VendorNetworkError({ operation, code, requestNotSent: false, cause: sanitizeCause(err, []) });
}

/** The most specific error code on an undici/Node error (AggregateErrors from happy eyeballs too). */
function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | undefined;
  const candidates = [e?.code, e?.cause?.code, e?.errors?.[0]?.code];
  for (const c of candidates) if (typeof c === 'string' && c !== 'UND_ERR') return c;
  return undefined;
}

/**
 * A plain Error carrying only the name, code and message of what undici or Node threw. The
 * original is dropped because undici errors can reference request options (headers included)
 * and sockets; this one is safe to log, stringify and inspect.
 */
function sanitizeCause(err: unknown, secrets: Iterable<string>): Error {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const cause = new Error(redactSecrets(`${name}: ${message}`.slice(0, 300), secrets));
  const code = errorCode(err);
  if (code) Object.assign(cause, { code });
  cause.stack = cause.message;
  return cause;
}
