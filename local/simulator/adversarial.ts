/**
 * The answers of the adversarial faults (`oversized-body`, `zip-bomb`, `overlapping-zip`,
 * `oversized-output`, `redirect-internal`, `deep-json`, `trickle`): each replaces the real answer of a request that was processed normally.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { gzipBomb, overlappingZip, zeros, zipBomb } from './bombs.ts';
import { JSON_TYPE, type SimResponse } from './http.ts';
import type { Fault, RedirectTarget } from './types.ts';

export type AdversarialFault = Extract<
  Fault,
  {
    type:
      | 'oversized-body'
      | 'zip-bomb'
      | 'overlapping-zip'
      | 'oversized-output'
      | 'redirect-internal'
      | 'deep-json'
      | 'trickle';
  }
>;

const ADVERSARIAL = new Set([
  'oversized-body',
  'zip-bomb',
  'overlapping-zip',
  'oversized-output',
  'redirect-internal',
  'deep-json',
  'trickle',
]);

/**
 * Where `redirect-internal` points: EC2's instance metadata service (IMDS, IPv4 and its IPv6
 * endpoint, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html),
 * a loopback port that is neither the simulator nor its storage, and 127.0.0.1 and the metadata
 * address in the spellings a naive check misses. Some over https, so the refusal a client gives
 * must come from the address, not only from the scheme.
 */
export const REDIRECT_TARGETS: Readonly<Record<RedirectTarget, string>> = {
  metadata: 'http://169.254.169.254/latest/meta-data/',
  'metadata-ipv6': 'http://[fd00:ec2::254]/latest/meta-data/',
  loopback: 'https://127.0.0.1:1/latest/meta-data/',
  decimal: 'https://2130706433/latest/meta-data/',
  mapped: 'https://[::ffff:169.254.169.254]/latest/meta-data/',
};

export function isAdversarial(fault: { readonly type: string } | undefined): fault is AdversarialFault {
  return fault !== undefined && ADVERSARIAL.has(fault.type);
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
/** Built ZIPs by their parameters: building a 1 GiB bomb costs a CRC pass over 1 GiB of zeros. */
const built = new Map<string, Buffer>();

function cached(key: string, build: () => Buffer): Buffer {
  let zip = built.get(key);
  if (zip === undefined) {
    zip = build();
    if (built.size >= 8) built.clear();
    built.set(key, zip);
  }
  return zip;
}

/** One byte of `bytes`, then `intervalMs`, then the next: the body ends only if the client waits. */
async function* trickled(bytes: Buffer, intervalMs: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += 1) {
    if (i > 0) await delay(intervalMs);
    yield bytes.subarray(i, i + 1);
  }
}

function zipResponse(zip: Buffer): SimResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/zip', 'content-length': zip.length },
    body: zip,
  };
}

/** The answer a fault sends in place of `response` (the real, already processed one). */
export function adversarialResponse(fault: AdversarialFault, response: SimResponse): SimResponse {
  switch (fault.type) {
    case 'oversized-body': {
      const bytes = fault.bytes ?? 10 * GiB;
      const gzip = (fault.encoding ?? 'gzip') === 'gzip';
      // No Content-Length: Node frames the body as chunked, the framing the client accepts.
      return {
        status: 200,
        headers: {
          'content-type': String(response.headers?.['content-type'] ?? 'application/zip'),
          ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        },
        body: gzip ? gzipBomb(bytes) : zeros(bytes),
      };
    }
    case 'zip-bomb': {
      const bytes = fault.inflatedBytes ?? GiB;
      return zipResponse(cached(`bomb:${bytes}`, () => zipBomb(bytes)));
    }
    case 'overlapping-zip': {
      const data = fault.data ?? 'stored';
      const entries = fault.entries ?? 7;
      const bytes = fault.entryBytes ?? (data === 'stored' ? MiB : GiB);
      return zipResponse(
        cached(`overlap:${entries}:${bytes}:${data}`, () => overlappingZip(entries, bytes, data)),
      );
    }
    case 'trickle': {
      const bytes = Buffer.isBuffer(response.body) ? response.body : Buffer.from('trickled');
      return {
        status: response.status,
        headers: { ...response.headers, 'content-length': bytes.length },
        body: trickled(bytes, fault.intervalMs ?? 5_000),
      };
    }
    case 'deep-json': {
      // {"status":"success","output":{"a":{"a":…}}}: valid JSON, each level one more object.
      const depth = fault.depth ?? 20_000;
      const body = Buffer.from(
        `{"status":"success","output":${'{"a":'.repeat(depth)}1${'}'.repeat(depth + 1)}`,
      );
      return { status: 200, headers: { 'content-type': JSON_TYPE, 'content-length': body.length }, body };
    }
    case 'redirect-internal':
      return { status: 302, headers: { location: REDIRECT_TARGETS[fault.to ?? 'metadata'] } };
    case 'oversized-output': {
      const body = response.body;
      let answer: Record<string, unknown> = {};
      if (Buffer.isBuffer(body)) {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as unknown;
          if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
            answer = parsed as Record<string, unknown>;
          }
        } catch {
          // Not JSON: the answer becomes an object with only the oversized output.
        }
      }
      const output = 'r'.repeat(fault.bytes ?? MiB);
      const { 'content-length': _length, ...headers } = response.headers ?? {};
      return {
        status: response.status,
        headers: { ...headers, 'content-type': JSON_TYPE },
        body: Buffer.from(JSON.stringify({ ...answer, output })),
      };
    }
  }
}
