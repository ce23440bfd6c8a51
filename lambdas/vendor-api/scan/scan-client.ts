/**
 * Client of the vendor's scanning API (seed 000): start a scan, poll its status, fetch its report,
 * logs and debug output, list, delete and count scans. `Authorization: Bearer <key>` on every call.
 */
import { InvalidInputError, VendorResponseError } from '#lambdas/platform/errors';
import { ALREADY_ACCEPTED, normalizeDomain, validateUuid } from '#lambdas/platform/input/validation';
import { VendorHttp } from '#lambdas/vendor-api/transport/http';
import { findArray, firstString, isRecord, rawOf, requireObject } from '#lambdas/vendor-api/transport/json';
import type {
  VendorDownload,
  VendorHttpSettings,
  VendorOperation,
} from '#lambdas/vendor-api/transport/types';
import { classifyScanStatus, DEFAULT_STATUS_VOCABULARY } from './status.ts';
import type { ScanStatus, StartScanResult, StatusVocabulary } from './types.ts';

export interface ScanClientSettings extends VendorHttpSettings {
  /** Words that map vendor statuses to states. @default DEFAULT_STATUS_VOCABULARY */
  readonly statusVocabulary?: StatusVocabulary;
}

export interface StartScanOptions {
  /** The vendor's API description recommends POST (form field `domain`); GET `/scan?domain=` is its alternative. @default 'POST' */
  readonly via?: 'POST' | 'GET';
}

/** Where the start answer may carry the scan id; the seed says `uuid`, the others are defensive. */
const UUID_FIELDS = ['uuid', 'scan_uuid', 'id'] as const;

/**
 * The most of a scan listing that is read. The vendor's API description shows no paging, so `GET /scans` answers with
 * every scan the vendor keeps, and it grows with history: the documented maximum, 100,000 domains
 * with one scan each, is about 14 MiB with the simulator's entries (past the 8 MiB every other
 * answer gets). 64 MiB holds about five times that. Parsed, it takes several times its size in heap,
 * which the reconciliation function (1,024 MB) holds; past it the listing is refused by name, and
 * deleting scans at the vendor after their manifest (`scan.deleteAtVendorAfterManifest`) keeps it
 * small.
 */
export const SCAN_LISTING_MAX_BYTES = 64 * 1024 * 1024;

export class ScanClient {
  private readonly http: VendorHttp;
  private readonly vocabulary: StatusVocabulary;

  constructor(settings: ScanClientSettings) {
    this.http = new VendorHttp('scan', settings, 'bearer');
    this.vocabulary = settings.statusVocabulary ?? DEFAULT_STATUS_VOCABULARY;
  }

  /**
   * Starts a scan. Not idempotent: retried only after a 429 or when the connection was never made;
   * a 5xx, timeout or reset may have created the scan, so it surfaces instead of a duplicate.
   */
  async startScan(domain: string, options: StartScanOptions = {}): Promise<StartScanResult> {
    const operation = 'scan.startScan';
    const normalised = normalizeDomain(domain, 'domain', ALREADY_ACCEPTED);
    const via = options.via ?? 'POST';
    if (via !== 'POST' && via !== 'GET') throw new InvalidInputError('via', 'must be POST or GET');
    const res = await this.http.requestText(
      via === 'POST'
        ? {
            operation,
            method: 'POST',
            path: '/scan',
            body: {
              contentType: 'application/x-www-form-urlencoded',
              data: new URLSearchParams({ domain: normalised }).toString(),
            },
            retry: 'non-idempotent',
          }
        : { operation, method: 'GET', path: '/scan', query: { domain: normalised }, retry: 'non-idempotent' },
    );
    const body = requireObject(operation, res.text);
    const candidate = firstString(body, UUID_FIELDS) ?? nestedUuid(body);
    if (candidate === undefined) throw new VendorResponseError(operation, 'no uuid in the answer');
    try {
      return { uuid: validateUuid(candidate, 'uuid'), raw: body };
    } catch {
      throw new VendorResponseError(operation, 'the uuid in the answer is not a UUID');
    }
  }

