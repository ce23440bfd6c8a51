/**
 * Typed errors shared by the vendor clients, the workflow core and the handlers. An error only one
 * workflow throws lives in that workflow's folder (e.g. lambdas/scan/errors.ts), its name with it.
 *
 * Every `name` is stable: Step Functions matches Retry/Catch rules on the error name a Lambda
 * throws, so renaming one of these is a breaking change to the state machine definitions.
 *
 * No message here may contain a credential. Messages name the operation, the status and the
 * vendor request id; request URLs are passed through `redactUrl` by the HTTP layer first, and any
 * vendor text kept on an error passes `redactText`.
 */
import { redactText } from '#lambdas/platform/redaction/redact';

/**
 * The error names Step Functions Retry and Catch rules match on, written once: the classes below
 * set them, and the retry policies in lib/ import them (a minifier may rename classes, so the
 * names are strings, not `Class.name`).
 */
export const ERROR_NAME = {
  VendorError: 'VendorError',
  VendorHttpError: 'VendorHttpError',
  VendorUnavailableError: 'VendorUnavailableError',
  VendorAuthError: 'VendorAuthError',
  VendorThrottledError: 'VendorThrottledError',
  VendorTimeoutError: 'VendorTimeoutError',
  VendorNetworkError: 'VendorNetworkError',
  VendorUnframedBodyError: 'VendorUnframedBodyError',
  VendorResponseError: 'VendorResponseError',
  VendorInsecureRedirectError: 'VendorInsecureRedirectError',
  VendorBodyTooLargeError: 'VendorBodyTooLargeError',
  /** A content-coded body that decodes to more than its ratio bound allows (a compression bomb). */
  VendorDecodingRatioError: 'VendorDecodingRatioError',
  /** A request (a redirect hop, or a name that resolved) to where the pipeline may not go. */
  VendorDestinationRefusedError: 'VendorDestinationRefusedError',
  /** A JSON answer nested deeper, or larger, than the parser takes. */
  VendorJsonLimitError: 'VendorJsonLimitError',
  /** A vendor's report name that holds a key value in use or a credential's shape. */
  ReportNameRefusedError: 'ReportNameRefusedError',
  InvalidInputError: 'InvalidInputError',
  ConfigurationError: 'ConfigurationError',
  SecretAccessError: 'SecretAccessError',
  ArchiveVerificationError: 'ArchiveVerificationError',
  /** The pause switch is on: the intake refused to start a run (its event waits in the DLQ). */
  PipelinePausedError: 'PipelinePausedError',
} as const;

export type ErrorName = (typeof ERROR_NAME)[keyof typeof ERROR_NAME];

/** Base class so callers can `instanceof VendorError` for anything that came from the vendor. */
export class VendorError extends Error {
  /** Which vendor API and operation failed, e.g. `scan.getStatus`. */
  readonly operation: string;
  /** True when the same request may succeed later (throttling, 5xx, network, timeout). */
  readonly retryable: boolean;

  constructor(message: string, options: { operation: string; retryable: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = ERROR_NAME.VendorError;
    this.operation = options.operation;
    this.retryable = options.retryable;
  }
}

/** The longest vendor body kept on a {@link VendorHttpError}, in characters. */
export const MAX_BODY_SNIPPET_CHARS = 512;

/** A non-2xx answer that is not one of the more specific cases below (a permanent 4xx, or 5xx after retries). */
export class VendorHttpError extends VendorError {
  readonly status: number;
  /** The vendor's request id header (x-request-id / x-amzn-requestid / request-id), when it sends one. */
  readonly requestId: string | undefined;
  /**
   * At most the first 512 characters of the body, redacted (`redactText`: a 4xx may echo the
   * addresses it was sent), for diagnosis in code that asks for it. Not enumerable: the Lambda
   * runtime logs an error with its enumerable fields, and the body is the vendor's text.
   */
  declare readonly bodySnippet: string | undefined;

