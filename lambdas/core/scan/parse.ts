/**
 * Checks the state payloads that reach the scan handlers. The state machine builds them from our own
 * outputs, but an execution can also be started by hand with any JSON, and the values end up in S3
 * keys and vendor URLs: each field is checked, and errors name it.
 *
 * Parsers keep fields they do not know (`...event`), so the state machine may carry extra data
 * through a task whose result replaces the state.
 */
import { InvalidInputError } from '#core/errors';
import type {
  PollState,
  ScanDomainInput,
  ScanInProgress,
  ScanOutputName,
  StatusSnapshot,
  StoredObject,
} from '#core/scan/contracts';
import { normalizeDomain, validateScanUuid } from '#core/validation';
import type { ScanState } from '#core/vendor/types';

export const SCAN_OUTPUT_NAMES: readonly ScanOutputName[] = ['report', 'logs', 'debug'];
const SCAN_STATES: readonly ScanState[] = ['pending', 'running', 'succeeded', 'failed', 'unknown'];
/** Generous: list run ids are 20 hex characters, ad-hoc ones are words. */
const MAX_RUN_ID_LENGTH = 128;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

type Fields = Record<string, unknown>;

export function requireObject(value: unknown, field: string): Fields {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(field, 'must be a JSON object');
  }
  return value as Fields;
}

export function parseRunId(value: unknown, field = 'runId'): string {
  if (value === undefined || value === null) return 'adhoc';
  if (typeof value !== 'string') throw new InvalidInputError(field, 'must be a string');
  const runId = value.trim();
  if (runId === '') throw new InvalidInputError(field, 'is empty');
  if (runId.length > MAX_RUN_ID_LENGTH) {
    throw new InvalidInputError(field, `is longer than ${MAX_RUN_ID_LENGTH} characters`);
  }
  if (CONTROL_CHARS.test(runId)) throw new InvalidInputError(field, 'contains a control character');
  return runId;
}

/** StartScan's input. The domain is only checked for type here; startScan normalises it. */
export function parseScanDomainInput(event: unknown): ScanDomainInput & Fields {
  const fields = requireObject(event, 'input');
  if (typeof fields.domain !== 'string') {
    throw new InvalidInputError('domain', fields.domain === undefined ? 'is missing' : 'must be a string');
  }
  return { ...fields, domain: fields.domain, runId: parseRunId(fields.runId) };
}

/** The state of the poll loop: StartScan's output, PollScanStatus's input and output. */
export function parseScanInProgress(event: unknown): ScanInProgress & Fields {
  const fields = requireObject(event, 'input');
  if (typeof fields.domain !== 'string') throw new InvalidInputError('domain', 'must be a string');
  const domain = normalizeDomain(fields.domain, 'domain');
  if (typeof fields.scanUuid !== 'string') throw new InvalidInputError('scanUuid', 'must be a string');
  const scanUuid = validateScanUuid(fields.scanUuid, 'scanUuid');
  const outputPrefix = parseOutputPrefix(fields.outputPrefix, domain, scanUuid);
  const poll = parsePollState(fields.poll);
  const status = fields.status === undefined ? undefined : parseStatusSnapshot(fields.status);
  return {
    ...fields,
    domain,
    runId: parseRunId(fields.runId),
    scanUuid,
    outputPrefix,
    poll,
    ...(status === undefined ? {} : { status }),
  };
}

/**
 * `scans/<domain>/<yyyy>/<mm>/<dd>/<scanUuid>/` for exactly this domain and scan: a hand-made input
 * cannot make a step write outside its own scan's folder.
 */
export function parseOutputPrefix(value: unknown, domain: string, scanUuid: string): string {
  if (typeof value !== 'string') throw new InvalidInputError('outputPrefix', 'must be a string');
  const match = /^scans\/([^/]+)\/(\d{4})\/(\d{2})\/(\d{2})\/([^/]+)\/$/.exec(value);
  if (!match || match[1] !== domain || match[5] !== scanUuid) {
    throw new InvalidInputError(
      'outputPrefix',
      `must be scans/${domain}/<yyyy>/<mm>/<dd>/${scanUuid}/ for this domain and scan`,
    );
  }
  return value;
}

