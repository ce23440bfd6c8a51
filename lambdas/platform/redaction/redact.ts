/**
 * The one redaction every vendor text passes before it reaches a log, an error, a state payload, an
 * S3 key or the terminal: error bodies, status bodies, report names, recon answers, listed names,
 * input lines quoted back in rejects. The vendor's text is not ours to trust: a 4xx may echo the
 * addresses it was sent, a report name may hold one, and a body may repeat the key it was given. The
 * clients never put a key into a message in the first place; this is the net under everything else.
 *
 * What it removes: the key values in use (every key a vendor client sent or read from its secret
 * registers itself here, see {@link rememberKeyValue}, so a key that looks like a plain word is
 * caught too), the addresses of the person a request is about in every form a vendor could echo
 * them (see {@link rememberAddresses}), email addresses by their shape (plain and percent-encoded), URL user-info, bearer and basic
 * credentials, `key=value` / `"key": "value"` secrets, the values of fields named like a credential
 * (`api_key`, `x-api-key`, `authorization`, `token`, `secret`…) and vendor-style keys (`sk_…`).
 * Idempotent: redacting twice gives the same text.
 */

import { createHash } from 'node:crypto';
import { domainToASCII, domainToUnicode } from 'node:url';
import { jsonDepthExceeds } from '#lambdas/platform/input/json-depth';

export const REDACTED = '[REDACTED]';

/**
 * `sha256:` and the first 16 hex digits of the SHA-256 of `text`: how a value that may not be shown
 * (a report name holding a key) is named in errors, records and the terminal.
 */
export function fingerprintOf(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16)}`;
}

/**
 * The shortest value the registry takes: a real key is long and random, and a short one (a test's
 * `key1`) would blank ordinary words wherever it occurs.
 */
const MIN_KNOWN_KEY_LENGTH = 8;
/**
 * Key values remembered at once, the least recently used dropped first. A Lambda's module scope
 * lives across invocations and rotations; the keys used last are what a vendor could still echo,
 * and a key in use is registered again with every request, so a burst of other values (a rotation
 * probing the candidates of an answer) cannot push it out for longer than the burst.
 */
const MAX_KNOWN_KEYS = 64;
/** The key values in use, the most recently registered last (a Set keeps insertion order). */
const knownKeys = new Set<string>();

/**
 * Registers a key value (the current or pending key a client sent, a key read from its secret) so
 * that every later {@link redactText} removes it wherever it appears, whatever it looks like.
 * Values shorter than 8 characters are ignored (see MIN_KNOWN_KEY_LENGTH).
 */
export function rememberKeyValue(value: string | undefined): void {
  if (value === undefined || value.length < MIN_KNOWN_KEY_LENGTH) return;
  // Moved to the newest place: the least recently used key is the one dropped.
  knownKeys.delete(value);
  knownKeys.add(value);
  if (knownKeys.size > MAX_KNOWN_KEYS) {
    const oldest = knownKeys.values().next().value;
    if (oldest !== undefined) knownKeys.delete(oldest);
  }
}

/**
 * Addresses remembered at once, the least recently used dropped first: a request holds at most 50,
 * and a warm Lambda serves one request at a time, so this keeps the last few people's.
 */
const MAX_KNOWN_ADDRESSES = 256;
/** The addresses a request was about, lower-cased, the most recently registered last. */
const knownAddresses = new Set<string>();
/** The forms of every known address, indexed for the search; rebuilt when the set changes. */
let addressForms: AddressForms | undefined;

/**
 * Registers the addresses a request is about (those a recon sends), so that every later
 * {@link redactText} removes each wherever it appears, whatever surrounds it: as typed or in any
 * case, with its domain in punycode or in Unicode (`xn--mller-kva.de`, `müller.de`), its `@` as
 * `%40`, `&#64;`, `&#x40;`, `&commat;` or `\\u0040`, glued to digits, letters or dashes (a report
 * named `bob@example.org-20261128`). The pattern alone misses most of these; the pipeline knows
 * the exact addresses it sent, and uses them.
 */
export function rememberAddresses(addresses: Iterable<string>): void {
  for (const address of addresses) {
    const lowered = address.trim().toLowerCase();
    if (lowered.lastIndexOf('@') < 1) continue;
    knownAddresses.delete(lowered);
    knownAddresses.add(lowered);
    if (knownAddresses.size > MAX_KNOWN_ADDRESSES) {
      const oldest = knownAddresses.values().next().value;
      if (oldest !== undefined) knownAddresses.delete(oldest);
    }
    addressForms = undefined;
  }
}

