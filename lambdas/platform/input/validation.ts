/**
 * Validators for everything a user or a file hands the pipeline: domains, emails, report names and
 * scan UUIDs. Each returns the normalised value or throws `InvalidInputError(inputName, reason)`.
 *
 * Reasons are written as predicates ("is an IP address", "has an empty label") so the same text reads
 * well after "Invalid domain: " and after "domain part " inside an email error. Email reasons never
 * quote any part of the address: an address is personal data and errors end up in logs and S3.
 */
import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { InvalidInputError, ReportNameRefusedError } from '#lambdas/platform/errors';
import { type DomainOptions, specialUse } from '#lambdas/platform/input/special-use';
import { fingerprintOf, holdsSecret } from '#lambdas/platform/redaction/redact';

export {
  ALLOW_SPECIAL_USE_VARIABLE,
  ALLOWABLE_SPECIAL_USE,
  ALREADY_ACCEPTED,
  checkAllowedSpecialUse,
  type DomainOptions,
} from '#lambdas/platform/input/special-use';

/** RFC 1035 / 1123 limits. */
const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
/** RFC 5321 limits (4.5.3.1.1 local part; 254 is the practical total from the forward/reverse path limit). */
const MAX_LOCAL_PART_LENGTH = 64;
const MAX_EMAIL_LENGTH = 254;
/** Longest accepted raw domain input; URLs may carry a path, but nothing sane is longer than this. */
const MAX_DOMAIN_INPUT_LENGTH = 2048;
const MAX_REPORT_NAME_LENGTH = 255;