  async getStatus(scanUuid: string): Promise<ScanStatus> {
    const uuid = validateUuid(scanUuid, 'scanUuid');
    const res = await this.http.requestText({
      operation: 'scan.getStatus',
      method: 'GET',
      path: `/status/${encodeURIComponent(uuid)}`,
      retry: 'idempotent',
    });
    return classifyScanStatus(res.text, res.contentType, this.vocabulary);
  }

  /**
   * One scan output (report, logs, debug…), as the caller's table of outputs describes it: its path
   * with `{uuid}` for the scan, and its operation name. `maxBytes`: the body is cut past this many
   * bytes after decoding (VendorBodyTooLargeError).
   */
  async getOutput(
    output: ScanOutputRoute,
    scanUuid: string,
    options: OutputOptions = {},
  ): Promise<VendorDownload> {
    const uuid = validateUuid(scanUuid, 'scanUuid');
    return this.http.download({
      operation: output.operation,
      method: 'GET',
      path: output.vendorPath.replace('{uuid}', encodeURIComponent(uuid)),
      retry: 'idempotent',
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      ...(options.maxDecodingRatio === undefined ? {} : { maxDecodingRatio: options.maxDecodingRatio }),
    });
  }

  /**
   * Lists every scan the vendor keeps, in one answer (its API description shows no paging: see
   * SCAN_LISTING_MAX_BYTES), parsed; the array is found at the top level or under scans/items/data.
   */
  async listScans(): Promise<{ scans: unknown[]; raw: unknown }> {
    const { text } = await this.listScansText();
    const raw = rawOf(text, 'scan.listScans', SCAN_LISTING_MAX_BYTES);
    return { scans: findArray(raw, ['scans', 'items', 'data']) ?? [], raw };
  }

  /**
   * The same listing as {@link listScans}, as the text it came in, unparsed: read one entry at a
   * time (readScanListingText), its memory is the text and what is kept of it.
   */
  async listScansText(): Promise<{ text: string }> {
    const res = await this.http.requestText({
      operation: 'scan.listScans',
      method: 'GET',
      path: '/scans',
      retry: 'idempotent',
      maxBytes: SCAN_LISTING_MAX_BYTES,
    });
    return { text: res.text };
  }

  /**
   * Deletes a scan. DELETE is idempotent by HTTP semantics, so it is retried; a retry after a lost
   * answer may then see a 404 (VendorHttpError) for a scan that is in fact gone.
   */
  async deleteScan(scanUuid: string): Promise<{ raw: unknown }> {
    const uuid = validateUuid(scanUuid, 'scanUuid');
    const res = await this.http.requestText({
      operation: 'scan.deleteScan',
      method: 'DELETE',
      path: `/scan/${encodeURIComponent(uuid)}`,
      retry: 'idempotent',
    });
    return { raw: rawOf(res.text, 'scan.deleteScan') };
  }

  async getStats(): Promise<{ raw: unknown }> {
    const res = await this.http.requestText({
      operation: 'scan.getStats',
      method: 'GET',
      path: '/stats',
      retry: 'idempotent',
    });
    return { raw: rawOf(res.text, 'scan.getStats') };
  }

  /** Releases the client's connections (tests, the local runner); Lambdas keep theirs. */
  close(): Promise<void> {
    return this.http.close();
  }
}

/** Where a scan output is fetched from: a row of the workflow's table of outputs fits. */
export interface ScanOutputRoute {
  /** Relative to the base URL; `{uuid}` is replaced by the URL-encoded scan uuid. */
  readonly vendorPath: `/${string}/{uuid}`;
  readonly operation: VendorOperation;
}

/** How much of a scan output is read. */
export interface OutputOptions {
  /** Cut past this many bytes, counted after decoding. @default no cap */
  readonly maxBytes?: number;
  /** Cut once decoding passes this many times the bytes received (past the first MiB). @default no bound */
  readonly maxDecodingRatio?: number;
}

function nestedUuid(body: Record<string, unknown>): string | undefined {
  for (const envelope of ['scan', 'data']) {
    const inner = body[envelope];
    if (isRecord(inner)) {
      const found = firstString(inner, UUID_FIELDS);
      if (found) return found;
    }
  }
  return undefined;
}
