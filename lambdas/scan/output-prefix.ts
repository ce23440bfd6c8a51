/**
 * Where one scan's outputs live in the results bucket: the scan workflow's own naming (the
 * platform's naming.ts holds only the names every workflow shares).
 */
import { InvalidInputError } from '#lambdas/platform/errors';
import { ALREADY_ACCEPTED, normalizeDomain, validateUuid } from '#lambdas/platform/input/validation';

/** `scans/<domain>/<yyyy>/<mm>/<dd>/<scan_uuid>/`, with the date in UTC. */
export function scanOutputPrefix(domain: string, startedAt: Date, scanUuid: string): string {
  // Idempotent for a normalised domain, and it keeps '/' or '..' out of the key if a caller slips.
  const host = normalizeDomain(domain, 'domain', ALREADY_ACCEPTED);
  const uuid = validateUuid(scanUuid, 'scan_uuid');
  if (!(startedAt instanceof Date) || Number.isNaN(startedAt.getTime())) {
    throw new InvalidInputError('startedAt', 'is not a valid date');
  }
  const yyyy = String(startedAt.getUTCFullYear()).padStart(4, '0');
  const mm = String(startedAt.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(startedAt.getUTCDate()).padStart(2, '0');
  return `scans/${host}/${yyyy}/${mm}/${dd}/${uuid}/`;
}
