/**
 * One dispatcher for both origins: route, count, apply faults, authenticate, handle, then send
 * (with any response-shaping fault). Sockets are tracked so close() can end hanging requests.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { injectLatency } from '../services/latency.ts';
import type { AuthScheme, Route, SimContext } from './context.ts';
import { isPreemptive, strikesAfter } from './faults.ts';
import { HttpError, readBody, type SimResponse } from './http.ts';
import { echoKeyInto, reportNameWithKey, withHeaders } from './key-echo.ts';
import { sendResponse } from './send.ts';
import type { Fault, SimulatedApi } from './types.ts';

export interface ServerSpec {
  readonly name: string;
  readonly routes: readonly Route[];
  /** Which API an unrouted path belongs to, for fault matching. */
  readonly apiFor: (path: string) => SimulatedApi | undefined;
  readonly renderError: (error: HttpError) => SimResponse;
  /** Sees every request first, before faults (the storage origin records them here). */
  readonly observe?: (req: IncomingMessage, path: string) => void;
  /** Handles `/__simulator/...` when present; faults and counting do not apply there. */
  readonly controlPlane?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;
}

export interface SimServer {
  readonly server: Server;
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

/** A refusal that quotes the request back: its body as text and every header, the key included. */
async function echoResponse(
  fault: Extract<Fault, { type: 'status' }>,
  req: IncomingMessage,
): Promise<SimResponse> {
  const body = (await readBody(req)).toString('utf8');
  const echoed = JSON.stringify({
    error: `http_${fault.status}`,
    message: `simulated ${fault.status}: the request was refused`,
    request: { method: req.method, url: req.url, headers: req.headers, body },
  });
  const headers: Record<string, string | number> = { 'content-type': 'application/json' };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  return { status: fault.status, headers, body: Buffer.from(echoed) };
}

/** Whether a fault's body is JSON; not asked when the fault names its content type (a big body is parsed for nothing). */
function parsesAsJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

function statusFaultResponse(fault: Extract<Fault, { type: 'status' }>): SimResponse {
  const headers: Record<string, string | number> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  if (fault.bodyBase64 !== undefined) {
    headers['content-type'] = fault.contentType ?? 'application/octet-stream';
    return { status: fault.status, headers, body: Buffer.from(fault.bodyBase64, 'base64') };
  }
  if (fault.body !== undefined) {
    headers['content-type'] =
      fault.contentType ?? (parsesAsJson(fault.body) ? 'application/json' : 'text/plain; charset=utf-8');
    return { status: fault.status, headers, body: Buffer.from(fault.body) };
  }
  const codes: Record<number, string> = {
    429: 'too_many_requests',
    500: 'internal_error',
    502: 'bad_gateway',
    503: 'service_unavailable',
    504: 'gateway_timeout',
  };
  const code = codes[fault.status] ?? `http_${fault.status}`;
  const body = Buffer.from(JSON.stringify({ error: code, message: `simulated ${fault.status} response` }));
  return { status: fault.status, headers: { ...headers, 'content-type': 'application/json' }, body };
}

function credentialOf(scheme: 'bearer' | 'x-api-key', req: IncomingMessage): string | undefined {
  if (scheme === 'x-api-key') {
    const value = req.headers['x-api-key'];
    return typeof value === 'string' ? value.trim() : undefined;
  }
  return /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
}

function authenticate(scheme: AuthScheme, req: IncomingMessage, sim: SimContext): void {
  if (scheme === 'presigned') {
    // Pre-signed S3 URLs refuse a second auth mechanism; a client that forwards the vendor key
    // across the redirect is leaking it, and must find out here.
    if (req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined) {
      throw new HttpError(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Signature query parameter may be specified',
      );
    }
    return;
  }
  if (!sim.keys.accepts(credentialOf(scheme, req))) {
    const expected = scheme === 'bearer' ? 'an Authorization: Bearer header' : 'an X-API-Key header';
    throw new HttpError(401, 'unauthorized', `missing or invalid API key; this API expects ${expected}`, {
      ...(scheme === 'bearer' ? { 'www-authenticate': 'Bearer' } : {}),
    });
  }
  sim.keys.touch();
}

function findRoute(routes: readonly Route[], method: string, path: string) {
  const allowed: string[] = [];
  for (const candidate of routes) {
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    if (candidate.method === method) return { route: candidate, params: match.slice(1), allowed };
    allowed.push(candidate.method);
  }
  return { route: undefined, params: [], allowed };
}

export function createSimServer(sim: SimContext, spec: ServerSpec): SimServer {
  const sockets = new Set<Socket>();

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    await injectLatency(sim.options.latency);
    res.setHeader('x-request-id', randomUUID());
    const method = (req.method ?? 'GET').toUpperCase();
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const query = new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1));
    spec.observe?.(req, path);
    if (spec.controlPlane && path.startsWith('/__simulator/')) {
      await spec.controlPlane(req, res, path);
      return;
    }
    const found = findRoute(spec.routes, method, path);
    if (found.route) sim.counts.set(found.route.template, (sim.counts.get(found.route.template) ?? 0) + 1);
    // A subject that cannot be read (a body over the limit) is left out; the handler says why.
    const subject = await Promise.resolve(
      found.route?.subject?.({ req, params: found.params, query, sim }),
    ).catch(() => undefined);
    const fault = sim.faults.take({
      api: found.route?.api ?? spec.apiFor(path),
      method,
      path,
      ...(subject === undefined ? {} : { subject }),
    });
    if (sim.options.verbose) {
      res.on('close', () => {
        // Templates only: raw paths can carry report names, which are derived from a person's name.
        const status = res.headersSent ? String(res.statusCode) : '-';
        const ms = (performance.now() - started).toFixed(1);
        const note = fault ? ` fault=${fault.type}` : '';
        process.stderr.write(
          `[${spec.name}] ${found.route?.template ?? `${method} (no route)`} ${status} ${ms}ms${note}\n`,
        );
      });
    }

    if (fault?.type === 'refuse') {
      req.socket.destroy();
      return;
    }
    const after = strikesAfter(fault);
    if (fault?.type === 'hang' && !after) return;
    if (fault?.type === 'status' && !after) {
      await sendResponse(
        res,
        fault.echoRequest ? await echoResponse(fault, req) : statusFaultResponse(fault),
      );
      return;
    }
    if (fault?.type === 'latency') {
      try {
        await sleep(fault.ms, undefined, { signal: sim.closing });
      } catch {
        return;
      }
    }

    let response: SimResponse;
    try {
      if (!found.route) {
        if (found.allowed.length > 0) {
          throw new HttpError(405, 'method_not_allowed', `${method} is not supported here`, {
            allow: found.allowed.join(', '),
          });
        }
        throw new HttpError(404, 'not_found', 'no such resource');
      }
      authenticate(found.route.auth, req, sim);
      if (fault?.type === 'key-echo' && fault.into === 'report-name') {
        const name = reportNameWithKey(req);
        if (name !== undefined) sim.reports.scriptName(name);
      }
      response = await found.route.handle({
        req,
        params: found.params,
        query,
        sim,
        ...(fault?.type === 'rotate-answer' ? { rotateAnswer: fault } : {}),
      });
    } catch (error) {
      if (error instanceof HttpError) {
        response = spec.renderError(error);
      } else {
        process.stderr.write(`[${spec.name}] internal error in ${found.route?.template}: ${String(error)}\n`);
        response = spec.renderError(new HttpError(500, 'internal_error', 'simulator error'));
      }
    }
    // The request was handled (a scan created); its answer is the one thing lost.
    if (after && fault?.type === 'hang') return;
    if (after && fault?.type === 'status') {
      await sendResponse(res, statusFaultResponse(fault));
      return;
    }
    if (fault?.type === 'key-echo' && fault.into !== 'report-name')
      response = echoKeyInto(response, req, fault.into);
    if (fault?.type === 'headers') response = withHeaders(response, fault.set, req);
    const shaping =
      fault &&
      !isPreemptive(fault) &&
      fault.type !== 'rotate-answer' &&
      fault.type !== 'key-echo' &&
      fault.type !== 'headers'
        ? fault
        : undefined;
    await sendResponse(res, response, shaping);
  }

  const server = createServer((req, res) => {
    dispatch(req, res).catch((error: unknown) => {
      process.stderr.write(`[${spec.name}] failed to answer: ${String(error)}\n`);
      res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return {
    server,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port }, () => {
          server.off('error', reject);
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : port);
        });
      });
    },
    close() {
      if (!server.listening) return Promise.resolve();
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
    },
  };
}
