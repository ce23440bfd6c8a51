/**
 * Where a vendor request may go (transport/destination.ts): the configured origins as they are,
 * anything else only over https to a public address. Every refused range, IPv4 and IPv6, the
 * spellings that hide one (decimal, octal, hex, IPv4-mapped, NAT64), and names that resolve to
 * one (the resolver is injected: no real DNS). Through the real transport against loopback servers,
 * which must never see the refused request.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_NAME, VendorDestinationRefusedError } from '#lambdas/platform/errors';
import { parseOutputName } from '#lambdas/scan/parse';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import {
  addressRefusal,
  DestinationGuard,
  type HostResolver,
} from '#lambdas/vendor-api/transport/destination';
import type { VendorHttpSettings } from '#lambdas/vendor-api/transport/types';
import { REDIRECT_TARGETS } from '#local/simulator/adversarial';
import type { VendorSimulator } from '#local/simulator/types';
import { readAll } from '../../kit/digest.ts';
import { loopbackServer } from '../../kit/http.ts';
import { startSimulator } from '../../kit/simulator.ts';
import { fixedCredentials, rejectionOf, testSettings } from './helpers.ts';

const UUID = '0b56a9df-50fa-44ae-87d7-c51248d4d9d5';
const KEY = 'sk_test_destination_secret_9876';

describe('addressRefusal', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'this network'],
    ['0.1.2.3', 'this network'],
    ['::', 'unspecified'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['64:ff9b:1::a00:1', 'reserved'],
    // IPv6 forms that carry an IPv4 address are judged by the address inside.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(addressRefusal(address)).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '52.95.110.1',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('accepts the public address %s', (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
    ['http://2852039166/', '169.254.169.254'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('sees through the host spelling of %s (WHATWG URL gives %s)', (url, host) => {
    const hostname = new URL(url).hostname;
    expect(hostname).toBe(host);
    expect(addressRefusal(hostname)).toBeDefined();
  });
});

describe('DestinationGuard', () => {
  const resolver =
    (answers: Record<string, readonly { address: string; family: number }[]>): HostResolver =>
    async (hostname) =>
      answers[hostname] ?? [];

  /** What the lookup handed to a connection answers for `host`. */
  function lookupResult(
    guard: DestinationGuard,
    url: string,
    options: { all?: boolean; family?: number },
  ): Promise<{ error: unknown; args: unknown[] }> {
    const lookup = guard.admit('scan.getReport', new URL(url));
    if (lookup === undefined) throw new Error('expected a checked lookup');
    return new Promise((resolve) => {
      (lookup as unknown as (h: string, o: object, cb: (...args: unknown[]) => void) => void)(
        new URL(url).hostname,
        options,
        (error, ...args) => resolve({ error, args }),
      );
    });
  }

  it('lets a configured origin through as it is, loopback and plain http included', () => {
    const guard = new DestinationGuard(['http://127.0.0.1:8099', 'http://localhost:9000']);
    expect(guard.admit('scan.getReport', new URL('http://127.0.0.1:8099/report/x'))).toBeUndefined();
    expect(guard.admit('scan.getReport', new URL('http://localhost:9000/x'))).toBeUndefined();
  });

  it('refuses another port of a configured loopback host: a loopback vendor opens nothing else', () => {
    const guard = new DestinationGuard(['http://127.0.0.1:8099']);
    expect(() => guard.admit('scan.getReport', new URL('http://127.0.0.1:8100/'))).toThrow(
      VendorDestinationRefusedError,
    );
    expect(() => guard.admit('scan.getReport', new URL('https://127.0.0.1:8099/'))).toThrow(/loopback/);
  });

  it('refuses plain http to a public address that is not configured', () => {
    const guard = new DestinationGuard(['https://scan.vendor.example']);
    expect(() => guard.admit('scan.getReport', new URL('http://8.8.8.8/x'))).toThrow(/neither https/);
    expect(() => guard.admit('scan.getReport', new URL('http://cdn.vendor.example/x'))).toThrow(
      /neither https/,
    );
  });

  it('accepts https to a public literal without a lookup, and checks a name when it resolves', async () => {
    const guard = new DestinationGuard(
      ['https://scan.vendor.example'],
      resolver({ 'cdn.vendor.example': [{ address: '93.184.215.14', family: 4 }] }),
    );
    expect(guard.admit('scan.getReport', new URL('https://8.8.8.8/x'))).toBeUndefined();

    const all = await lookupResult(guard, 'https://cdn.vendor.example/x', { all: true });
    const one = await lookupResult(guard, 'https://cdn.vendor.example/x', {});

    expect(all).toEqual({ error: null, args: [[{ address: '93.184.215.14', family: 4 }]] });
    expect(one).toEqual({ error: null, args: ['93.184.215.14', 4] });
  });

  it.each([
    ['10.0.0.5', 4, 'private'],
    ['169.254.169.254', 4, 'cloud metadata'],
    ['127.0.0.1', 4, 'loopback'],
    ['::1', 6, 'loopback'],
    ['fd00:ec2::254', 6, 'cloud metadata'],
    ['::ffff:192.168.0.1', 6, 'private'],
  ])('refuses a name that resolves to %s (%s)', async (address, family, reason) => {
    const guard = new DestinationGuard(
      ['https://scan.vendor.example'],
      resolver({ 'cdn.vendor.example': [{ address, family }] }),
    );

    const { error } = await lookupResult(guard, 'https://cdn.vendor.example/x', { all: true });

    expect(error).toBeInstanceOf(VendorDestinationRefusedError);
    expect((error as Error).message).toContain(`cdn.vendor.example resolves to ${address}`);
    expect((error as Error).message).toContain(reason);
  });

  it('refuses a name when any one of its addresses is internal, not only the first', async () => {
    const guard = new DestinationGuard(
      ['https://scan.vendor.example'],
      resolver({
        'cdn.vendor.example': [
          { address: '93.184.215.14', family: 4 },
          { address: '10.1.2.3', family: 4 },
        ],
      }),
    );

    const { error } = await lookupResult(guard, 'https://cdn.vendor.example/x', { all: true });

    expect(error).toBeInstanceOf(VendorDestinationRefusedError);
  });

  it('names a redacted URL and never the signature', () => {
    const guard = new DestinationGuard(['https://scan.vendor.example']);
    const error = (() => {
      try {
        guard.admit('breach.download', new URL('https://10.0.0.1/r.zip?X-Amz-Signature=abcdef123456'));
      } catch (e) {
        return e as VendorDestinationRefusedError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error.name).toBe(ERROR_NAME.VendorDestinationRefusedError);
    expect(error.retryable).toBe(false);
    expect(error.message).not.toContain('abcdef123456');
    expect(error.url).toContain('X-Amz-Signature=REDACTED');
  });
});

