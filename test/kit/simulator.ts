/** Loopback helpers for the simulator tests: raw HTTP (no decoding, partial bodies) and ZIP reading. */
import { request } from 'node:http';
import { inflateRawSync } from 'node:zlib';
import type { VendorSimulator } from '#local/simulator/index';

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export function apiKeyHeader(key: string): Record<string, string> {
  return { 'x-api-key': key };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One request over node:http: no redirects, no decompression, bytes as sent. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface PartialResponse {
  readonly status: number | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Bytes received before the connection ended. */
  readonly received: number;
  /** True when the body arrived whole. */
  readonly complete: boolean;
  /** Error code or message when the exchange broke. */
  readonly error: string | undefined;
}

/** Like rawRequest, but reports how far a broken exchange got instead of rejecting. */
export function probe(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<PartialResponse> {
  return new Promise((resolve) => {
    let status: number | undefined;
    let responseHeaders: PartialResponse['headers'] = {};
    let received = 0;
    let error: string | undefined;
    const req = request(url, { method, headers, agent: false }, (res) => {
      status = res.statusCode;
      responseHeaders = res.headers;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      res.on('error', (e: NodeJS.ErrnoException) => {
        error = e.code ?? e.message;
      });
      res.on('close', () =>
        resolve({ status, headers: responseHeaders, received, complete: res.complete, error }),
      );
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      resolve({ status, headers: responseHeaders, received, complete: false, error: e.code ?? e.message });
    });
    req.end();
  });
}

export async function startScan(sim: VendorSimulator, domain: string): Promise<string> {
  const res = await fetch(`${sim.url}/scan`, {
    method: 'POST',
    headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ domain }),
  });
  if (res.status !== 200) throw new Error(`start scan answered ${res.status}`);
  return ((await res.json()) as { uuid: string }).uuid;
}

export interface StatusBody {
  uuid: string;
  domain: string;
  status: string;
  progress: number;
  created_at: string;
  updated_at: string;
  error?: string;
}

export async function pollStatus(sim: VendorSimulator, uuid: string): Promise<StatusBody> {
  const res = await fetch(`${sim.url}/status/${uuid}`, { headers: bearer(sim.apiKey) });
  if (res.status !== 200) throw new Error(`status answered ${res.status}`);
  return (await res.json()) as StatusBody;
}

/** Starts a scan and polls it until it finished (at most `limit` polls). */
export async function finishedScan(sim: VendorSimulator, domain: string, limit = 20): Promise<string> {
  const uuid = await startScan(sim, domain);
  for (let i = 0; i < limit; i += 1) {
    const { status } = await pollStatus(sim, uuid);
    if (status === 'completed' || status === 'failed') return uuid;
  }
  throw new Error(`scan of ${domain} did not finish in ${limit} polls`);
}

export interface ZipEntry {
  readonly name: string;
  readonly content: Buffer;
}

/**
 * Reads a ZIP the way unzip does: find the end-of-central-directory record, walk the central
 * directory, then inflate each entry from its local header.
 */
export function readZip(zip: Buffer): ZipEntry[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('no end-of-central-directory record');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`bad central directory entry ${i}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localAt = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (zip.readUInt32LE(localAt) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const dataAt = localAt + 30 + zip.readUInt16LE(localAt + 26) + zip.readUInt16LE(localAt + 28);
    const data = zip.subarray(dataAt, dataAt + compressedSize);
    entries.push({ name, content: method === 8 ? inflateRawSync(data) : Buffer.from(data) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
