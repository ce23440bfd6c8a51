/**
 * The vendor's response headers are vendor text like its bodies: a `Content-Type` can carry a
 * parameter naming the caller (`served-for=<key>`, an address), an `ETag` any quoted string, a
 * `Content-Encoding` any token. What is kept of them reaches manifests, step outputs, S3's own
 * object headers and user metadata, so each is reduced here, at the transport, to a form that
 * can hold nothing but what it names, and what the redaction would change is dropped whole.
 */
import { needsRedaction } from '#lambdas/platform/redaction/redact';

/**
 * RFC 6838's restricted name: a letter or digit first, then up to 126 of these. A media type is
 * kept as `type/subtype`, with its `charset` when that is a charset name (a reader of a text
 * report needs it); every other parameter (whatever a vendor puts there) is dropped.
 */
const RESTRICTED_NAME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
/** A charset name as IANA's registry spells them (`utf-8`, `ISO-8859-1`, `windows-1252`). */
const CHARSET = /^charset\s*=\s*"?([A-Za-z0-9][A-Za-z0-9._:+-]{0,39})"?$/i;

/**
 * The vendor's `Content-Type` reduced to a lower-case `type/subtype` (and `; charset=…` when it
 * names one), or undefined when it is absent, not a media type, or its type holds something the
 * redaction removes (a key value in use, an address): then nothing of it is kept.
 */
export function safeMediaType(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const [essence = '', ...parameters] = value.split(';').map((part) => part.trim());
  const slash = essence.indexOf('/');
  if (slash < 0) return undefined;
  const type = essence.slice(0, slash);
  const subtype = essence.slice(slash + 1);
  if (!RESTRICTED_NAME.test(type) || !RESTRICTED_NAME.test(subtype)) return undefined;
  // Checked before lower-casing: a key value is matched as it was sent.
  if (needsRedaction(essence)) return undefined;
  const media = `${type}/${subtype}`.toLowerCase();
  const charset = parameters.map((parameter) => CHARSET.exec(parameter)?.[1]).find((name) => name);
  return charset === undefined || needsRedaction(charset)
    ? media
    : `${media}; charset=${charset.toLowerCase()}`;
}

/**
 * An entity tag as storage services write them: optionally weak, quoted, and of hex digits,
 * letters and the few marks a hash or a part count uses. Anything else (spaces, `@`, parameters)
 * is not an entity tag we need to keep.
 */
const SAFE_ETAG = /^(?:W\/)?"[A-Za-z0-9._:+/=-]{1,128}"$/;

/** The vendor's `ETag` when it has the safe form and holds nothing the redaction removes; else undefined. */
export function safeEtag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!SAFE_ETAG.test(trimmed) || needsRedaction(trimmed)) return undefined;
  return trimmed;
}

/**
 * The content codings of IANA's HTTP Content Coding Registry: the only ones a stored object may be
 * labelled with (S3 serves its `Content-Encoding` back to every reader as it was given).
 */
const REGISTERED_CODINGS = new Set([
  'aes128gcm',
  'br',
  'compress',
  'dcb',
  'dcz',
  'deflate',
  'exi',
  'gzip',
  'identity',
  'pack200-gzip',
  'x-compress',
  'x-gzip',
  'zstd',
]);

/**
 * A `Content-Encoding` as a canonical list of registered codings (`zstd`, `gzip, br`), undefined
 * for none; `unregistered` when any coding is not in the registry: the bytes could then not be
 * labelled truthfully, and the value itself is vendor text no store should repeat.
 */
export function registeredCodings(value: string | undefined): string | undefined | 'unregistered' {
  if (value === undefined) return undefined;
  const codings = value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '');
  if (codings.length === 0) return undefined;
  if (!codings.every((coding) => REGISTERED_CODINGS.has(coding))) return 'unregistered';
  return codings.join(', ');
}
