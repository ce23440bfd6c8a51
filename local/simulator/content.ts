/**
 * Deterministic scan outputs. Every byte is a function of the scan (uuid, domain, creation time,
 * outcome), so repeated downloads are identical and an ETag can be computed by generating once.
 * Output is produced in chunks so that a 50 MiB report never exists as one string.
 */
import { createHash } from 'node:crypto';

export type OutputKind = 'report' | 'logs' | 'debug';

/** An output's bytes for a scan, in chunks; the same scan always gives the same bytes. */
export type OutputContent = (source: ContentSource, targetBytes: number) => Iterable<Buffer>;

export interface ContentSource {
  readonly uuid: string;
  readonly domain: string;
  readonly createdAt: Date;
  /** When the scan reached its final status. */
  readonly finishedAt: Date;
  readonly outcome: 'completed' | 'failed';
  readonly error?: string | undefined;
}

export interface ContentMeta {
  readonly length: number;
  /** Quoted strong ETag. */
  readonly etag: string;
  /** Lower-case hex SHA-256 of the bytes: what a stored copy must hash to. */
  readonly sha256: string;
}

const CHUNK_BYTES = 64 * 1024;

/** sfc32 seeded from sha256(seed): fast, and the same seed always gives the same stream. */
function seededRandom(seed: string): () => number {
  const h = createHash('sha256').update(seed).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  return () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function hexOf(random: () => number, length: number): string {
  let out = '';
  while (out.length < length)
    out += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, length);
}

/** Collects small strings and hands out ~64 KiB buffers. */
class Chunker {
  private parts: string[] = [];
  private size = 0;

  /** Returns a full chunk when one is ready. */
  push(text: string): Buffer | undefined {
    this.parts.push(text);
    this.size += text.length;
    return this.size >= CHUNK_BYTES ? this.flush() : undefined;
  }

  flush(): Buffer | undefined {
    if (this.parts.length === 0) return undefined;
    const chunk = Buffer.from(this.parts.join(''));
    this.parts = [];
    this.size = 0;
    return chunk;
  }
}

const SEVERITIES = [
  'critical',
  'high',
  'medium',
  'medium',
  'low',
  'low',
  'low',
  'info',
  'info',
  'info',
] as const;
const TITLES = [
  'TLS certificate expires within 30 days',
  'HTTP Strict-Transport-Security header missing',
  'Outdated web server version disclosed in Server header',
  'Open SSH service with password authentication',
  'Directory listing enabled',
  'Cookie without Secure attribute',
  'SPF record allows too many senders',
  'DMARC policy set to none',
  'Exposed administrative interface',
  'Weak TLS cipher suites offered',
  'Subdomain points to an unclaimed cloud resource',
  'Content-Security-Policy header missing',
] as const;
const HOSTS = ['www', 'mail', 'api', 'vpn', 'dev', 'static', 'portal', 'auth', 'cdn', 'shop'] as const;
const PORTS = [22, 25, 80, 443, 465, 587, 993, 3389, 8080, 8443] as const;
const WORDS =
  'the scanner observed a response that indicates a configuration weakness which an attacker could use to gain information about the service its software versions and the way it handles encrypted connections'.split(
    ' ',
  );

function sentence(random: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i += 1) out.push(pick(random, WORDS));
  return out.join(' ');
}

/**
 * Benchmarks push thousands of reports through, so outputs are stitched from fragments built
 * once at load time (with a domain slot); serialising every line afresh was ten times slower.
 */
const POOL_SIZE = 128;
const DOMAIN_SLOT = '\u0000';
// JSON.stringify escapes the slot, so fragments built with it hold the six characters `\u0000` instead.
const JSON_DOMAIN_SLOT = JSON.stringify(DOMAIN_SLOT).slice(1, -1);

function buildPool<T>(seed: string, make: (random: () => number) => T): readonly T[] {
  const random = seededRandom(seed);
  return Array.from({ length: POOL_SIZE }, () => make(random));
}

const FINDINGS = buildPool('findings', (random) => {
  const severity = pick(random, SEVERITIES);
  const rest = JSON.stringify({
    severity,
    title: pick(random, TITLES),
    host: `${pick(random, HOSTS)}.${DOMAIN_SLOT}`,
    port: pick(random, PORTS),
    description: sentence(random, 12 + Math.floor(random() * 20)),
    evidence: hexOf(random, 64),
  });
  return { severity, text: `,${rest.slice(1)}` };
});

const LOG_LINES = buildPool('logs', (random) => {
  const host = `${pick(random, HOSTS)}.${DOMAIN_SLOT}`;
  switch (Math.floor(random() * 5)) {
    case 0:
      return `INFO  resolver: ${host} -> 203.0.113.${1 + Math.floor(random() * 254)}`;
    case 1:
      return `INFO  portscan: ${host}:${pick(random, PORTS)} open`;
    case 2:
      return `DEBUG http: GET https://${host}/ -> ${pick(random, [200, 301, 302, 403, 404])}`;
    case 3:
      return `INFO  tls: ${host} certificate valid for ${Math.floor(random() * 400)} days`;
    default:
      return `WARN  checks: ${pick(random, TITLES)} on ${host}`;
  }
});

const DEBUG_EVENTS = buildPool('debug', (random) => {
  const rest = JSON.stringify({
    level: 'debug',
    component: pick(random, ['probe', 'http', 'dns', 'tls', 'scheduler']),
    target: `https://${pick(random, HOSTS)}.${DOMAIN_SLOT}:${pick(random, PORTS)}/`,
    status: pick(random, [200, 200, 200, 301, 403, 404, 500]),
    duration_ms: Math.floor(random() * 900),
    bytes: Math.floor(random() * 50_000),
    trace: hexOf(random, 32),
  });
  return `,${rest.slice(1)}\n`;
});

