/**
 * The `key-echo` fault: a careless vendor that repeats the key a request carried. `body` adds the
 * request's credential header to a JSON answer (a status echoing `Authorization`, a recon echoing
 * `x-api-key`), under its header name and, bare, inside a sentence, where only a redaction that
 * knows the key in use can find it. `key-id` gives the bare key as the `key_id` of a JSON answer
 * (key info), as a vendor whose key id is the key itself would. `report-name` makes the next
 * `POST /recon` name its report after the key (`rpt-<key>-<hex>`), as a vendor deriving names from
 * the caller would. The `headers` fault puts it (or anything else) into the answer's headers.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { JSON_TYPE, type SimResponse } from './http.ts';
import type { Fault } from './types.ts';

export type KeyEchoFault = Extract<Fault, { type: 'key-echo' }>;

export const KEY_ECHO_TARGETS = ['body', 'report-name', 'key-id'] as const;

/** The credential header a request carried, by its name, and the key alone. */
function credentialOf(req: IncomingMessage): { header: string; value: string; key: string } | undefined {
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string' && authorization !== '') {
    return { header: 'authorization', value: authorization, key: authorization.replace(/^Bearer\s+/i, '') };
  }
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return { header: 'x-api-key', value: apiKey, key: apiKey };
  return undefined;
}

/** Before `POST /recon` is handled: the report it makes is named after the key (`report-name`). */
export function reportNameWithKey(req: IncomingMessage): string | undefined {
  const credential = credentialOf(req);
  return credential === undefined ? undefined : `rpt-${credential.key}-${randomBytes(3).toString('hex')}`;
}

/**
 * `response` with the request's credential added (`body`): a JSON object answer gets the header
 * (`"authorization": "Bearer …"` or `"x-api-key": "…"`) and a `note` holding the bare key; any
 * other answer is sent as it is (an echo into a ZIP or a redirect would not be read as text).
 */
export function echoKeyInto(
  response: SimResponse,
  req: IncomingMessage,
  into: 'body' | 'key-id' = 'body',
): SimResponse {
  const credential = credentialOf(req);
  const body = response.body;
  if (credential === undefined || !Buffer.isBuffer(body) || response.status >= 300) return response;
  if (!String(response.headers?.['content-type'] ?? '').startsWith(JSON_TYPE)) return response;
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return response;
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return response;
  const echoed =
    into === 'key-id'
      ? { ...answer, key_id: credential.key }
      : { ...answer, [credential.header]: credential.value, note: `served for ${credential.key}` };
  const { 'content-length': _length, ...headers } = response.headers ?? {};
  return { status: response.status, headers, body: Buffer.from(JSON.stringify(echoed)) };
}

/**
 * `response` with the headers of a `headers` fault set over its own, `{key}` in a value standing
 * for the key the request carried (a vendor naming its caller in a `Content-Type` parameter).
 */
export function withHeaders(
  response: SimResponse,
  set: Readonly<Record<string, string>>,
  req: IncomingMessage,
): SimResponse {
  const key = credentialOf(req)?.key ?? '';
  const headers: Record<string, string | number> = { ...response.headers };
  for (const [name, value] of Object.entries(set)) headers[name] = value.split('{key}').join(key);
  return { ...response, headers };
}

/** A header name as HTTP allows it, lower case (how Node hands them over). */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/** Refuses a `headers` fault that sets what Node would not send, or what frames the body. */
export function validateHeaders(set: unknown): void {
  if (set === null || typeof set !== 'object' || Array.isArray(set)) {
    throw new TypeError('headers fault set must be an object of header names to values');
  }
  for (const [name, value] of Object.entries(set)) {
    if (!HEADER_NAME.test(name) || name === 'content-length' || name === 'transfer-encoding') {
      throw new TypeError(
        `headers fault set: ${JSON.stringify(name)} is not a lower-case header name the fault may set`,
      );
    }
    // Node refuses a value with a control character (other than tab) when it is written.
    if (typeof value !== 'string' || /[^\t\x20-\x7e\x80-\xff]/.test(value)) {
      throw new TypeError(`headers fault set: the value of ${name} must be a string of header characters`);
    }
  }
}
