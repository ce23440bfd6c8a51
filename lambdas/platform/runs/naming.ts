/**
 * Deterministic names: run ids, Step Functions execution names and S3 prefixes.
 *
 * Names come from the identity of what started a run, never from the clock, so a redelivered S3 event
 * or a retried schedule fire produces the same execution names, and Step Functions refuses to start a
 * second execution under an existing name: a re-run never starts a second scan.
 */
import { createHash } from 'node:crypto';
import { InvalidInputError } from '#lambdas/platform/errors';

/** Step Functions: 1-80 characters; we keep to the subset that is also safe in URLs, logs and S3 keys. */
export const MAX_EXECUTION_NAME_LENGTH = 80;
const RUN_ID_HEX = 20;
const CHILD_HASH_HEX = 40;
const SLUG_MAX = 30;
/** Keeps `lists/<path>/<runId>/summary.json` well inside S3's 1,024-byte key limit. */
const MAX_LIST_PATH_BYTES = 700;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * What started a run, as far as its names depend on it. Structural, so the domain-list source
 * (`DomainListSource`) and a watchlist's source both fit without the platform knowing either.
 */
export type RunSource =
  | {
      readonly type: 's3';
      readonly bucket: string;
      readonly key: string;
      readonly versionId?: string | undefined;
      readonly etag?: string | undefined;
    }
  | { readonly type: 'schedule'; readonly scheduleName: string; readonly scheduledTime: string }
  | { readonly type: 'adhoc'; readonly requestId: string };

/**
 * The run id of a list run: 20 hex characters of SHA-256 over the source's identity.
 *
 * - s3: bucket, key and version id; without a version id (unversioned bucket), the ETag, so uploading
 *   the same content again is the same run and new content is a new run.
 * - schedule: schedule name and scheduled time, so each fire is its own run.
 * - adhoc: the request id.
 */
export function runIdFor(source: RunSource): string {
  return sha256Hex(JSON.stringify(identityOf(source))).slice(0, RUN_ID_HEX);
}

/**
 * The per-domain execution name: `<domain slug>-<40 hex>`, at most 71 characters of `[A-Za-z0-9_-]`.
 * The slug only helps a human scanning the console; the hash of run id and domain carries the identity.
 */
export function childExecutionName(runId: string, domain: string): string {
  requireText(runId, 'runId');
  requireText(domain, 'domain');
  const hash = sha256Hex(`${runId}\n${domain}`).slice(0, CHILD_HASH_HEX);
  const slug = domain
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .slice(0, SLUG_MAX)
    .replace(/^-+|-+$/g, '');
  return slug === '' ? hash : `${slug}-${hash}`;
}

/** The execution name of the list run itself: `list-<runId>`. */
export function listExecutionName(source: RunSource): string {
  return `list-${runIdFor(source)}`;
}

/**
 * Where a list run writes items.json, rejects.json and summary.json:
 * `lists/<S3 key without extension>/<runId>/`, `lists/schedules/<schedule name>/<runId>/` or
 * `lists/adhoc/<runId>/`. Unicode is kept; empty, '.' and '..' segments and control characters are not.
 */
export function listResultsPrefix(source: RunSource, runId: string): string {
  requireText(runId, 'runId');
  if (/[^A-Za-z0-9_-]/.test(runId)) {
    throw new InvalidInputError('runId', 'may contain only letters, digits, "-" and "_"');
  }
  let path: string;
  switch (source.type) {
    case 's3':
      requireText(source.key, 'source.key');
      path = safeKeyPath(stripExtension(source.key)) || 'unnamed';
      break;
    case 'schedule':
      requireText(source.scheduleName, 'source.scheduleName');
      path = `schedules/${safeSegment(source.scheduleName) || 'unnamed'}`;
      break;
    case 'adhoc':
      path = 'adhoc';
      break;
    default:
      throw unknownSource(source);
  }
  return `lists/${limitBytes(path, MAX_LIST_PATH_BYTES)}/${runId}/`;
}

// ---------------------------------------------------------------------------------------------

/** A JSON array, so field boundaries cannot be confused ("a","bc" vs "ab","c"). */
function identityOf(source: RunSource): readonly string[] {
  if (source === null || typeof source !== 'object') {
    throw new InvalidInputError('source', 'is not an object');
  }
  switch (source.type) {
    case 's3': {
      requireText(source.bucket, 'source.bucket');
      requireText(source.key, 'source.key');
      if (source.versionId) return ['s3', source.bucket, source.key, 'version', source.versionId];
      // S3 APIs quote ETags ("abc"), S3 events do not (abc): the same object must give the same run.
      if (source.etag) return ['s3', source.bucket, source.key, 'etag', source.etag.replace(/^"|"$/g, '')];
      return ['s3', source.bucket, source.key];
    }
    case 'schedule':
      requireText(source.scheduleName, 'source.scheduleName');
      requireText(source.scheduledTime, 'source.scheduledTime');
      return ['schedule', source.scheduleName, source.scheduledTime];
    case 'adhoc':
      requireText(source.requestId, 'source.requestId');
      return ['adhoc', source.requestId];
    default:
      throw unknownSource(source);
  }
}

function unknownSource(source: never): InvalidInputError {
  const type = (source as { type?: unknown }).type;
  return new InvalidInputError(
    'source.type',
    `is ${JSON.stringify(type) ?? 'missing'}; expected "s3", "schedule" or "adhoc"`,
  );
}

function requireText(value: unknown, name: string): void {
  if (typeof value !== 'string') throw new InvalidInputError(name, 'must be a string');
  if (value.trim() === '') throw new InvalidInputError(name, 'is empty');
}

/** Drops the extension of the last path segment; a dotfile (".list") keeps its name. */
function stripExtension(key: string): string {
  const slash = key.lastIndexOf('/');
  const dot = key.lastIndexOf('.');
  return dot > slash + 1 ? key.slice(0, dot) : key;
}

/** No leading '/', no empty, '.' or '..' segments, no control characters. */
function safeKeyPath(path: string): string {
  return path
    .split('/')
    .map(safeSegment)
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..')
    .join('/');
}

function safeSegment(segment: string): string {
  return segment.replace(CONTROL_CHARS, '').replace(/[/\\]/g, '-').trim();
}

/** Cuts a path to at most `max` UTF-8 bytes on a code point boundary. */
function limitBytes(path: string, max: number): string {
  if (Buffer.byteLength(path, 'utf8') <= max) return path;
  let out = '';
  let bytes = 0;
  for (const char of path) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > max) break;
    out += char;
    bytes += size;
  }
  return out.replace(/\/+$/, '');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
