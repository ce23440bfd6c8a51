/**
 * The one redaction every vendor text passes before it reaches a log, an error, a state payload, an
 * S3 key or the terminal: error bodies, report names, recon `output`, listed names, input lines
 * quoted back in rejects. The vendor's text is not ours to trust: a 4xx may echo the addresses it
 * was sent, a report name may hold one, and a body may repeat the key it was given. The clients
 * never put a key into a message in the first place; this is the net under everything else.
 *
 * What it removes: email addresses (plain and percent-encoded), URL user-info, bearer and basic
 * credentials, `key=value` / `"key": "value"` secrets, vendor-style keys (`sk_…`) and any secret
 * the caller knows (the key in use). Idempotent: redacting twice gives the same text.
 */

export const REDACTED = '[REDACTED]';

const SENSITIVE_QUERY =
  /^(x-amz-.*|signature|sig|token|access_token|api_key|apikey|key|credential|policy|expires)$/i;

// Every repetition is bounded (a scheme is at most 32 characters, user-info 256, a local part 64 as
// RFC 5321 allows, a domain 127 labels): a vendor text is hostile, and an unbounded `*` before a
// literal makes each start position scan the rest of a long run, quadratic in the text (a 1 MiB
// recon `output` took minutes). Bounded, the work per position is constant.
// Order matters: user-info first (`user:pass@host` would otherwise leave `user:` behind), then
// addresses, then credential shapes.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@"'<>]{0,256}@/gi;
/** `user:pass@host` without a scheme, as a line of a domain list may hold it. */
const BARE_USERINFO = /(^|[\s"'(<,;=])[^\s/?#@"'<>:]{1,256}:[^\s/?#@"'<>]{1,256}@(?=[A-Za-z0-9[])/g;
/**
 * Local part, `@` or `%40`, then a dotted domain: what a person's address looks like in any text,
 * also glued to what follows by `_` (`…@example.org_20260101`, a vendor's report name).
 */
const EMAIL =
  /[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{0,63}[A-Za-z0-9!#$&'*+/=?^_`{|}~-](?:@|%40)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){0,126}\.[A-Za-z]{2,63}(?![A-Za-z0-9-])/gi;
const BEARER = /\b(Bearer|Basic)\s+(?!\[?REDACTED\]?)[A-Za-z0-9._~+/=-]+/gi;
const KEY_VALUE =
  /\b(api[_-]?key|apikey|x-api-key|access[_-]?token|refresh[_-]?token|token|secret|password|passwd|pwd|authorization)(["']?\s*[:=]\s*["']?)(?!\[?REDACTED\]?)[^\s"',;&}]+/gi;
const VENDOR_KEY = /\b(sk|pk|rk)_[A-Za-z0-9_]{8,}\b/g;

/**
 * `text` with every address, URL password, bearer token, key-shaped value and known secret (at
 * least 4 characters long) replaced by `[REDACTED]`.
 */
export function redactText(text: string, secrets: Iterable<string | undefined> = []): string {
  return redactSecrets(text, secrets)
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(BARE_USERINFO, `$1${REDACTED}@`)
    .replace(EMAIL, REDACTED)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(KEY_VALUE, `$1$2${REDACTED}`)
    .replace(VENDOR_KEY, REDACTED);
}

/** True when `text` holds an email address (plain or percent-encoded). */
export function containsEmail(text: string): boolean {
  EMAIL.lastIndex = 0;
  return EMAIL.test(text);
}

/** True when `text` holds something {@link redactText} would remove (e.g. a name that is an address). */
export function needsRedaction(text: string): boolean {
  return redactText(text) !== text;
}

/**
 * {@link redactText} over every string of a JSON-like value (object keys included), e.g. a vendor
 * answer kept for the record or a log line's fields. Non-string leaves are kept; an Error becomes
 * its name, message and stack; the value is copied, never changed.
 */
export function redactDeep<T>(value: T, secrets: Iterable<string | undefined> = []): T {
  const known = [...secrets];
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redactText(node, known);
    if (Array.isArray(node)) return node.map(walk);
    // An error's name, message and stack are not enumerable; what a log shows of it, redacted.
    if (node instanceof Error) {
      return {
        name: node.name,
        message: redactText(node.message, known),
        stack: redactText(node.stack ?? '', known),
      };
    }
    if (node !== null && typeof node === 'object' && !(node instanceof Date)) {
      return Object.fromEntries(
        Object.entries(node as Record<string, unknown>).map(([key, item]) => [
          redactText(key, known),
          walk(item),
        ]),
      );
    }
    return node;
  };
  return walk(value) as T;
}

/**
 * A URL fit to log: no user-info, the values of signature-like query parameters replaced, and what
 * {@link redactText} removes from the rest (a path can carry a report name, and so an address).
 */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    return '[unparseable url]';
  }
  parsed.username = '';
  parsed.password = '';
  for (const name of [...parsed.searchParams.keys()]) {
    if (SENSITIVE_QUERY.test(name)) parsed.searchParams.set(name, 'REDACTED');
  }
  return redactText(parsed.toString());
}

/** Replaces every occurrence of each secret (at least 4 characters long) with `[REDACTED]`. */
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}