// C0 controls, DEL and C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
// Any Unicode whitespace (space, NBSP, ideographic space, ...). Tab/newline are caught as controls first.
const WHITESPACE = /\s/;
const ASCII_LABEL = /^[a-z0-9-]+$/;
const NUMERIC_LABEL = /^(?:0x[0-9a-f]*|\d+)$/i;
const DIGITS = /^\d+$/;
const URL_PREFIX = /^([a-z][a-z0-9+.-]*):\/\//i;
// A "scheme:" that is not followed by "//" (mailto:, http:example.com); digits after ':' are a port instead.
const SCHEME_WITHOUT_SLASHES = /^[a-z][a-z0-9+.-]*:(?!\d|$)/i;
// Unicode full stops that IDNA maps to '.', so labels are split the way a browser splits them.
const IDN_DOTS = /[\u3002\uff0e\uff61]/g;
const NON_ASCII = /[\u0080-\uffff]/;
// RFC 5322 atext, the characters of a dot-atom local part.
const LOCAL_PART_CHARS = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const LOCAL_PART_BAD_CHAR = /[^A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** How a host check talks about the value: quote labels (domains) or refer to them by position (emails). */
interface HostContext {
  readonly quote: boolean;
}

/** A rejection found by the internal checks; the public functions wrap it into an `InvalidInputError`. */
class Rejection {
  constructor(readonly reason: string) {}
}

/**
 * Trims `input`, accepts a bare domain or an http(s) URL (its host is used), lower-cases it, strips one
 * trailing dot, converts IDN to punycode and checks RFC 1123 host syntax.
 *
 * @returns the ASCII (punycode) domain, e.g. `xn--bcher-kva.de` for `https://Bücher.de/x`
 * @throws InvalidInputError naming `inputName` with a specific reason
 */
export function normalizeDomain(input: string, inputName = 'domain', options: DomainOptions = {}): string {
  const result = checkDomainName(input, options);
  if (typeof result !== 'string') throw new InvalidInputError(inputName, result.reason);
  return result;
}

/**
 * {@link normalizeDomain} for a caller that checks many values and keeps each one's reason (a
 * domain list's lines): the domain, or why it is not one, without an error and its stack trace
 * per bad value (a list of junk spent a fifth of its parse building them).
 */
export function checkDomainName(
  input: string,
  options: DomainOptions = {},
): string | { readonly reason: string } {
  const result = checkDomain(input, { quote: true });
  if (result instanceof Rejection) return result;
  const special = specialUse(result, options.allowSpecialUse ?? []);
  return special ? new Rejection(special) : result;
}

/**
 * Trims `input` and checks a practical RFC 5321 address: one '@', a dot-atom local part of 1-64
 * characters, a valid domain (normalised: lower-case, punycode) and at most 254 characters in total.
 * The local part keeps its case: RFC 5321 lets the receiving host treat it case-sensitively.
 *
 * @returns `local@normalised-domain`
 * @throws InvalidInputError whose reason never contains the address or any part of it
 */
export function validateEmail(input: string, inputName = 'email'): string {
  if (typeof input !== 'string') throw new InvalidInputError(inputName, 'must be a string');
  const value = input.trim();
  if (value === '') throw new InvalidInputError(inputName, 'is empty');
  // Cheap guard before any work; the exact 254 limit is checked on the normalised form below.
  if (value.length > MAX_EMAIL_LENGTH * 4) {
    throw new InvalidInputError(inputName, `is longer than ${MAX_EMAIL_LENGTH} characters`);
  }
  if (CONTROL_CHARS.test(value)) throw new InvalidInputError(inputName, 'contains a control character');
  if (WHITESPACE.test(value)) throw new InvalidInputError(inputName, 'contains a space');

  const at = value.indexOf('@');
  if (at === -1) throw new InvalidInputError(inputName, "has no '@'");
  if (value.indexOf('@', at + 1) !== -1) throw new InvalidInputError(inputName, "has more than one '@'");

  const local = value.slice(0, at);
  const localProblem = checkLocalPart(local);
  if (localProblem) throw new InvalidInputError(inputName, `local part ${localProblem}`);

  const domainPart = value.slice(at + 1);
  if (domainPart === '') throw new InvalidInputError(inputName, 'domain part is empty');
  if (domainPart.startsWith('[')) {
    throw new InvalidInputError(inputName, 'domain part is an address literal; a domain name is required');
  }
  const domain = checkHost(domainPart, { quote: false });
  if (domain instanceof Rejection) throw new InvalidInputError(inputName, `domain part ${domain.reason}`);

  const address = `${local}@${domain}`;
  if (address.length > MAX_EMAIL_LENGTH) {
    throw new InvalidInputError(inputName, `is longer than ${MAX_EMAIL_LENGTH} characters`);
  }
  return address;
}

/**
 * Checks a breach report name (the vendor's `output` value, used as a path segment of
 * `GET /download/{report_name}`). Unicode and spaces are fine because the caller percent-encodes the
 * segment; anything that could escape the segment or corrupt a log line is not.
 *
 * @returns the name unchanged: it is the vendor's identifier, so trimming it could name another report
 */
export function validateReportName(input: string, inputName = 'report_name'): string {
  if (typeof input !== 'string') throw new InvalidInputError(inputName, 'must be a string');
  if (input.trim() === '') {
    throw new InvalidInputError(inputName, input === '' ? 'is empty' : 'is only whitespace');
  }
  if (CONTROL_CHARS.test(input)) throw new InvalidInputError(inputName, 'contains a control character');
  if (input.includes('/')) throw new InvalidInputError(inputName, "contains '/'");
  if (input.includes('\\')) throw new InvalidInputError(inputName, "contains '\\'");
  if (input === '.' || input === '..') throw new InvalidInputError(inputName, "must not be '.' or '..'");
  // encodeURIComponent throws on these, and they are not text anyone typed.
  if (LONE_SURROGATE.test(input)) throw new InvalidInputError(inputName, 'contains an unpaired surrogate');
  // Counted in code points, the way a person counts characters.
  let length = 0;
  for (const _ of input) {
    length += 1;
    if (length > MAX_REPORT_NAME_LENGTH) {
      throw new InvalidInputError(inputName, `is longer than ${MAX_REPORT_NAME_LENGTH} characters`);
    }
  }
  return input;
}

/**
 * `name` when it holds no key; a ReportNameRefusedError naming it by fingerprint otherwise. A name
 * that holds a key (a key value in use or a credential's shape, `holdsSecret`) is never downloaded,
 * slugged into an S3 key or printed: every use of a vendor's report name passes here first.
 */
export function refuseKeyInReportName(name: string, operation: string): string {
  if (holdsSecret(name)) throw new ReportNameRefusedError(operation, fingerprintOf(name));
  return name;
}

/**
 * Checks a UUID the vendor issued (a scan's, the organisation's): canonical 8-4-4-4-12 hexadecimal
 * form, any version or variant (the vendor does not say which it issues). Surrounding whitespace is
 * tolerated.
 *
 * @returns the UUID in lower case
 */
export function validateUuid(input: string, inputName: string): string {
  if (typeof input !== 'string') throw new InvalidInputError(inputName, 'must be a string');
  const value = input.trim();
  if (value === '') throw new InvalidInputError(inputName, 'is empty');
  if (!UUID.test(value)) {
    throw new InvalidInputError(inputName, 'is not a UUID (expected 8-4-4-4-12 hexadecimal digits)');
  }
  return value.toLowerCase();
}

// ---------------------------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------------------------

function checkDomain(input: string, ctx: HostContext): string | Rejection {
  if (typeof input !== 'string') return new Rejection('must be a string');
  const value = input.trim();
  if (value === '') return new Rejection('is empty');
  if (value.length > MAX_DOMAIN_INPUT_LENGTH) {
    return new Rejection(`is longer than ${MAX_DOMAIN_INPUT_LENGTH} characters`);
  }
  if (CONTROL_CHARS.test(value)) return new Rejection('contains a control character');
  if (WHITESPACE.test(value)) return new Rejection('contains a space');

  const url = URL_PREFIX.exec(value);
  if (url) return checkUrl(url[1] ?? '', value.slice(url[0].length), ctx);
  return checkBareHost(value, ctx);
}

/** `scheme://authority/...`: only http(s), no user info; the port and everything after the host are dropped. */
function checkUrl(scheme: string, rest: string, ctx: HostContext): string | Rejection {
  const lower = scheme.toLowerCase();
  if (lower !== 'http' && lower !== 'https') {
    return new Rejection(`is a URL with unsupported scheme '${lower}' (only http and https are accepted)`);
  }
  // WHATWG URL treats '\' like '/' in http(s) URLs.
  const end = rest.search(/[/?#\\]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority === '') return new Rejection('is a URL without a host');
  // Never quoted: user info may hold a password.
  if (authority.includes('@')) return new Rejection('is a URL with user information, which is not accepted');
  if (authority.startsWith('[')) return new Rejection('is an IP address');

  let host = authority;
  const colon = authority.lastIndexOf(':');
  if (colon !== -1) {
    const port = authority.slice(colon + 1);
    if (port !== '' && (!DIGITS.test(port) || Number(port) > 65535)) {
      return new Rejection('is a URL with an invalid port');
    }
    host = authority.slice(0, colon);
  }
  if (host.includes('%')) {
    try {
      host = decodeURIComponent(host);
    } catch {
      return new Rejection('has invalid percent-encoding in its host');
    }
    if (CONTROL_CHARS.test(host) || WHITESPACE.test(host)) {
      return new Rejection('has a control character or space in its host');
    }
  }
  if (host === '') return new Rejection('is a URL without a host');
  return checkHost(host, ctx);
}

/** A value without a scheme must be just a host: anything URL-like around it is a mistake to report. */
function checkBareHost(value: string, ctx: HostContext): string | Rejection {
  if (value.includes('@')) return new Rejection("contains '@' (user information or an email address)");
  if (value.startsWith('[')) return new Rejection('is an IP address');
  if (value.includes(':')) {
    if (isIP(value) === 6) return new Rejection('is an IP address');
    if (SCHEME_WITHOUT_SLASHES.test(value)) return new Rejection('is not a domain or an http(s):// URL');
    return new Rejection('contains a port (a port is only accepted in a URL with a scheme)');
  }
  let host = value;
  const slash = host.indexOf('/');
  if (slash !== -1) {
    // "example.com/" is unambiguous; "example.com/path" is probably a URL missing its scheme.
    if (slash !== host.length - 1) return new Rejection('contains a path (add https:// to pass a URL)');
    host = host.slice(0, -1);
  }
  if (host.includes('?')) return new Rejection('contains a query string (add https:// to pass a URL)');
  if (host.includes('#')) return new Rejection('contains a fragment (add https:// to pass a URL)');
  if (host === '') return new Rejection('is empty');
  return checkHost(host, ctx);
}

/** RFC 1123 host name check on an unvalidated host; returns the lower-case punycode form. */
function checkHost(rawHost: string, ctx: HostContext): string | Rejection {
  // Checked on the raw form so the reason is specific rather than "invalid character".
  if (rawHost.includes('*')) return new Rejection('contains a wildcard');
  if (rawHost.includes('_')) return new Rejection('contains an underscore');

  let host = rawHost.toLowerCase();
  if (NON_ASCII.test(host)) {
    const converted = toAscii(host, ctx);
    if (converted instanceof Rejection) return converted;
    host = converted;
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return new Rejection('is empty');

  const labels = host.split('.');
  // WHATWG URL parsers read these as IPv4 (1.2.3.4, 127.1, 0x7f.1, 2130706433), so refuse them all.
  if (labels.length <= 4 && labels.every((label) => NUMERIC_LABEL.test(label))) {
    return new Rejection('is an IP address');
  }
  if (host.length > MAX_DOMAIN_LENGTH) return new Rejection(`is longer than ${MAX_DOMAIN_LENGTH} characters`);

  for (let index = 0; index < labels.length; index += 1) {
    const problem = checkLabel(labels[index] ?? '', index, ctx);
    if (problem) return problem;
  }
  if (labels.length < 2) {
    return new Rejection(
      ctx.quote
        ? `is a single-label name ('${host}'); a fully qualified domain such as example.com is required`
        : 'is a single-label name; a fully qualified domain is required',
    );
  }
  const tld = labels[labels.length - 1] ?? '';
  if (DIGITS.test(tld)) {
    return new Rejection(`has an all-numeric top-level label${ctx.quote ? ` '${tld}'` : ''}`);
  }
  if (!/^[a-z]/.test(tld)) {
    return new Rejection(
      `has a top-level label${ctx.quote ? ` '${tld}'` : ''} that does not start with a letter`,
    );
  }
  return host;
}

/** IDN -> punycode one label at a time, so a bad label gets a reason of its own. */
function toAscii(host: string, ctx: HostContext): string | Rejection {
  const labels = host.replace(IDN_DOTS, '.').split('.');
  const out: string[] = [];
  for (let index = 0; index < labels.length; index += 1) {
    const label = labels[index] ?? '';
    if (!NON_ASCII.test(label)) {
      out.push(label);
      continue;
    }
    const ascii = domainToASCII(label);
    // '' = not convertible; a '.' means IDNA mapped it to something the URL parser then read as IPv4.
    if (ascii === '' || ascii.includes('.')) {
      return new Rejection(`${describeLabel(label, index, ctx)} is not a valid internationalized label`);
    }
    out.push(ascii);
  }
  return out.join('.');
}

function checkLabel(label: string, index: number, ctx: HostContext): Rejection | undefined {
  if (label === '') return new Rejection(`${describeLabel(label, index, ctx)} is empty`);
  if (label.length > MAX_LABEL_LENGTH) {
    return new Rejection(`${describeLabel(label, index, ctx)} is longer than ${MAX_LABEL_LENGTH} characters`);
  }
  if (!ASCII_LABEL.test(label)) {
    const bad = label.match(/[^a-z0-9-]/)?.[0] ?? '?';
    return new Rejection(
      `${describeLabel(label, index, ctx)} contains ${JSON.stringify(bad)}, which is not allowed`,
    );
  }
  // IDNA allows hyphens at the ends of a Unicode label that then hides inside xn--; check the Unicode form too.
  // Errors name the label as the user wrote it (-bücher), not as punycode (xn---bcher-4ya).
  const visible = label.startsWith('xn--') ? domainToUnicode(label) : label;
  if (visible === '') return new Rejection(`${describeLabel(label, index, ctx)} is not valid punycode`);
  if (label.startsWith('xn--')) {
    // An A-label is only an encoding of a Unicode label: one that decodes to ASCII (xn--example-) or
    // does not re-encode to itself names something other than what it spells.
    if (!NON_ASCII.test(visible)) {
      return new Rejection(`${describeLabel(label, index, ctx)} is punycode for a plain ASCII label`);
    }
    if (domainToASCII(visible) !== label) {
      return new Rejection(`${describeLabel(label, index, ctx)} does not round-trip through punycode`);
    }
  }
  if (visible.startsWith('-')) {
    return new Rejection(`${describeLabel(visible, index, ctx)} starts with a hyphen`);
  }
  if (visible.endsWith('-')) {
    return new Rejection(`${describeLabel(visible, index, ctx)} ends with a hyphen`);
  }
  return undefined;
}

function describeLabel(label: string, index: number, ctx: HostContext): string {
  if (!ctx.quote) return `label ${index + 1}`;
  if (label === '') return `label ${index + 1}`;
  // Invisible format characters (bidi overrides, joiners) would garble a log line; show them as U+FFFD.
  const printable = label.replace(/[\p{Cc}\p{Cf}]/gu, '\ufffd');
  const shown = printable.length > 70 ? `${printable.slice(0, 70)}...` : printable;
  return `label '${shown}'`;
}

/** Returns a reason fragment (to follow "local part ") or undefined when the local part is acceptable. */
function checkLocalPart(local: string): string | undefined {
  if (local === '') return 'is empty';
  if (local.length > MAX_LOCAL_PART_LENGTH) return `is longer than ${MAX_LOCAL_PART_LENGTH} characters`;
  if (!LOCAL_PART_CHARS.test(local)) {
    const bad = local.match(LOCAL_PART_BAD_CHAR)?.[0] ?? '?';
    // One character is not personal data, and naming it saves the user a guess.
    if (NON_ASCII.test(bad)) return 'contains a non-ASCII character, which is not accepted';
    if (bad === '"') return "contains '\"' (quoted local parts are not accepted)";
    return `contains ${JSON.stringify(bad)}, which is not allowed`;
  }
  if (local.startsWith('.')) return 'starts with a dot';
  if (local.endsWith('.')) return 'ends with a dot';
  if (local.includes('..')) return 'contains consecutive dots';
  return undefined;
}
