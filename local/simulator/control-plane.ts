/**
 * HTTP controls for `npm run simulator` users, the same operations tests call in-process. No auth,
 * so only loopback clients may use them, even when the simulator listens on every interface.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimContext } from './context.ts';
import { faultRuleFromJson, patternFromJson } from './fault-json.ts';
import { HttpError, jsonError, jsonResponse, readBody, type SimResponse } from './http.ts';
import { sendResponse } from './send.ts';
import type { ScanBehaviour } from './types.ts';

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/**
 * DNS rebinding points a hostile name at 127.0.0.1, so a loopback peer alone does not prove a local
 * client: the Host header must name loopback too, with the port this server listens on.
 */
function isLoopbackHost(host: string | undefined, port: number | undefined): boolean {
  if (!host || port === undefined) return false;
  const lower = host.toLowerCase();
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(lower);
}

/**
 * A cross-site page may POST text/plain or a form without a CORS preflight; demanding JSON forces the
 * preflight, which this server never answers, so only local tools can change simulator state.
 */
function isJsonContentType(value: string | undefined): boolean {
  return (value ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse((await readBody(req)).toString('utf8'));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, 'bad_request', 'body is not valid JSON');
  }
}

function invalid(error: unknown): never {
  if (error instanceof TypeError) throw new HttpError(400, 'bad_request', error.message);
  throw error;
}

export interface ControlActions {
  readonly replaceKey: () => string;
}

async function handle(sim: SimContext, actions: ControlActions, req: IncomingMessage, path: string) {
  const route = `${req.method} ${path}`;
  switch (route) {
    case 'POST /__simulator/faults': {
      const body = await jsonBody(req);
      try {
        sim.faults.add(faultRuleFromJson(body));
      } catch (error) {
        invalid(error);
      }
      return jsonResponse(201, { added: true });
    }
    case 'GET /__simulator/faults':
      return jsonResponse(200, { faults: sim.faults.list(), spent: sim.faults.spent() });
    case 'DELETE /__simulator/faults':
      sim.faults.clear();
      return jsonResponse(200, { cleared: true });
    case 'POST /__simulator/scripts': {
      const body = (await jsonBody(req)) as { domain?: unknown; behaviour?: unknown } | null;
      try {
        if (typeof body !== 'object' || body === null)
          throw new TypeError('body must be {"domain", "behaviour"}');
        sim.scans.script(patternFromJson(body.domain, 'domain'), body.behaviour as ScanBehaviour);
      } catch (error) {
        invalid(error);
      }
      return jsonResponse(201, { scripted: true });
    }
    case 'POST /__simulator/listing-lag': {
      const body = (await jsonBody(req)) as { listings?: unknown } | null;
      try {
        if (typeof body !== 'object' || body === null) throw new TypeError('body must be {"listings": N}');
        sim.scans.setListingLag(body.listings as number);
      } catch (error) {
        invalid(error);
      }
      return jsonResponse(200, { listingLag: body?.listings });
    }
    case 'POST /__simulator/replace-key':
      return jsonResponse(200, { apiKey: actions.replaceKey() });
    default:
      throw new HttpError(404, 'not_found', 'unknown simulator control');
  }
}

export function controlPlane(sim: SimContext, actions: ControlActions) {
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    let response: SimResponse;
    try {
      if (!isLoopback(req.socket.remoteAddress)) {
        throw new HttpError(403, 'forbidden', 'simulator controls are available from loopback only');
      }
      if (!isLoopbackHost(req.headers.host, req.socket.localPort)) {
        throw new HttpError(
          403,
          'forbidden',
          'simulator controls need a loopback Host header (127.0.0.1, localhost or [::1] with the server port)',
        );
      }
      if (req.method !== 'GET' && req.method !== 'HEAD' && !isJsonContentType(req.headers['content-type'])) {
        throw new HttpError(
          415,
          'unsupported_media_type',
          'simulator controls need Content-Type: application/json',
        );
      }
      response = await handle(sim, actions, req, path);
    } catch (error) {
      response =
        error instanceof HttpError
          ? jsonError(error.status, error.code, error.message)
          : jsonError(500, 'internal_error', 'simulator error');
    }
    await sendResponse(res, response);
  };
}
