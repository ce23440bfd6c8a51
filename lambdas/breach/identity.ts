/**
 * Names for the breach workflow, none of which reveals an email: the person's keyed hash, the slug
 * of their name, run prefixes, execution names and the folder of a report's archive.
 *
 * A keyed hash (HMAC-SHA256), not a plain one: the set of plausible addresses of an organisation is
 * small enough to hash exhaustively, so an unkeyed digest in a key or a log line would give the
 * address away. The identity key lives in Secrets Manager (or, locally, in the run's state folder).
 */
import { createHash, createHmac } from 'node:crypto';
import { ConfigurationError } from '#lambdas/platform/errors';
import { MAX_EXECUTION_NAME_LENGTH } from '#lambdas/platform/naming';
import { redactText } from '#lambdas/platform/redact';
import type { BreachReportInput, BreachRequest, PersonRef } from './contracts.ts';

/** Where every breach object lives in the results bucket. */
export const BREACH_PREFIX = 'breach/';
const SLUG_MAX = 40;
/** An identity key shorter than this is a configuration mistake, not a key. */
export const MIN_IDENTITY_KEY_BYTES = 32;

/** The keyed hash and slug of a person: `id` covers the name and every address, in any order or case. */
export function personRef(identityKey: string, request: BreachRequest): PersonRef {
  if (Buffer.byteLength(identityKey) < MIN_IDENTITY_KEY_BYTES) {
    throw new ConfigurationError(
      'breach identity key',
      `must be at least ${MIN_IDENTITY_KEY_BYTES} bytes long`,
    );
  }
  const canonical = [
    request.name.normalize('NFC').toLowerCase(),
    ...request.emails.map((email) => email.toLowerCase()).sort(),
  ].join('\n');
  return {
    id: createHmac('sha256', identityKey).update(canonical).digest('hex'),
    slug: slugOf(request.name),
  };
}

/** ASCII letters and digits of `text`, lower case, dashes between words; `person` when none is left. */
export function slugOf(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return slug === '' ? 'person' : slug;
}

/** `breach/people/<slug>-<16 hex>/<requestId>/`: recon.json, manifest.json or failure.json of one run. */
export function breachRunPrefix(person: PersonRef, requestId: string): string {
  return `${BREACH_PREFIX}people/${person.slug}-${person.id.slice(0, 16)}/${requestId}/`;
}

/**
 * `breach-<48 hex>`: the same person and request always give the same name, so Step Functions
 * refuses a duplicate start and a recon is never repeated. Neither the name nor a slug is in it.
 */
export function breachExecutionName(person: PersonRef, requestId: string): string {
  const name = `breach-${sha256Hex(`${person.id}\n${requestId}`).slice(0, 48)}`;
  return name.slice(0, MAX_EXECUTION_NAME_LENGTH);
}

/**
 * `breach/reports/<slug>-<16 hex>/`: where a report's ZIP and its manifest live, found from the
 * report name alone (reconciliation knows nothing else). The vendor's name may contain the
 * person's name, so only its slug and hash appear, and may contain an address, so the slug is of
 * the redacted name (`report-for-redacted-…`); the hash of the exact name keeps folders apart.
 */
export function reportFolder(reportName: string): string {
  return `${BREACH_PREFIX}reports/${slugOf(redactText(reportName))}-${sha256Hex(reportName).slice(0, 16)}/`;
}

/**
 * Where Recon keeps the vendor's exact report name when redaction changed it (the name holds an
 * address): the state, recon.json and the manifests carry the redacted name, and ArchiveReport
 * needs the exact one to download. Personal data like the request object, so it lives next to it
 * (`<request>.report-name.json`), or under `breach/requests/` when the request is elsewhere.
 */
export function reportNameObjectKey(input: BreachReportInput, resultsBucket: string): string {
  const { bucket, key, range } = input.request;
  if (bucket === resultsBucket && key.startsWith(BREACH_PREFIX) && /\/requests\/[^/]+\.jsonl?$/.test(key)) {
    // A shard holds many people: each one's report name gets a key of its own beside it.
    if (range) return `${key.slice(0, key.lastIndexOf('/') + 1)}${input.requestId}.report-name.json`;
    return key.replace(/\.json$/, '.report-name.json');
  }
  return `${BREACH_PREFIX}requests/${input.person.id.slice(0, 16)}-${input.requestId}.report-name.json`;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
