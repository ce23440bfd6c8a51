/** The scanning API (seed 000): start, status, outputs, list, delete, stats. Bearer auth. */
import { pipeline, Readable } from 'node:stream';
import { constants, createGzip } from 'node:zlib';
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
import type { OutputAnswer, OutputAnswers } from './scan-outputs.ts';
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

function output(answer: OutputAnswer) {
  return (call: RouteCall): SimResponse => {
    const scan = findScan(call);
    const ready = scan.status === 'completed' || (scan.status === 'failed' && answer.availableWhenFailed);
    if (!ready) {
      const why =
        scan.status === 'failed' ? `the scan failed and has no ${answer.name}` : `the scan is ${scan.status}`;
      throw new HttpError(409, 'conflict', `${answer.name} not available: ${why}`);
    }
    const size = answer.bytes(call.sim.options);
    const { meta, body: plain } = call.sim.scans.output(scan, answer.name, answer.content, size);
    const gzip = answer.gzipWhenAccepted && acceptsGzip(call.req);
    // A gzip body is a different representation of the same resource, so it gets its own tag.
    const etag = gzip ? `${meta.etag.slice(0, -1)}-gzip"` : meta.etag;
    const headers: Record<string, string | number> = {
      'content-type': answer.contentType,
      etag,
      'last-modified': scan.updatedAt.toUTCString(),
      'cache-control': 'private, max-age=0',
      ...(answer.gzipWhenAccepted ? { vary: 'Accept-Encoding' } : {}),
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

/** The scanning API's routes, with one output route per answer. */
export const scanRoutes = (answers: OutputAnswers): readonly Route[] => [
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
  // '/report/{uuid}' is the subject 'GET /report <domain>#<n>', as each output's has always been.
  ...Object.entries(answers).map(([path, answer]) =>
    route('scan', 'GET', path, 'bearer', output(answer), scanSubject(`GET ${path.split('/{')[0]}`)),
  ),
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

/** Whether `path` is the scanning API's: its first segment is one of its routes' or answers'. */
export function isScanPath(path: string, answers: OutputAnswers): boolean {
  const segment = path.startsWith('/') ? (path.split('/')[1] ?? '') : '';
  return (
    ['scan', 'scans', 'status', 'stats'].includes(segment) ||
    Object.keys(answers).some((answerPath) => answerPath.split('/')[1] === segment)
  );
}