export function parsePollState(value: unknown, field = 'poll'): PollState {
  const fields = requireObject(value, field);
  const attempt = wholeNumber(fields.attempt, `${field}.attempt`, 0);
  const nextWaitSeconds = wholeNumber(fields.nextWaitSeconds, `${field}.nextWaitSeconds`, 1);
  const waitedSeconds = wholeNumber(fields.waitedSeconds, `${field}.waitedSeconds`, 0);
  if (typeof fields.startedAt !== 'string' || Number.isNaN(Date.parse(fields.startedAt))) {
    throw new InvalidInputError(`${field}.startedAt`, 'must be an ISO 8601 date-time');
  }
  if (typeof fields.deadlineExceeded !== 'boolean') {
    throw new InvalidInputError(`${field}.deadlineExceeded`, 'must be true or false');
  }
  return {
    attempt,
    nextWaitSeconds,
    waitedSeconds,
    startedAt: fields.startedAt,
    deadlineExceeded: fields.deadlineExceeded,
  };
}

export function parseStatusSnapshot(value: unknown, field = 'status'): StatusSnapshot {
  const fields = requireObject(value, field);
  if (!SCAN_STATES.includes(fields.state as ScanState)) {
    throw new InvalidInputError(`${field}.state`, `must be one of ${SCAN_STATES.join(', ')}`);
  }
  const vendorStatus = optional(fields.vendorStatus, `${field}.vendorStatus`, 'string');
  const progress = optional(fields.progress, `${field}.progress`, 'number');
  if (typeof fields.raw !== 'string') throw new InvalidInputError(`${field}.raw`, 'must be a string');
  return {
    state: fields.state as ScanState,
    vendorStatus,
    progress,
    raw: fields.raw,
    rawTruncated: fields.rawTruncated === true,
  };
}

export function parseOutputName(value: unknown, field = 'output'): ScanOutputName {
  if (!SCAN_OUTPUT_NAMES.includes(value as ScanOutputName)) {
    throw new InvalidInputError(field, `must be one of ${SCAN_OUTPUT_NAMES.join(', ')}`);
  }
  return value as ScanOutputName;
}

/** The Parallel's array of StoredObject; completeness is the manifest step's business. */
export function parseStoredObjects(value: unknown, field = 'stored'): StoredObject[] {
  if (!Array.isArray(value)) throw new InvalidInputError(field, 'must be an array of stored objects');
  return value.map((item, index) => {
    const at = `${field}[${index}]`;
    const fields = requireObject(item, at);
    if (typeof fields.bucket !== 'string' || fields.bucket === '') {
      throw new InvalidInputError(`${at}.bucket`, 'must be a non-empty string');
    }
    if (typeof fields.key !== 'string' || fields.key === '') {
      throw new InvalidInputError(`${at}.key`, 'must be a non-empty string');
    }
    if (typeof fields.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(fields.sha256)) {
      throw new InvalidInputError(`${at}.sha256`, 'must be 64 lower-case hexadecimal digits');
    }
    return {
      name: parseOutputName(fields.name, `${at}.name`),
      bucket: fields.bucket,
      key: fields.key,
      size: wholeNumber(fields.size, `${at}.size`, 0),
      sha256: fields.sha256,
      contentType: optional(fields.contentType, `${at}.contentType`, 'string'),
      versionId: optional(fields.versionId, `${at}.versionId`, 'string'),
    };
  });
}

function wholeNumber(value: unknown, field: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidInputError(field, `must be a whole number >= ${min}`);
  }
  return value;
}

function optional<K extends 'string' | 'number'>(
  value: unknown,
  field: string,
  type: K,
): (K extends 'string' ? string : number) | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw new InvalidInputError(field, `must be a ${type} when present`);
  return value as K extends 'string' ? string : number;
}