/** ISO timestamps for a rising clock; formats a Date only when the second changes. */
function isoClock(): (ms: number) => string {
  let second = Number.NaN;
  let prefix = '';
  return (ms) => {
    const start = ms - (ms % 1000);
    if (start !== second) {
      second = start;
      prefix = new Date(start).toISOString().slice(0, 20);
    }
    return `${prefix}${String(ms - start).padStart(3, '0')}Z`;
  };
}

function withDomain(fragment: string, domain: string): string {
  return fragment.split(DOMAIN_SLOT).join(domain);
}

function withJsonDomain(fragment: string, domain: string): string {
  return fragment.split(JSON_DOMAIN_SLOT).join(JSON.stringify(domain).slice(1, -1));
}

function* report(source: ContentSource, targetBytes: number): Generator<Buffer> {
  const random = seededRandom(`${source.uuid}/report`);
  const findings = FINDINGS.map((f) => ({
    severity: f.severity,
    text: withJsonDomain(f.text, source.domain),
  }));
  const chunker = new Chunker();
  const finishedAt = source.finishedAt;
  const head = `{"uuid":${JSON.stringify(source.uuid)},"domain":${JSON.stringify(source.domain)},"status":"completed","started_at":"${source.createdAt.toISOString()}","finished_at":"${finishedAt.toISOString()}","scanner":{"name":"vendor-simulator","version":"1.0.0"},"findings":[`;
  let written = head.length;
  let out = chunker.push(head);
  if (out) yield out;
  const counts: Record<string, number> = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  let index = 0;
  // The closing summary is about 150 bytes; stop early enough to land near the target.
  while (index === 0 || written < targetBytes - 150) {
    index += 1;
    const finding = findings[Math.floor(random() * POOL_SIZE)] ?? { severity: 'info', text: '}' };
    counts[finding.severity] = (counts[finding.severity] ?? 0) + 1;
    const text = `${index === 1 ? '' : ','}{"id":"F-${String(index).padStart(6, '0')}"${finding.text}`;
    written += text.length;
    out = chunker.push(text);
    if (out) yield out;
  }
  out = chunker.push(`],"summary":${JSON.stringify({ total: index, by_severity: counts })}}`);
  if (out) yield out;
  out = chunker.flush();
  if (out) yield out;
}

function* logs(source: ContentSource, targetBytes: number): Generator<Buffer> {
  const random = seededRandom(`${source.uuid}/logs`);
  const lines = LOG_LINES.map((l) => withDomain(l, source.domain));
  const chunker = new Chunker();
  const iso = isoClock();
  let at = source.createdAt.getTime();
  let written = 0;
  const line = (text: string) => {
    at += Math.floor(random() * 250);
    const full = `${iso(at)} ${text}\n`;
    written += full.length;
    return chunker.push(full);
  };
  let out = line(`INFO  scan ${source.uuid} started for ${source.domain}`);
  if (out) yield out;
  while (written < targetBytes - 120) {
    out = line(lines[Math.floor(random() * POOL_SIZE)] ?? '');
    if (out) yield out;
  }
  out = line(
    source.outcome === 'completed'
      ? `INFO  scan ${source.uuid} completed`
      : `ERROR scan ${source.uuid} failed: ${source.error ?? 'unknown error'}`,
  );
  if (out) yield out;
  out = chunker.flush();
  if (out) yield out;
}

function* debug(source: ContentSource, targetBytes: number): Generator<Buffer> {
  const random = seededRandom(`${source.uuid}/debug`);
  const scanField = `,"scan":${JSON.stringify(source.uuid)}`;
  const events = DEBUG_EVENTS.map((e) => scanField + withJsonDomain(e, source.domain));
  const chunker = new Chunker();
  const iso = isoClock();
  let at = source.createdAt.getTime();
  let written = 0;
  let seq = 0;
  while (seq === 0 || written < targetBytes) {
    seq += 1;
    at += Math.floor(random() * 100);
    const text = `{"seq":${seq},"ts":"${iso(at)}"${events[Math.floor(random() * POOL_SIZE)]}`;
    written += text.length;
    const out = chunker.push(text);
    if (out) yield out;
  }
  const out = chunker.flush();
  if (out) yield out;
}

export function generate(kind: OutputKind, source: ContentSource, targetBytes: number): Generator<Buffer> {
  switch (kind) {
    case 'report':
      return report(source, targetBytes);
    case 'logs':
      return logs(source, targetBytes);
    case 'debug':
      return debug(source, targetBytes);
  }
}

function metaOf(chunks: Iterable<Buffer>): ContentMeta {
  const hash = createHash('sha256');
  let length = 0;
  for (const chunk of chunks) {
    hash.update(chunk);
    length += chunk.length;
  }
  const sha256 = hash.digest('hex');
  return { length, etag: `"${sha256.slice(0, 32)}"`, sha256 };
}

/** Up to this size the first request generates the output once, keeping it for that response only. */
const SINGLE_PASS_LIMIT = 8 * 1024 * 1024;

/**
 * The output with its length and ETag. Headers need both before the body, so the first request
 * generates the content once to learn them (callers cache `meta`); later requests stream lazily.
 */
export function render(
  content: OutputContent,
  source: ContentSource,
  targetBytes: number,
  known: ContentMeta | undefined,
): { meta: ContentMeta; body: Iterable<Buffer> } {
  if (known) return { meta: known, body: content(source, targetBytes) };
  if (targetBytes <= SINGLE_PASS_LIMIT) {
    const chunks = [...content(source, targetBytes)];
    return { meta: metaOf(chunks), body: chunks };
  }
  return { meta: metaOf(content(source, targetBytes)), body: content(source, targetBytes) };
}
