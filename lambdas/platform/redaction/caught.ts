/**
 * What a Catch hands the step that records a failure, made fit to store: the error's name and
 * message without stack traces, credential-looking text or control characters, bounded in size.
 * Shared by every workflow's failure record.
 */
import { redactText, redactUrl } from '#lambdas/platform/redaction/redact';

/** The error message kept in a failure record, in UTF-8 bytes. */
export const MAX_ERROR_MESSAGE_BYTES = 1024;

/**
 * The error behind a Catch. In AWS the Cause of a Lambda error is a JSON string
 * `{"errorType","errorMessage","trace"}`; the local engine passes the plain message. Both work, and
 * so does anything else (the result is then a generic description, never a throw).
 */
export function describeCaught(caught: unknown): { name: string; message: string } | undefined {
  if (caught === null || typeof caught !== 'object') return undefined;
  const { Error: errorName, Cause: cause } = caught as Record<string, unknown>;
  let name = typeof errorName === 'string' && errorName.trim() !== '' ? errorName : undefined;
  let message: string | undefined;
  const parsed = typeof cause === 'string' ? safe(() => JSON.parse(cause) as unknown) : cause;
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const record = parsed as Record<string, unknown>;
    if (typeof record.errorMessage === 'string') message = record.errorMessage;
    else if (typeof record.message === 'string') message = record.message;
    const type = typeof record.errorType === 'string' ? record.errorType : undefined;
    if (name === undefined || (type !== undefined && /^States\.TaskFailed$/.test(name))) name = type ?? name;
  } else if (typeof cause === 'string') {
    message = cause;
  }
  if (name === undefined && message === undefined) return undefined;
  return {
    name: cleanName(name ?? 'UnknownError'),
    message: cleanMessage(message ?? 'no error message was given'),
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const STACK_FRAME = /\n\s*at\s[\s\S]*$/;
const URLS = /\bhttps?:\/\/[^\s"'<>]+/gi;

/**
 * A message fit for logs, S3 and the execution history: no stack trace, nothing `redactText`
 * removes (addresses, credentials), no control characters, at most MAX_ERROR_MESSAGE_BYTES.
 */
export function cleanMessage(message: string): string {
  // Cut first: the patterns below need not run over megabytes of someone's error text.
  const withoutStack = message.slice(0, 16 * MAX_ERROR_MESSAGE_BYTES).replace(STACK_FRAME, '');
  const redacted = redactText(withoutStack.replace(URLS, (url) => redactUrl(url)))
    .replace(CONTROL_CHARS, ' ')
    .trim();
  return limitBytes(redacted === '' ? 'no error message was given' : redacted, MAX_ERROR_MESSAGE_BYTES);
}

export function cleanName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 128);
  return cleaned === '' ? 'UnknownError' : cleaned;
}

export function cleanText(text: string, maxChars: number): string {
  return text.replace(CONTROL_CHARS, '').trim().slice(0, maxChars);
}

function limitBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const marker = ' [truncated]';
  let out = '';
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes - marker.length) break;
    out += char;
    bytes += size;
  }
  return `${out}${marker}`;
}

export function safe<T>(compute: () => T): T | undefined {
  try {
    return compute();
  } catch {
    return undefined;
  }
}
