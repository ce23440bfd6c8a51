/**
 * A vendor's key-management API whose every behaviour is a parameter, for tests that draw the
 * vendor instead of listing it (the seeds show neither the rotate answer, nor the errors, nor how a
 * wrong key is refused). Over loopback HTTP, like the simulator: `GET /orgs/{org}/api/key` answers
 * the key's information to the key in use and the configured refusal to anything else;
 * `POST /orgs/{org}/api/key/rotate` (with the key in use) rotates or not, then sends the configured
 * answer at the configured speed. `configure` swaps the behaviour between cases, so one server (and
 * one URL, as a bundled function reads it once) serves a whole property run.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How the key API refuses a key it does not know (or one still propagating). */
export type WrongKeyAnswer =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSeconds?: number }
  /** 200 with a body that says it is an error. */
  | { readonly kind: 'error-200'; readonly body: string }
  /** The connection is reset before any answer. */
  | { readonly kind: 'reset' };

export interface RotateBehaviour {
  /** Whether the vendor replaces the key (the old one dies at once). */
  readonly rotates: boolean;
  readonly status: number;
  readonly contentType: string;
  /** The answer's body, the new key wherever the case put it (or nowhere). */
  readonly body: string;
  /** The body is sent in this many pieces, `gapMs` apart. @default 1 */
  readonly pieces?: number;
  readonly gapMs?: number;
}

export interface VendorBehaviour {
  readonly key: string;
  /** The key the vendor issues on rotate. */
  readonly newKey: string;
  readonly rotate: RotateBehaviour;
  readonly wrongKey: WrongKeyAnswer;
  /** After the rotate, the new key is refused (as a wrong key is) for this long. @default 0 */
  readonly propagationMs?: number;
}

export interface GeneratedVendor {
  readonly url: string;
  readonly orgUuid: string;
  /** The behaviour for the requests from now on; the key in use becomes `behaviour.key`. */
  configure(behaviour: VendorBehaviour): void;
  /** The key the vendor accepts at this moment, if any (none while a new key propagates). */
  acceptedKey(): string | undefined;
  /** The key the vendor holds (accepted once propagated). */
  readonly heldKey: string;
  /** When the held key starts to work (ms since the epoch, on the vendor's clock). */
  readonly heldKeyWorksAt: number;
  readonly rotateCalls: number;
  close(): Promise<void>;
}

/** Large enough for a signed token of several KiB in `Authorization` (Node's default is 16 KiB). */
const MAX_HEADER_BYTES = 96 * 1024;

export async function startGeneratedVendor(options: { now?: () => number } = {}): Promise<GeneratedVendor> {
  const now = options.now ?? Date.now;
  const orgUuid = '6f1c1f1e-3b7a-4c2e-9a53-0d4b2f7e9c11';
  const keyPath = `/orgs/${orgUuid}/api/key`;
  let behaviour: VendorBehaviour | undefined;
  let held = '';
  let activeFrom = 0;
  let rotateCalls = 0;
  const sockets = new Set<Socket>();

  const accepts = (key: string | undefined) => key !== undefined && key === held && now() >= activeFrom;

  function refuse(res: ServerResponse, req: IncomingMessage, answer: WrongKeyAnswer): void {
    if (answer.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (answer.kind === 'error-200') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer.body);
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (answer.retryAfterSeconds !== undefined) headers['retry-after'] = String(answer.retryAfterSeconds);
    res.writeHead(answer.status, headers).end(JSON.stringify({ error: `http_${answer.status}` }));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _ of req) {
      // The request body is not used; reading it keeps the connection usable.
    }
    const spec = behaviour;
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (spec === undefined) {
      res.writeHead(503).end();
      return;
    }
    if (req.method === 'GET' && req.url === keyPath) {
      if (!accepts(key)) return refuse(res, req, spec.wrongKey);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ org_uuid: orgUuid, key_id: `kid_${randomBytes(4).toString('hex')}` }));
      return;
    }
    if (req.method === 'POST' && req.url === `${keyPath}/rotate`) {
      if (!accepts(key)) return refuse(res, req, spec.wrongKey);
      rotateCalls += 1;
      if (spec.rotate.rotates) {
        held = spec.newKey;
        activeFrom = now() + (spec.propagationMs ?? 0);
      }
      const body = Buffer.from(spec.rotate.body, 'utf8');
      res.writeHead(spec.rotate.status, {
        'content-type': spec.rotate.contentType,
        'content-length': body.length,
      });
      const pieces = Math.max(1, Math.min(spec.rotate.pieces ?? 1, body.length));
      for (let i = 0; i < pieces; i++) {
        if (i > 0) await sleep(spec.rotate.gapMs ?? 0);
        res.write(
          body.subarray(Math.round((i * body.length) / pieces), Math.round(((i + 1) * body.length) / pieces)),
        );
      }
      res.end();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
  }

  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    orgUuid,
    configure(next) {
      behaviour = next;
      held = next.key;
      activeFrom = 0;
      rotateCalls = 0;
    },
    acceptedKey: () => (now() >= activeFrom ? held : undefined),
    get heldKey() {
      return held;
    },
    get heldKeyWorksAt() {
      return activeFrom;
    },
    get rotateCalls() {
      return rotateCalls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
