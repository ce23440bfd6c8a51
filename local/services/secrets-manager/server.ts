/**
 * Serves the Secrets Manager stand-in over loopback HTTP in the service's own wire protocol (AWS
 * JSON 1.1: `POST /` with `X-Amz-Target: secretsmanager.<Operation>`), so the local runner uses the
 * real SDK client and the same code path as `AWS_ENDPOINT_URL_SECRETS_MANAGER` pointing elsewhere.
 * Requests are not signature-checked: it listens on loopback only and holds throwaway keys.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerStandIn, STAND_IN_OPERATIONS, type StandInOperation } from './stand-in.ts';

export interface SecretsManagerServer {
  /** The endpoint to give the SDK (`endpoint` or `AWS_ENDPOINT_URL_SECRETS_MANAGER`). */
  readonly url: string;
  readonly store: SecretsManagerStandIn;
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 1024 * 1024;

export async function startSecretsManagerServer(
  store: SecretsManagerStandIn = new SecretsManagerStandIn(),
): Promise<SecretsManagerServer> {
  const server = createServer((req, res) => {
    answer(store, req, res).catch((error: unknown) => {
      reply(res, 500, { __type: 'InternalServiceError', message: (error as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    store,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(
  store: SecretsManagerStandIn,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.startsWith('secretsmanager.') ? target.slice('secretsmanager.'.length) : '';
  if (req.method !== 'POST' || !STAND_IN_OPERATIONS.includes(operation as StandInOperation)) {
    reply(res, 400, { __type: 'UnknownOperationException', message: `unsupported operation '${target}'` });
    return;
  }
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(await readBody(req)) as Record<string, unknown>;
  } catch {
    reply(res, 400, { __type: 'SerializationException', message: 'the request body is not JSON' });
    return;
  }
  try {
    reply(res, 200, toWire(await store.handle(operation as StandInOperation, input)));
  } catch (error) {
    const name = error instanceof Error ? error.name : 'InternalServiceError';
    const status = name === 'InternalServiceError' ? 500 : 400;
    reply(res, status, { __type: name, message: error instanceof Error ? error.message : String(error) });
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BYTES) throw new Error('request too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON 1.1 sends timestamps as epoch seconds. */
function toWire(value: unknown): unknown {
  if (value instanceof Date) return value.getTime() / 1000;
  if (Array.isArray(value)) return value.map(toWire);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toWire(v)]));
  }
  return value;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(text),
    ...(status >= 400 ? { 'x-amzn-errortype': String((body as { __type?: unknown }).__type) } : {}),
  });
  res.end(text);
}
