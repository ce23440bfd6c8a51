import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidInputError,
  VendorHttpError,
  VendorResponseError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { parseOutputName } from '#lambdas/scan/parse';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorHttpSettings } from '#lambdas/vendor-api/transport/types';
import type { VendorSimulator } from '#local/simulator/types';
import { digestStream, readAll } from '../../kit/digest.ts';
import { loopbackServer } from '../../kit/http.ts';
import { startSimulator } from '../../kit/simulator.ts';
import {
  fixedCredentials,
  headersContain,
  rejectionOf,
  secretStoreCredentials,
  testSettings,
} from '../transport/helpers.ts';

const UUID = '0b56a9df-50fa-44ae-87d7-c51248d4d9d5';

let sim: VendorSimulator;
const clients: { close(): Promise<void> }[] = [];
const servers: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  sim = await startSimulator();
});

afterEach(async () => {
  sim.clearFaults();
  await Promise.all([...clients.splice(0), ...servers.splice(0)].map((c) => c.close()));
});

afterAll(async () => {
  await sim.close();
});

function breachClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new BreachClient(settings);
  clients.push(client);
  return { client, settings };
}

async function newReport(): Promise<string> {
  const { client } = breachClient();
  const result = await client.recon({ name: 'Jane Example', emails: ['jane@example.com'] });
  if (!result.output) throw new Error('fixture: recon gave no report name');
  return result.output;
}

describe('BreachClient recon', () => {
  it('generates a report and returns status, output and total_breaches', async () => {
    // Prepare
    const { client } = breachClient();

    // Act
    const result = await client.recon({
      name: ' Jane Example ',
      emails: ['jane@example.com', 'j.e@example.net'],
    });

    // Assess
    expect(result.status).toBe('success');
    expect(result.output).toEqual(expect.any(String));
    expect(result.totalBreaches).toBeGreaterThan(0);
    expect(result.raw).toMatchObject({ status: 'success', output: result.output });
  });

  it('returns no_results for addresses that appear in no breach', async () => {
    // Prepare
    const { client } = breachClient();

    // Act
    const result = await client.recon({ name: 'Clean Person', emails: ['clean@example.org'] });

    // Assess
    expect(result.status).toBe('no_results');
    expect(result.totalBreaches).toBe(0);
  });

  it.each([
    ['an empty name', { name: '  ', emails: ['a@example.com'] }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201), emails: ['a@example.com'] }, 'name'],
    ['no emails', { name: 'A', emails: [] }, 'emails'],
    [
      '101 emails',
      { name: 'A', emails: Array.from({ length: 101 }, (_, i) => `u${i}@example.com`) },
      'emails',
    ],
    ['an invalid email', { name: 'A', emails: ['a@example.com', 'not-an-email'] }, 'emails[1]'],
  ])('rejects %s before anything is sent', async (_what, request, input) => {
    // Prepare
    const { client } = breachClient();
    const before = sim.requestCount('POST /recon');

    // Act
    const error = await rejectionOf(client.recon(request));

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).input).toBe(input);
    expect(sim.requestCount('POST /recon')).toBe(before);
  });

  it('throws VendorResponseError when the recon answer is not JSON', async () => {
    // Prepare
    const { client } = breachClient();
    sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'malformed-json' } });

    // Act
    const error = await rejectionOf(client.recon({ name: 'A', emails: ['a@example.com'] }));

    // Assess
    expect(error).toBeInstanceOf(VendorResponseError);
  });
});

describe('BreachClient listReports', () => {
  it('lists reports by name', async () => {
    // Prepare
    const name = await newReport();
    const { client } = breachClient();

    // Act
    const listed = await client.listReports();

    // Assess
    expect(listed.reports).toEqual(expect.arrayContaining([expect.objectContaining({ name })]));
    expect(listed.raw).toMatchObject({ reports: expect.any(Array) });
  });

  it('accepts a list of plain strings', async () => {
    // Prepare
    const { client } = breachClient();
    sim.addFault({
      api: 'breach',
      path: '/view_breaches',
      fault: { type: 'status', status: 200, body: '["one", {"report_name": "two"}, {"other": 3}]' },
    });

    // Act
    const listed = await client.listReports();

    // Assess
    expect(listed.reports.map((r) => r.name)).toEqual(['one', 'two']);
  });
});