describe('the transport refuses a redirect to where it may not go', () => {
  let sim: VendorSimulator;
  const open: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    sim = await startSimulator();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
  });
  afterAll(async () => {
    await sim.close();
  });

  function clients(baseUrl: string, extra: Partial<VendorHttpSettings> = {}) {
    const settings = {
      ...testSettings(sim),
      baseUrl,
      allowedOrigins: [],
      credentials: fixedCredentials(KEY),
      retry: { maxAttempts: 3 },
      ...extra,
    };
    const pair = [new ScanClient(settings), new BreachClient(settings)] as const;
    open.push(...pair);
    return pair;
  }

  it.each(Object.entries(REDIRECT_TARGETS))(
    'refuses the %s redirect (%s) of a report before sending anything, and does not retry',
    async (_name, location) => {
      // Prepare
      const vendor = await loopbackServer((_req, res) => {
        res.writeHead(302, { location }).end();
      });
      open.push(vendor);
      const [scan, breach] = clients(vendor.url);

      // Act
      const viaScan = await rejectionOf(scan.getOutput(parseOutputName('report'), UUID));
      const viaBreach = await rejectionOf(breach.download('report-1'));

      // Assess
      for (const error of [viaScan, viaBreach]) {
        expect(error).toBeInstanceOf(VendorDestinationRefusedError);
        expect(error.message).not.toContain(KEY);
      }
      expect(viaScan.message).toMatch(/loopback|metadata/);
      // One request per call: a refusal is permanent, never retried.
      expect(vendor.requests).toHaveLength(2);
    },
  );

  it('refuses a redirect to a name that resolves to loopback, and the server there sees nothing', async () => {
    // Prepare: a live server on loopback, reachable by a name only through the injected resolver.
    const internal = await loopbackServer((_req, res) => {
      res.writeHead(200, { 'content-length': 8 }).end('internal');
    });
    const port = new URL(internal.url).port;
    const vendor = await loopbackServer((_req, res) => {
      res.writeHead(302, { location: `https://metadata.internal.example:${port}/latest/meta-data/` }).end();
    });
    open.push(internal, vendor);
    const [scan] = clients(vendor.url, {
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
    });

    // Act
    const error = await rejectionOf(scan.getOutput(parseOutputName('report'), UUID));

    // Assess
    expect(error).toBeInstanceOf(VendorDestinationRefusedError);
    expect(error.message).toContain('metadata.internal.example resolves to 127.0.0.1');
    expect(internal.requests).toHaveLength(0);
  });

  it('follows a redirect to an origin the settings allow, loopback or not', async () => {
    // Prepare
    const storage = await loopbackServer((_req, res) => {
      res.writeHead(200, { 'content-length': 3 }).end('zip');
    });
    const vendor = await loopbackServer((_req, res) => {
      res.writeHead(302, { location: `${storage.url}/r.zip` }).end();
    });
    open.push(storage, vendor);
    const [scan] = clients(vendor.url, { allowedOrigins: [storage.url] });

    // Act
    const body = await readAll((await scan.getOutput(parseOutputName('report'), UUID)).body);

    // Assess
    expect(body.toString()).toBe('zip');
  });

  it('refuses an allowed-origins setting that is not an origin', () => {
    expect(
      () => new ScanClient({ ...testSettings(sim), allowedOrigins: ['https://cdn.example/path'] }),
    ).toThrow(/origin only/);
  });
});
