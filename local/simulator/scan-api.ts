/** The scanning API (seed 000): start, status, outputs, list, delete, stats. Bearer auth. */
import { pipeline, Readable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
import type { OutputKind } from './content.ts';
import { type Route, type RouteCall, route, type SimContext } from './context.ts';
import {
  acceptsGzip,
  HttpError,
  isUuid,
  jsonResponse,
  mediaType,
  readBodyOnce,
  type SimResponse,
} from './http.ts';
import { type ScanRecord, statusBody } from './scans.ts';

const DOMAIN =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$/;

function validDomain(value: string | null | undefined): string {
  const domain = (value ?? '').trim().toLowerCase();
  if (domain === '') throw new HttpError(400, 'bad_request', 'domain is required');
  if (!DOMAIN.test(domain)) throw new HttpError(400, 'bad_request', 'domain is not a valid domain name');
  return domain;
}

function startScan(sim: SimContext, domain: string): SimResponse {
  const scan = sim.scans.create(domain);
  return jsonResponse(200, { uuid: scan.uuid, domain: scan.domain, status: scan.status });
}

function findScan(call: RouteCall): ScanRecord {
  const id = call.params[0] ?? '';
  if (!isUuid(id)) throw new HttpError(400, 'bad_request', 'scan uuid is not a UUID');
  const scan = call.sim.scans.get(id);
  if (!scan) throw new HttpError(404, 'not_found', 'no scan with this uuid');
  return scan;
}

const OUTPUT_TYPES: Record<OutputKind, string> = {
  report: 'application/json',
  logs: 'text/plain; charset=utf-8',
  debug: 'application/x-ndjson',
};

function targetBytes(sim: SimContext, kind: OutputKind): number {
  const o = sim.options;
  return kind === 'report' ? o.reportBytes : kind === 'logs' ? o.logsBytes : o.debugBytes;
}

function output(kind: OutputKind) {
  return (call: RouteCall): SimResponse => {
    const scan = findScan(call);
    const ready = scan.status === 'completed' || (scan.status === 'failed' && kind !== 'report');
    if (!ready) {
      const why =
        scan.status === 'failed' ? 'the scan failed and has no report' : `the scan is ${scan.status}`;
      throw new HttpError(409, 'conflict', `${kind} not available: ${why}`);
    }
    const size = targetBytes(call.sim, kind);
    const { meta, body: plain } = call.sim.scans.output(scan, kind, size);
    const gzip = kind === 'logs' && acceptsGzip(call.req);
    // A gzip body is a different representation of the same resource, so it gets its own tag.
    const etag = gzip ? `${meta.etag.slice(0, -1)}-gzip"` : meta.etag;
    const headers: Record<string, string | number> = {
      'content-type': OUTPUT_TYPES[kind],
      etag,
      'last-modified': scan.updatedAt.toUTCString(),
      'cache-control': 'private, max-age=0',
      ...(kind === 'logs' ? { vary: 'Accept-Encoding' } : {}),
    };
    if (call.req.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
    if (gzip) {
      // Fastest level: the point is exercising content decoding, not saving loopback bytes.
      const gz = createGzip({ level: constants.Z_BEST_SPEED });
      const body = pipeline(Readable.from(plain, { objectMode: false }), gz, () => {});
      return { status: 200, headers: { ...headers, 'content-encoding': 'gzip' }, body };
    }
    return { status: 200, headers: { ...headers, 'content-length': meta.length }, body: plain };
  };
}

async function startForm(req: RouteCall['req']): Promise<URLSearchParams> {
  return new URLSearchParams((await readBodyOnce(req)).toString('utf8'));
}

/**
 * A request about one scan, named by its domain and how many scans of that domain came before it
 * (its uuid differs in every run): the subject faults are keyed on (FaultTarget.subject).
 */
function scanSubject(operation: string) {
  return (call: RouteCall): string | undefined => {
    const scan = call.sim.scans.get(call.params[0] ?? '');
    return scan === undefined ? undefined : `${operation} ${scan.domain}#${scan.ordinal}`;
  };
}

export const scanRoutes: readonly Route[] = [
  route(
    'scan',
    'POST',
    '/scan',
    'bearer',
    async ({ req, sim }) => {
      const type = mediaType(req);
      if (type !== 'application/x-www-form-urlencoded') {
        throw new HttpError(
          415,
          'unsupported_media_type',
          'send the domain as application/x-www-form-urlencoded',
        );
      }
      return startScan(sim, validDomain((await startForm(req)).get('domain')));
    },
    async ({ req }) => `POST /scan ${(await startForm(req)).get('domain')}`,
  ),
  route(
    'scan',
    'GET',
    '/scan',
    'bearer',
    ({ query, sim }) => startScan(sim, validDomain(query.get('domain'))),
    ({ query }) => `GET /scan ${query.get('domain')}`,
  ),
  route(
    'scan',
    'GET',
    '/status/{uuid}',
    'bearer',
    (call) => {
      const scan = findScan(call);
      call.sim.scans.poll(scan);
      return jsonResponse(200, statusBody(scan));
    },
    scanSubject('GET /status'),
  ),
  route('scan', 'GET', '/report/{uuid}', 'bearer', output('report'), scanSubject('GET /report')),
  route('scan', 'GET', '/logs/{uuid}', 'bearer', output('logs'), scanSubject('GET /logs')),
  route('scan', 'GET', '/debug/{uuid}', 'bearer', output('debug'), scanSubject('GET /debug')),
  route('scan', 'GET', '/scans', 'bearer', ({ sim }) => {
    const scans = [];
    for (const scan of sim.scans.listed()) {
      scans.push({
        uuid: scan.uuid,
        domain: scan.domain,
        status: scan.status,
        created_at: scan.createdAt.toISOString(),
      });
    }
    return jsonResponse(200, { scans });
  }),
  route(
    'scan',
    'DELETE',
    '/scan/{uuid}',
    'bearer',
    (call) => {
      const scan = findScan(call);
      call.sim.scans.delete(scan.uuid);
      return jsonResponse(200, { uuid: scan.uuid, deleted: true });
    },
    scanSubject('DELETE /scan'),
  ),
  route('scan', 'GET', '/stats', 'bearer', ({ sim }) => jsonResponse(200, sim.scans.stats())),
];

const SCAN_PATHS = /^\/(scan|scans|status|report|logs|debug|stats)(\/|$)/;

export function isScanPath(path: string): boolean {
  return SCAN_PATHS.test(path);
}