describe('BreachClient download', () => {
  it('follows the relative then the cross-origin redirect to the ZIP', async () => {
    // Prepare
    const name = await newReport();
    const { client } = breachClient();

    // Act
    const download = await client.download(name);
    const bytes = await readAll(download.body);

    // Assess
    expect(download.redirects).toBe(2);
    expect(download.contentType).toBe('application/zip');
    expect(download.contentLength).toBe(bytes.length);
    expect(download.etag).toMatch(/^"/);
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(download.finalUrl.startsWith(sim.storageUrl)).toBe(true);
    expect(download.finalUrl).toContain('X-Amz-Signature=REDACTED');
  });

  it('never sends a credential to the storage origin', async () => {
    // Prepare
    const name = await newReport();
    const key = sim.apiKey;
    const { client } = breachClient();
    const seenBefore = sim.storageRequests.length;

    // Act
    await readAll((await client.download(name)).body);

    // Assess
    const seen = sim.storageRequests.slice(seenBefore);
    expect(seen).toHaveLength(1);
    for (const request of seen) {
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(headersContain(request.headers, key)).toBe(false);
    }
  });

  it('downloads a report whose name needs percent-encoding', async () => {
    // Prepare
    const name = 'Jörg Müller #1 ? 50% & more';
    sim.createReport(name);
    const { client } = breachClient();

    // Act
    const download = await client.download(name);
    const bytes = await readAll(download.body);

    // Assess
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('rejects a report name that would escape its path segment before sending', async () => {
    // Prepare
    const { client } = breachClient();

    // Act
    const error = await rejectionOf(client.download('../view_breaches'));

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
  });

  it('restarts the redirect chain from the vendor when the storage origin answers 503', async () => {
    // Prepare
    const name = await newReport();
    const { client, settings } = breachClient();
    sim.addFault({ api: 'storage', fault: { type: 'status', status: 503 } });
    const before = sim.requestCount('GET /download/{report_name}');

    // Act
    const bytes = await readAll((await client.download(name)).body);

    // Assess
    expect(bytes.length).toBeGreaterThan(0);
    expect(sim.requestCount('GET /download/{report_name}') - before).toBe(2);
    expect(settings.sleep.delays).toHaveLength(1);
  });

  it('does not refresh the vendor credential when the storage origin refuses its own URL', async () => {
    // Prepare
    const name = await newReport();
    const credentials = secretStoreCredentials(sim);
    const { client } = breachClient({ credentials });
    sim.addFault({ api: 'storage', fault: { type: 'status', status: 403 } });

    // Act
    const error = await rejectionOf(client.download(name));

    // Assess
    expect(error).toBeInstanceOf(VendorHttpError);
    expect(error).toMatchObject({ name: 'VendorHttpError', status: 403 });
    expect(credentials.calls.filter((c) => c.forceRefresh)).toHaveLength(0);
  });

  it('digests a report identically across two independent downloads', async () => {
    // Prepare
    const name = await newReport();
    const { client } = breachClient();

    // Act
    const first = await digestStream((await client.download(name)).body);
    const second = await digestStream((await client.download(name)).body);

    // Assess
    expect(first).toEqual(second);
  });
});

describe('redirect rules (own loopback origins)', () => {
  it('rejects more than maxRedirects (5) redirects with VendorResponseError', async () => {
    // Prepare: every hop redirects to the next, forever.
    const loop = await loopbackServer((req, res) => {
      const hop = Number(/\/hop\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
      res.writeHead(302, { location: `/hop/${hop + 1}` }).end();
    });
    servers.push(loop);
    const client = new BreachClient({
      ...testSettings(sim),
      baseUrl: loop.url,
      credentials: fixedCredentials('k'),
    });
    clients.push(client);

    // Act
    const error = await rejectionOf(client.download('any'));

    // Assess: the first request plus five followed hops, then the sixth redirect is refused.
    expect(error).toBeInstanceOf(VendorResponseError);
    expect(error.message).toMatch(/more than 5 redirects/);
    expect(loop.requests).toHaveLength(6);
  });

  it('never sends a credential again once a redirect chain has left the base origin, even back at the base', async () => {
    // Prepare: base -> other origin -> back to base -> file. Only the first hop is credentialed:
    // otherwise the other origin could steer a credentialed GET to any path of the vendor's API.
    const key = 'sk_test_chain_secret_1234';
    const other = await loopbackServer((_req, res) => {
      res.writeHead(307, { location: `${base.url}/final` }).end();
    });
    const base = await loopbackServer((req, res) => {
      if (req.url?.startsWith('/final')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 3 }).end('abc');
        return;
      }
      res.writeHead(302, { location: `${other.url}/elsewhere?sig=x` }).end();
    });
    servers.push(other, base);
    const scan = new ScanClient({
      ...testSettings(sim),
      baseUrl: base.url,
      allowedOrigins: [other.url],
      credentials: fixedCredentials(key),
    });
    const breach = new BreachClient({
      ...testSettings(sim),
      baseUrl: base.url,
      allowedOrigins: [other.url],
      credentials: fixedCredentials(key),
    });
    clients.push(scan, breach);

    // Act
    const viaBearer = await readAll((await scan.getOutput(parseOutputName('report'), UUID)).body);
    const viaApiKey = await readAll((await breach.download('r')).body);

    // Assess
    expect(viaBearer.toString()).toBe('abc');
    expect(viaApiKey.toString()).toBe('abc');
    expect(other.requests).toHaveLength(2);
    for (const request of other.requests) expect(headersContain(request.headers, key)).toBe(false);
    const [bearerFirst, bearerFinal, apiKeyFirst, apiKeyFinal] = base.requests;
    expect(bearerFirst?.headers.authorization).toBe(`Bearer ${key}`);
    expect(apiKeyFirst?.headers['x-api-key']).toBe(key);
    for (const returned of [bearerFinal, apiKeyFinal]) {
      expect(returned?.url).toBe('/final');
      expect(headersContain(returned?.headers ?? {}, key)).toBe(false);
    }
  });

  it('errors the stream with VendorTimeoutError(idle) when the body stalls', async () => {
    // Prepare: headers and a first chunk, then silence.
    const stall = await loopbackServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': 1_000 });
      res.write(Buffer.alloc(100));
    });
    servers.push(stall);
    const client = new BreachClient({
      ...testSettings(sim),
      baseUrl: stall.url,
      credentials: fixedCredentials('k'),
      idleTimeoutMs: 250,
    });
    clients.push(client);
    const download = await client.download('slow');
    const started = Date.now();

    // Act
    const error = await rejectionOf(readAll(download.body));

    // Assess
    expect(error).toBeInstanceOf(VendorTimeoutError);
    expect(error).toMatchObject({ phase: 'idle', timeoutMs: 250, operation: 'breach.download' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('keeps a slow but live body flowing past the request timeout', async () => {
    // Prepare: ten chunks 60 ms apart = 600 ms total, with a 300 ms request timeout.
    const slow = await loopbackServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': 10 });
      let sent = 0;
      const timer = setInterval(() => {
        res.write('x');
        sent += 1;
        if (sent === 10) {
          clearInterval(timer);
          res.end();
        }
      }, 60);
    });
    servers.push(slow);
    const client = new BreachClient({
      ...testSettings(sim),
      baseUrl: slow.url,
      credentials: fixedCredentials('k'),
      requestTimeoutMs: 300,
      idleTimeoutMs: 250,
    });
    clients.push(client);

    // Act
    const bytes = await readAll((await client.download('slow')).body);

    // Assess
    expect(bytes.toString()).toBe('x'.repeat(10));
  });
});
