/**
 * Redirect rules of a download whose base is https, against a real TLS server on loopback (a
 * self-signed, test-only certificate under test/fixtures, trusted through `trustedCertificates`).
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VendorResponseError } from '#lambdas/platform/errors';
import { parseOutputName } from '#lambdas/scan/parse';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const CERT = readFileSync(join(FIXTURES, 'loopback-test-only.cert.pem'), 'utf8');
const KEY = readFileSync(join(FIXTURES, 'loopback-test-only.key.pem'), 'utf8');
const UUID = '0b56a9df-50fa-44ae-87d7-c51248d4d9d5';
const SECRET = 'sk_test_https_chain_5678';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface Server {
  readonly url: string;
  readonly requests: { url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

const open: { close(): Promise<void> }[] = [];

async function listen(secure: boolean, handle: Handler): Promise<Server> {
  const requests: Server['requests'] = [];
  const onRequest: Handler = (req, res) => {
    requests.push({ url: req.url ?? '', headers: { ...req.headers } });
    handle(req, res);
  };
  const server = secure
    ? createHttpsServer({ cert: CERT, key: KEY }, onRequest)
    : createHttpServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const result = {
    url: `${secure ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(result);
  return result;
}

/** `allowed`: the loopback storage origins these tests stand up, allowed as a configuration would. */
function clientsFor(baseUrl: string, allowed: readonly string[] = []) {
  const common = {
    baseUrl,
    allowedOrigins: allowed,
    credentials: async () => SECRET,
    trustedCertificates: [CERT],
    retry: { maxAttempts: 1 },
    requestTimeoutMs: 2_000,
  };
  const clients = [new ScanClient(common), new BreachClient(common)] as const;
  open.push(...clients);
  return clients;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

describe('downloads from an https vendor', () => {
  it('follows a redirect to another https origin without the key', async () => {
    // Prepare
    const storage = await listen(true, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': 3 }).end('zip');
    });
    const vendor = await listen(true, (_req, res) => {
      res.writeHead(302, { location: `${storage.url}/reports/x.zip?sig=abc` }).end();
    });
    const [scan] = clientsFor(vendor.url, [storage.url]);

    // Act
    const download = await scan.getOutput(parseOutputName('report'), UUID);
    const chunks: Buffer[] = [];
    for await (const chunk of download.body) chunks.push(chunk as Buffer);

    // Assess
    expect(Buffer.concat(chunks).toString()).toBe('zip');
    expect(vendor.requests[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(storage.requests)).not.toContain(SECRET);
  });

  it.each(['scan', 'breach'] as const)(
    'refuses a %s download redirected from https to plain http, before anything is fetched in clear',
    async (api) => {
      // Prepare
      const plain = await listen(false, (_req, res) => {
        res.writeHead(200, { 'content-length': 6 }).end('secret');
      });
      const vendor = await listen(true, (_req, res) => {
        res.writeHead(302, { location: `${plain.url}/reports/x.zip` }).end();
      });
      const [scan, breach] = clientsFor(vendor.url);

      // Act
      const error = await (api === 'scan'
        ? scan.getOutput(parseOutputName('report'), UUID)
        : breach.download('report-1')
      ).catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(VendorResponseError);
      expect((error as Error).name).toBe('VendorInsecureRedirectError');
      expect((error as Error).message).not.toContain(SECRET);
      expect(plain.requests).toHaveLength(0);
    },
  );

  it('never sends the key to the vendor origin again once the chain has left it', async () => {
    // Prepare: vendor -> storage -> back to a vendor path the storage origin chose
    let vendorUrl = '';
    const storage = await listen(true, (_req, res) => {
      res.writeHead(307, { location: `${vendorUrl}/orgs/other/api/key` }).end();
    });
    const vendor = await listen(true, (req, res) => {
      if (req.url?.startsWith('/orgs/')) {
        res.writeHead(200, { 'content-length': 2 }).end('ok');
        return;
      }
      res.writeHead(302, { location: `${storage.url}/elsewhere` }).end();
    });
    vendorUrl = vendor.url;
    const [scan] = clientsFor(vendor.url, [storage.url]);

    // Act
    const download = await scan.getOutput(parseOutputName('report'), UUID);
    for await (const _ of download.body) {
      // drain
    }

    // Assess
    const steered = vendor.requests.find((request) => request.url.startsWith('/orgs/'));
    expect(steered).toBeDefined();
    expect(steered?.headers.authorization).toBeUndefined();
  });
});
