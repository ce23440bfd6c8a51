/**
 * What one attempt of the vendor transport came to, and the typed errors it turns into. The retry
 * loop (`VendorHttp.execute`) decides what happens next from the outcome alone.
 */

import {
  VendorAuthError,
  type VendorError,
  VendorNetworkError,
  VendorThrottledError,
  VendorTimeoutError,
  VendorUnframedBodyError,
  vendorHttpError,
} from '#lambdas/platform/errors';
import { redactText } from '#lambdas/platform/redaction/redact';
import { CONNECT_TIMEOUT } from './send.ts';

/** What one attempt came to; the loop in `execute` decides what happens next. */
export type AttemptOutcome<T> =
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

/** Codes that prove the request never reached the vendor: no connection was ever made. */
export const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', CONNECT_TIMEOUT]);

/** The outcome code of a 2xx download whose end cannot be proven (see `hasFraming`). */
export const UNFRAMED_BODY = 'UNFRAMED_BODY';

/** The HTTP status and network error code of an outcome, when it has them: for logs and events. */
export function outcomeFacts(outcome: AttemptOutcome<unknown>): { status?: number; errorCode?: string } {
  const status = 'status' in outcome ? outcome.status : undefined;
  const errorCode =
    outcome.kind === 'network' ? outcome.code : outcome.kind === 'timeout' ? 'TIMEOUT' : undefined;
  return {
    ...(status === undefined ? {} : { status }),
    ...(errorCode === undefined ? {} : { errorCode }),
  };
}

export function permanent<T>(error: Error): AttemptOutcome<T> {
  return { kind: 'permanent', error, status: undefined };
}

/**
 * VendorAuthError's standard message says a refresh happened; when none did (rotate), say why,
 * keeping the error name Step Functions matches on.
 */
export function authError(
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

/** The most specific error code on a Node error (AggregateErrors from happy eyeballs too). */
export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | undefined;
  const candidates = [e?.code, e?.cause?.code, e?.errors?.[0]?.code];
  for (const c of candidates) if (typeof c === 'string') return c;
  return undefined;
}

/**
 * A plain Error carrying only the name, code and message of what Node threw. The original is
 * dropped because network errors can reference request options (headers included)
 * and sockets; this one is safe to log, stringify and inspect.
 */
export function sanitizeCause(err: unknown, secrets: Iterable<string>): Error {
  const e = err as { name?: unknown; message?: unknown } | undefined;
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const cause = new Error(redactText(`${name}: ${message}`, secrets).slice(0, 300));
  const code = errorCode(err);
  if (code) Object.assign(cause, { code });
  cause.stack = cause.message;
  return cause;
}

/** The typed error a retryable outcome becomes once the loop gives up. */
export function finalError(
  operation: string,
  outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>,
  requestTimeoutMs: number,
): VendorError {
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
        timeoutMs: requestTimeoutMs,
        phase: 'request',
        cause: outcome.cause,
      });
  }
}