  constructor(options: {
    operation: string;
    status: number;
    requestId?: string | undefined;
    bodySnippet?: string | undefined;
    retryable?: boolean;
  }) {
    const requestId =
      options.requestId === undefined ? undefined : redactText(options.requestId).slice(0, 128);
    const rid = requestId ? ` (vendor request id ${requestId})` : '';
    super(`${options.operation} failed with HTTP ${options.status}${rid}`, {
      operation: options.operation,
      retryable: options.retryable ?? options.status >= 500,
    });
    this.name = ERROR_NAME.VendorHttpError;
    this.status = options.status;
    this.requestId = requestId;
    Object.defineProperty(this, 'bodySnippet', {
      value:
        options.bodySnippet === undefined
          ? undefined
          : redactText(options.bodySnippet.slice(0, MAX_BODY_SNIPPET_CHARS)),
      enumerable: false,
      writable: false,
    });
  }
}

/**
 * A 5xx: the vendor failed, not the request. Its own class (and name) because Step Functions
 * retries it while a 4xx `VendorHttpError` is permanent. `vendorHttpError` picks the class.
 */
export class VendorUnavailableError extends VendorHttpError {
  constructor(options: ConstructorParameters<typeof VendorHttpError>[0]) {
    super(options);
    this.name = ERROR_NAME.VendorUnavailableError;
  }
}

/** The error for a non-2xx answer: `VendorUnavailableError` for a 5xx, `VendorHttpError` otherwise. */
export function vendorHttpError(options: ConstructorParameters<typeof VendorHttpError>[0]): VendorHttpError {
  return options.status >= 500 ? new VendorUnavailableError(options) : new VendorHttpError(options);
}

/** 401/403 that survived one credential refresh. Permanent: a human must fix the key. */
export class VendorAuthError extends VendorError {
  readonly status: number;
  readonly requestId: string | undefined;
  constructor(options: { operation: string; status: number; requestId?: string | undefined }) {
    super(
      `${options.operation} was refused with HTTP ${options.status} after one credential refresh: the API key is invalid, expired or rotated`,
      { operation: options.operation, retryable: false },
    );
    this.name = ERROR_NAME.VendorAuthError;
    this.status = options.status;
    this.requestId = options.requestId;
  }
}

/** 429 after the retry budget ran out (or on a call that must not be retried blindly). */
export class VendorThrottledError extends VendorError {
  /** The vendor's Retry-After, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  constructor(options: {
    operation: string;
    retryAfterMs?: number | undefined;
    requestId?: string | undefined;
  }) {
    const hint =
      options.retryAfterMs === undefined ? '' : `; vendor asked to retry after ${options.retryAfterMs} ms`;
    super(`${options.operation} was throttled by the vendor (HTTP 429)${hint}`, {
      operation: options.operation,
      retryable: true,
    });
    this.name = ERROR_NAME.VendorThrottledError;
    this.retryAfterMs = options.retryAfterMs;
    this.requestId = options.requestId;
  }
}

/** The request (or a download going idle) exceeded its timeout. */
export class VendorTimeoutError extends VendorError {
  readonly timeoutMs: number;
  readonly phase: 'request' | 'idle';
  constructor(options: { operation: string; timeoutMs: number; phase: 'request' | 'idle'; cause?: unknown }) {
    super(
      options.phase === 'idle'
        ? `${options.operation} stalled: no bytes for ${options.timeoutMs} ms`
        : `${options.operation} timed out after ${options.timeoutMs} ms`,
      { operation: options.operation, retryable: true, cause: options.cause },
    );
    this.name = ERROR_NAME.VendorTimeoutError;
    this.timeoutMs = options.timeoutMs;
    this.phase = options.phase;
  }
}

/** Connection refused/reset, DNS failure, body cut short. */
export class VendorNetworkError extends VendorError {
  /** `true` only when we know the request never left this process (e.g. ECONNREFUSED). */
  readonly requestNotSent: boolean;
  readonly code: string | undefined;
  constructor(options: {
    operation: string;
    code?: string | undefined;
    requestNotSent: boolean;
    cause?: unknown;
  }) {
    super(`${options.operation} failed on the network${options.code ? ` (${options.code})` : ''}`, {
      operation: options.operation,
      retryable: true,
      cause: options.cause,
    });
    this.name = ERROR_NAME.VendorNetworkError;
    this.code = options.code;
    this.requestNotSent = options.requestNotSent;
  }
}

/**
 * A 2xx download with neither Content-Length nor chunked framing: its body ends when the
 * connection closes, so a clean close half-way looks exactly like the end. Such bytes are never
 * stored as complete; the idempotent fetch is retried instead (and, in AWS, Step Functions retries
 * this name), in the hope of a framed answer.
 */
export class VendorUnframedBodyError extends VendorNetworkError {
  constructor(operation: string) {
    super({ operation, code: 'UNFRAMED_BODY', requestNotSent: false });
    this.message = `${operation} was answered with neither Content-Length nor chunked framing: its end cannot be proven, so the body was refused`;
    this.name = ERROR_NAME.VendorUnframedBodyError;
  }
}

/** The vendor answered 2xx but the body is not what the operation needs (malformed JSON, missing uuid...). */
export class VendorResponseError extends VendorError {
  constructor(operation: string, problem: string) {
    super(`${operation} returned an unusable response: ${problem}`, { operation, retryable: false });
    this.name = ERROR_NAME.VendorResponseError;
  }
}

/**
 * A report name that holds a key (a key value in use, or a credential's shape: see `holdsSecret`).
 * The name cannot be printed, stored, slugged into an S3 key or sent back in a download URL without
 * spreading the key, so the report is refused and named by a fingerprint of the exact name (the
 * first 16 hex digits of its SHA-256). Permanent: the vendor gives the same name again.
 */
export class ReportNameRefusedError extends VendorResponseError {
  /** `sha256:` and 16 hex digits of the exact name: tells names apart, reveals nothing. */
  readonly fingerprint: string;
  constructor(operation: string, fingerprint: string) {
    super(operation, `the report name holds a key; the report is refused (name ${fingerprint})`);
    this.name = ERROR_NAME.ReportNameRefusedError;
    this.fingerprint = fingerprint;
  }
}

/**
 * A download redirect that would leave https for plain http: the report would travel in clear.
 * Permanent: the same chain would redirect the same way.
 */
export class VendorInsecureRedirectError extends VendorResponseError {
  constructor(operation: string) {
    super(operation, 'a redirect from https to plain http was refused');
    this.name = ERROR_NAME.VendorInsecureRedirectError;
  }
}

/**
 * A request the transport refused to make: its destination is neither a configured vendor origin
 * nor a public address over https (a redirect to 169.254.169.254, a name resolving to 10.0.0.5...).
 * Nothing was sent. Permanent: the vendor would point the same way again. `url` is redacted (no
 * user-info, no signature); the message never holds a key.
 */
export class VendorDestinationRefusedError extends VendorResponseError {
  readonly url: string;
  readonly reason: string;
  constructor(operation: string, url: string, reason: string) {
    super(operation, `a request to ${url} was refused: ${reason}`);
    this.name = ERROR_NAME.VendorDestinationRefusedError;
    this.url = url;
    this.reason = reason;
  }
}

/**
 * A 2xx JSON answer past the parser's bounds (JSON_LIMITS in vendor-api/json.ts): nested deeper
 * than any answer of the vendor's needs, or larger. Refused before anything walks it: every
 * recursive walk over such a value (redaction, JSON.stringify, structuredClone) would overflow the
 * stack with a bare RangeError. Permanent: the same answer would come back as deep.
 */
export class VendorJsonLimitError extends VendorResponseError {
  constructor(operation: string, problem: string) {
    super(operation, problem);
    this.name = ERROR_NAME.VendorJsonLimitError;
  }
}

/**
 * A download body went past the caller's byte cap (counted after any Content-Encoding is removed),
 * or announced a length past it: the body is cut there. Permanent: the same download would be as
 * large again.
 */
export class VendorBodyTooLargeError extends VendorResponseError {
  readonly maxBytes: number;
  constructor(operation: string, maxBytes: number, announced?: number) {
    super(
      operation,
      announced === undefined
        ? `the body is larger than ${maxBytes} bytes; the download was cut there`
        : `the body is announced as ${announced} bytes, more than the ${maxBytes} accepted; nothing was read`,
    );
    this.name = ERROR_NAME.VendorBodyTooLargeError;
    this.maxBytes = maxBytes;
  }
}

/**
 * A content-coded (gzip, deflate, br) body that decoded to more than `maxRatio` times the bytes
 * received, past the first MiB: a compression bomb, stopped as it inflates, however far under the
 * byte cap it still is. Permanent: the same body would inflate the same way.
 */
export class VendorDecodingRatioError extends VendorResponseError {
  readonly maxRatio: number;
  constructor(operation: string, maxRatio: number, decodedBytes: number, encodedBytes: number) {
    super(
      operation,
      `the body decoded to ${decodedBytes} bytes from ${encodedBytes} received, more than ${maxRatio} times as many; the download was cut there`,
    );
    this.name = ERROR_NAME.VendorDecodingRatioError;
    this.maxRatio = maxRatio;
  }
}

/**
 * Bad input from a user or a file. `input` names the field (e.g. `domain`, `emails[2]`,
 * `domains.txt line 14`) and `reason` says what is wrong. The offending value may be quoted
 * only when it is not personal data: domains yes, emails no.
 */
export class InvalidInputError extends Error {
  readonly input: string;
  readonly reason: string;
  constructor(input: string, reason: string) {
    super(`Invalid ${input}: ${reason}`);
    this.name = ERROR_NAME.InvalidInputError;
    this.input = input;
    this.reason = reason;
  }
}

/** A required environment variable or configuration value is missing or malformed (cold start). */
export class ConfigurationError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`Configuration ${setting}: ${problem}`);
    this.name = ERROR_NAME.ConfigurationError;
    this.setting = setting;
  }
}

/** Which check of a stored ZIP failed (see `verifyStoredZip`). */
export type ArchiveCheck =
  | 'not-zip'
  | 'end-of-central-directory'
  | 'central-directory'
  | 'entry'
  | 'crc'
  | 'limits';

/**
 * A downloaded archive failed a check: it is not archived, and nothing is left under its final key.
 * The message names the check and, for an entry, its position and file name (redacted); never file
 * content.
 */
export class ArchiveVerificationError extends Error {
  readonly check: ArchiveCheck;
  constructor(check: ArchiveCheck, problem: string) {
    // An entry's file name is the vendor's text, and may hold an address.
    super(`The archive failed its ${check} check: ${redactText(problem)}`);
    this.name = ERROR_NAME.ArchiveVerificationError;
    this.check = check;
  }
}