/**
 * The ways an `@` is written in text a vendor echoes: plain, percent, HTML and JSON/JS escapes
 * (each backslash possibly escaped again, as JSON holding JSON has it). Only where one occurs can
 * an address be: the search starts from these and looks at what is either side.
 */
const AT_SIGN = /@|%40|&#0*64;|&#x0*40;|&commat;|\\{0,4}u0040|\\{0,4}x40/gi;

/** Every known address's local parts and domains, in every form, lower-cased. */
interface AddressForms {
  /** Domain form -> the local-part forms of the addresses at it. */
  readonly byDomain: ReadonlyMap<string, ReadonlySet<string>>;
  /** The domain forms by their first character, longest first. */
  readonly domainsByFirst: ReadonlyMap<string, readonly string[]>;
}

/** A form and its case-folded twins: upper-cased and back is one too (`ß` becomes `ss`). */
function folded(forms: readonly string[]): Set<string> {
  return new Set(
    forms
      .filter((form) => form !== '')
      .flatMap((form) => [form, form.normalize('NFC'), form.normalize('NFD')])
      .flatMap((form) => [form.toLowerCase(), form.toUpperCase().toLowerCase()]),
  );
}

function knownAddressForms(): AddressForms {
  if (addressForms !== undefined) return addressForms;
  const byDomain = new Map<string, Set<string>>();
  for (const address of knownAddresses) {
    const at = address.lastIndexOf('@');
    const domain = address.slice(at + 1);
    const ascii = domainToASCII(domain);
    const locals = folded([address.slice(0, at)]);
    for (const form of folded([domain, ascii, ascii === '' ? '' : domainToUnicode(ascii)])) {
      const known = byDomain.get(form) ?? new Set<string>();
      for (const local of locals) known.add(local);
      byDomain.set(form, known);
    }
  }
  const domainsByFirst = new Map<string, string[]>();
  for (const form of [...byDomain.keys()].sort((a, b) => b.length - a.length)) {
    const first = form.slice(0, 1);
    domainsByFirst.set(first, [...(domainsByFirst.get(first) ?? []), form]);
  }
  addressForms = { byDomain, domainsByFirst };
  return addressForms;
}

/**
 * `text` with every form of every remembered address replaced by `[REDACTED]`: at each written `@`,
 * the longest known domain form after it and the longest of its local parts before it, compared
 * without regard to case. Work per `@`, not per character and address: text without one is
 * passed over at the speed of one search.
 */
