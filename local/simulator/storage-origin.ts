/**
 * The storage origin that downloads end on: a second server on its own port (so a different
 * origin), behaving like pre-signed S3. It records every request so tests can prove that no
 * vendor credential crossed the redirect.
 */
import { type Route, type RouteCall, route, type SimContext } from './context.ts';
import { decodeSegment, HttpError, type SimResponse } from './http.ts';
import { createSimServer, type SimServer } from './server.ts';

function xmlEscape(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function s3Error(error: HttpError): SimResponse {
  const body = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${xmlEscape(error.code)}</Code><Message>${xmlEscape(error.message)}</Message></Error>`,
  );
  return { status: error.status, headers: { ...error.headers, 'content-type': 'application/xml' }, body };
}

async function serveObject({ params, query, sim, req }: RouteCall): Promise<SimResponse> {
  const file = decodeSegment(params[0] ?? '', 'object key');
  const check = sim.signer.verify(`reports/${file}`, query);
  if (check === 'missing') throw new HttpError(403, 'AccessDenied', 'Request is not signed');
  if (check === 'mismatch') {
    throw new HttpError(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match');
  }
  if (check === 'expired') throw new HttpError(403, 'AccessDenied', 'Request has expired');
  const report = file.endsWith('.zip') ? sim.reports.get(file.slice(0, -4)) : undefined;
  if (!report) throw new HttpError(404, 'NoSuchKey', 'The specified key does not exist.');
  const archive = await sim.reports.archive(report);
  const headers = {
    'content-type': 'application/zip',
    'content-length': archive.bytes.length,
    etag: archive.etag,
    'last-modified': report.createdAt.toUTCString(),
    'accept-ranges': 'none',
  };
  if (req.headers['if-none-match'] === archive.etag) return { status: 304, headers: { etag: archive.etag } };
  return { status: 200, headers, body: req.method === 'HEAD' ? undefined : archive.bytes };
}

const storageRoutes: readonly Route[] = [
  route('storage', 'GET', '/reports/{file_name}', 'presigned', serveObject),
  route('storage', 'HEAD', '/reports/{file_name}', 'presigned', serveObject),
];

export function createStorageOrigin(sim: SimContext): SimServer {
  return createSimServer(sim, {
    name: 'storage',
    routes: storageRoutes,
    apiFor: () => 'storage',
    renderError: s3Error,
    observe: (req, path) => {
      sim.storageRequests.push({ path, headers: { ...req.headers } });
    },
  });
}
