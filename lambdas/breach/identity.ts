/**
 * Names inside the breach workflow, none of which reveals an email: run prefixes and the folder of
 * a report's archive. The names a starter needs too (the person's keyed hash and slug, the
 * execution name) are part of the workflow's contract (contracts.ts).
 *
 * A keyed hash (HMAC-SHA256), not a plain one: the set of plausible addresses of an organisation is
 * small enough to hash exhaustively, so an unkeyed digest in a key or a log line would give the
 * address away. The identity key lives in Secrets Manager (or, locally, in the run's state folder).
 */
import { createHmac } from 'node:crypto';
import { BREACH_PREFIX, type BreachReportInput, type PersonRef } from './contracts.ts';

/** `breach/people/<slug>-<16 hex>/<requestId>/`: recon.json, manifest.json or failure.json of one run. */
export function breachRunPrefix(person: PersonRef, requestId: string): string {
  return `${BREACH_PREFIX}people/${person.slug}-${person.id.slice(0, 16)}/${requestId}/`;
}

/**
 * `breach/reports/report-<32 hex>/`: where a report's ZIP and its manifest live, found from the
 * report name and the report naming key alone (reconciliation knows nothing else). The vendor's
 * name may hold a person's name, an address or an identifier, and an organisation's plausible
 * addresses are few enough to guess: an unkeyed hash, or any slug of the name, gave the address
 * away from the folder name alone. So nothing of the name appears, and the HMAC's key lives in
 * Secrets Manager (locally, in the run's state folder).
 */
export function reportFolder(reportName: string, namingKey: string): string {
  return `${BREACH_PREFIX}reports/report-${createHmac('sha256', namingKey).update(reportName).digest('hex').slice(0, 32)}/`;
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
