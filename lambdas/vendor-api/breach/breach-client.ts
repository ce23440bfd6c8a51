/**
 * Client of the vendor's breach-report API (seed 002): generate a report (`POST /recon`), list
 * reports and download one (a ZIP, behind redirects to a pre-signed storage URL).
 * `X-API-Key: <key>` on every call, and only ever to the configured origin.
 */
import { InvalidInputError, VendorResponseError } from '#lambdas/platform/errors';
import { refuseKeyInReportName, validateEmail, validateReportName } from '#lambdas/platform/input/validation';
import { fingerprintOf, holdsSecret } from '#lambdas/platform/redaction/redact';
import { VendorHttp } from '#lambdas/vendor-api/transport/http';
import {
  describe,
  findArray,
  firstString,
  isRecord,
  rawOf,
  requireObject,
  type UnreadableEntry,
} from '#lambdas/vendor-api/transport/json';
import type { VendorDownload, VendorHttpSettings } from '#lambdas/vendor-api/transport/types';
import type { ReconRequest, ReconResult } from './types.ts';

export type BreachClientSettings = VendorHttpSettings;

const MAX_NAME_LENGTH = 200;
const MAX_EMAILS = 100;
const REPORT_NAME_FIELDS = ['name', 'report_name', 'output'] as const;

export interface BreachReportEntry {
  readonly name: string;
  readonly raw: unknown;
}

export interface BreachReportList {
  readonly reports: BreachReportEntry[];
  /** The body as received (parsed when it is JSON). */
  readonly raw: unknown;
  /** Entries (or the whole body, `index: null`) that name no report. */
  readonly unreadable: UnreadableEntry[];
}

export class BreachClient {
  private readonly http: VendorHttp;

  constructor(settings: BreachClientSettings) {
    this.http = new VendorHttp('breach', settings, 'x-api-key');
  }

  /**
   * Generates a report. Not idempotent (each call makes a report): retried only after a 429 or
   * when the connection was never made.
   */
  async recon(request: ReconRequest): Promise<ReconResult> {
    const operation = 'breach.recon';
    const body = { name: validateName(request.name), emails: validateEmails(request.emails) };
    const res = await this.http.requestText({
      operation,
      method: 'POST',
      path: '/recon',
      body: { contentType: 'application/json', data: JSON.stringify(body) },
      retry: 'non-idempotent',
    });
    const json = requireObject(operation, res.text);
    const status = json.status;
    if (typeof status !== 'string' || status.trim() === '') {
      throw new VendorResponseError(operation, 'no status in the answer');
    }
    const output = json.output;
    if (output !== undefined && output !== null && typeof output !== 'string') {
      throw new VendorResponseError(operation, 'output is not a string');
    }
    return {
      status,
      output: typeof output === 'string' && output !== '' ? output : undefined,
      totalBreaches: toCount(json.total_breaches),
      raw: json,
    };
  }

  /**
   * Reports the vendor lists: strings, or objects named by name/report_name/output, in an array at
   * the top level or under reports/breaches/items/data. The shape is "not shown" in the seed, so
   * anything else is kept as `unreadable` (position and why), never dropped silently.
   */
  async listReports(): Promise<BreachReportList> {
    const res = await this.http.requestText({
      operation: 'breach.listReports',
      method: 'GET',
      path: '/view_breaches',
      retry: 'idempotent',
    });
    const raw = rawOf(res.text, 'breach.listReports');
    const items = findArray(raw, ['reports', 'breaches', 'items', 'data']);
    if (items === undefined) {
      return {
        reports: [],
        raw,
        unreadable: [{ index: null, reason: `no list of reports in ${describe(raw)}` }],
      };
    }
    const reports: BreachReportEntry[] = [];
    const unreadable: UnreadableEntry[] = [];
    items.forEach((item, index) => {
      const name =
        typeof item === 'string'
          ? item.trim()
          : isRecord(item)
            ? firstString(item, REPORT_NAME_FIELDS)
            : undefined;
      if (name === undefined || name === '') {
        unreadable.push({
          index,
          reason: `${describe(item)} without a report name (${REPORT_NAME_FIELDS.join('/')})`,
        });
      } else if (holdsSecret(name)) {
        // Listed, but never archived under, or printed as, a name that holds a key.
        unreadable.push({ index, reason: `report name ${fingerprintOf(name)} holds a key; refused` });
      } else {
        reports.push({ name, raw: item });
      }
    });
    return { reports, raw, unreadable };
  }

  /**
   * Streams a report ZIP, following the vendor's redirects; credentials never leave the vendor
   * origin. `maxBytes` cuts the (decoded) body past that many bytes (VendorBodyTooLargeError).
   */
  async download(reportName: string, options: { readonly maxBytes?: number } = {}): Promise<VendorDownload> {
    const name = refuseKeyInReportName(validateReportName(reportName, 'reportName'), 'breach.download');
    return this.http.download({
      operation: 'breach.download',
      method: 'GET',
      path: `/download/${encodeURIComponent(name)}`,
      retry: 'idempotent',
      accept: 'application/zip, */*;q=0.8',
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

function validateName(name: unknown): string {
  if (typeof name !== 'string') throw new InvalidInputError('name', 'must be a string');
  const trimmed = name.trim();
  if (trimmed === '') throw new InvalidInputError('name', 'is empty');
  if ([...trimmed].length > MAX_NAME_LENGTH) {
    throw new InvalidInputError('name', `is longer than ${MAX_NAME_LENGTH} characters`);
  }
  if ([...trimmed].some(isControlCharacter)) {
    throw new InvalidInputError('name', 'contains a control character');
  }
  return trimmed;
}

/** C0 controls, DEL and C1 controls: they would corrupt the vendor's report and our log lines. */
function isControlCharacter(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

function validateEmails(emails: unknown): string[] {
  if (!Array.isArray(emails)) throw new InvalidInputError('emails', 'must be an array of email addresses');
  if (emails.length === 0) throw new InvalidInputError('emails', 'must list at least one address');
  if (emails.length > MAX_EMAILS) {
    throw new InvalidInputError(
      'emails',
      `lists ${emails.length} addresses; at most ${MAX_EMAILS} are accepted`,
    );
  }
  return emails.map((email, index) => validateEmail(email as string, `emails[${index}]`));
}

function toCount(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return Number(value.trim());
  return undefined;
}