function redactKnownAddresses(text: string): string {
  if (knownAddresses.size === 0) return text;
  const forms = knownAddressForms();
  const spans: [number, number][] = [];
  for (const at of text.matchAll(AT_SIGN)) {
    const atStart = at.index;
    const atEnd = atStart + at[0].length;
    const candidates = forms.domainsByFirst.get(text.slice(atEnd, atEnd + 1).toLowerCase()) ?? [];
    const domain = candidates.find((form) => text.slice(atEnd, atEnd + form.length).toLowerCase() === form);
    if (domain === undefined) continue;
    let localStart: number | undefined;
    for (const local of forms.byDomain.get(domain) ?? []) {
      const start = atStart - local.length;
      if (start >= 0 && text.slice(start, atStart).toLowerCase() === local) {
        localStart = Math.min(localStart ?? start, start);
      }
    }
    if (localStart !== undefined) spans.push([localStart, atEnd + domain.length]);
  }
  if (spans.length === 0) return text;
  let out = '';
  let from = 0;
  for (const [start, end] of spans) {
    if (start < from) continue;
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}

/** How many key values the redaction knows (the tests read it). */
export function knownKeyCount(): number {
  return knownKeys.size;
}

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
  /\b(api[_-]?key|apikey|x-api-key|access[_-]?token|refresh[_-]?token|token|secret|password|passwd|pwd|authorization)(["']?\s*[:=]\s*["']?)(?!\[?REDACTED\]?|(?:Bearer|Basic)\s+\[REDACTED\])[^\s"',;&}]+/gi;
const VENDOR_KEY = /\b(sk|pk|rk)_[A-Za-z0-9_]{8,}\b/g;

/**
 * `text` with every key value in use (registered, or given in `secrets`, at least 4 characters
 * long), address, URL password, bearer token and key-shaped value replaced by `[REDACTED]`.
 */
export function redactText(text: string, secrets: Iterable<string | undefined> = []): string {
  return redactKnownAddresses(redactSecrets(redactSecrets(text, secrets), knownKeys))
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(BARE_USERINFO, `$1${REDACTED}@`)
    .replace(EMAIL, REDACTED)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(KEY_VALUE, `$1$2${REDACTED}`)
    .replace(VENDOR_KEY, REDACTED);
}

/** True when `text` holds an email address (plain or percent-encoded), or a remembered one in any form. */
export function containsEmail(text: string): boolean {
  EMAIL.lastIndex = 0;
  return EMAIL.test(text) || redactKnownAddresses(text) !== text;
}

/**
 * True when `text` holds a credential: a key value in use, or the shape of one (a bearer token, a
 * `token=…`, an `sk_…` key, a URL password). Addresses are not credentials: see {@link containsEmail}.
 */
export function holdsSecret(text: string): boolean {
  const withoutAddresses = redactKnownAddresses(text).split(REDACTED).join('').replace(EMAIL, '');
  return redactText(withoutAddresses) !== withoutAddresses;
}

/** True when `text` holds something {@link redactText} would remove (e.g. a name that is an address). */
export function needsRedaction(text: string): boolean {
  return redactText(text) !== text;
}

/**
 * A field whose value is a credential whatever it looks like: an echoed header (`authorization`,
 * `x-api-key`), a JSON answer's `api_key`, `token`, `secret`, `password`. A value alone carries no
 * `key=` context for {@link redactText} to see, so {@link redactDeep} blanks these by name.
 */
const SENSITIVE_FIELD =
  /^(x-)?(api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|password|passwd|pwd|authorization|proxy-authorization|cookie|set-cookie)$/i;

/**
 * {@link redactText} over every string of a JSON-like value (object keys included), e.g. a vendor
 * answer kept for the record or a log line's fields; a string or number under a credential-named
 * field (`api_key`, `x-api-key`, `authorization`, `token`, `secret`…) becomes `[REDACTED]` whole.
 * Other non-string leaves are kept; an Error becomes its name, message and stack; the value is
 * copied, never changed.
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
          SENSITIVE_FIELD.test(key) && (typeof item === 'string' || typeof item === 'number')
            ? blankCredential(item, known)
            : walk(item),
        ]),
      );
    }
    return node;
  };
  return walk(value) as T;
}

/** Already redacted to nothing but its scheme (`Bearer [REDACTED]`): kept, so redaction is idempotent. */
const ONLY_REDACTED = /^(?:(?:Bearer|Basic)\s+)?\[REDACTED\]$/;

/** A credential-named field's value: `[REDACTED]` whole, or the scheme and `[REDACTED]`. */
function blankCredential(value: string | number, known: readonly (string | undefined)[]): string {
  const redacted = typeof value === 'string' ? redactText(value, known) : '';
  return ONLY_REDACTED.test(redacted) ? redacted : REDACTED;
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

/**
 * Replaces every occurrence of each secret (at least 4 characters long) with `[REDACTED]`, the
 * longest first, so a key that contains another is not left half-shown.
 */
export function redactSecrets(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  const ordered = [...secrets].filter((s): s is string => s !== undefined && s.length >= 4);
  ordered.sort((a, b) => b.length - a.length);
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/**
 * A vendor's body kept as text (a status answer's `raw`): {@link redactText}, and when the body is
 * JSON, still JSON. Text redaction keeps every byte it does not replace, and its replacement holds
 * no quote or backslash, so JSON stays JSON in all but two cases, which fall back to the body
 * parsed, {@link redactDeep}ed and serialised again: a credential-named field whose value text
 * redaction cannot see (`"api_key": "plainword"`, or an escaped `\u`-form of a key), and a
 * `"token": "a\"b"` value cut at its escaped quote, which would end the string early.
 */
/** Deeper JSON is redacted as text only (the vendor JSON bound is 64: vendor-api/json.ts). */
const MAX_WALK_DEPTH = 1_000;

export function redactVendorText(text: string): string {
  const redacted = redactText(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return redacted;
  }
  if (parsed === null || typeof parsed !== 'object') return redacted;
  // A walk over JSON nested this deep would overflow the stack: the text redaction is what is kept.
  if (jsonDepthExceeds(text, MAX_WALK_DEPTH)) return redacted;
  try {
    const reparsed: unknown = JSON.parse(redacted);
    const deep = JSON.stringify(redactDeep(reparsed));
    if (deep === JSON.stringify(reparsed)) return redacted;
  } catch {
    // Text redaction broke the JSON: the deep form below is what is kept.
  }
  return JSON.stringify(redactDeep(parsed));
}
