/**
 * `npm run bench -- soak`: a 400-domain list at concurrency 25 against a flaky vendor. A quarter of
 * the scanning API's requests get a 429, a 503, a reset or a 1.5 s delay; the 503s and resets on a
 * start strike before or after its scan is created, half each. Which requests are struck is a
 * function of the seed (BENCH_SOAK_SEED, default 24) and of what each request is about (the
 * simulator keys each draw on the domain, its scan and how many such requests came before), never
 * of the order 25 concurrent scans happen to arrive in: the same seed gives the same outcome.
 * The listing (`GET /scans`) is the exception that is left unfaulted: it names no domain, so which
 * settle a fault on it struck would depend on arrival order (test/scan/settle-start.test.ts covers
 * unreadable listings).
 *
 * Prints the share that succeeded, the rejections, the duplicates the vendor holds (a domain with
 * more than one scan), how the settled starts came out, and whether every stored output byte is
 * what the vendor served: each stored output's SHA-256 and length against the simulator's record
 * of what it answered, and every output served for a succeeded domain's scan found stored.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SCAN_STAGING_PREFIX } from '#lambdas/scan/fetch-scan-output';
import { startVendorSimulator } from '../local/simulator/index.ts';
import type { Fault, ServedOutput } from '../local/simulator/types.ts';
import { runChild } from './child.ts';

const DOMAINS = 400;
const CONCURRENCY = 25;
const FAULTED_SHARE = 0.25;
const SEED = Number(process.env.BENCH_SOAK_SEED ?? 24);

/** Rules are tried in order, each drawing on its own: p per rule so that any one strikes 25% of requests. */
const FAULTS: readonly Fault[] = [
  { type: 'status', status: 429, retryAfter: 1 },
  { type: 'status', status: 503 },
  { type: 'status', status: 503, phase: 'after' },
  { type: 'refuse' },
  { type: 'lose-response' },
  { type: 'latency', ms: 1_500 },
];

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return runChild('npx', args, env);
}

export async function soak(): Promise<void> {
  if (!Number.isSafeInteger(SEED)) throw new Error(`BENCH_SOAK_SEED must be a whole number, got ${SEED}`);
  process.stdout.write(
    `\n== Soak: ${DOMAINS} domains, concurrency ${CONCURRENCY}, ${FAULTED_SHARE * 100}% of scanning-API requests faulted (seed ${SEED}) ==\n`,
  );
  const simulator = await startVendorSimulator({
    pollsToFinish: 1,
    reportBytes: 8 * 1024,
    debugBytes: 2 * 1024,
    logsBytes: 2 * 1024,
    faultSeed: SEED,
  });
  const work = await mkdtemp(join(tmpdir(), 'bench-soak-'));
  const perRule = 1 - (1 - FAULTED_SHARE) ** (1 / FAULTS.length);
  for (const fault of FAULTS) {
    // Resets and 503s after creation only mean something on a start; elsewhere they are plain faults.
    simulator.addFault({
      api: 'scan',
      path: EVERY_PATH_BUT_THE_LISTING,
      times: Number.POSITIVE_INFINITY,
      probability: perRule,
      fault,
    });
  }
  try {
    const domains = Array.from({ length: DOMAINS }, (_, i) => `soak-${i}.bench.example.com`);
    const file = join(work, 'domains.txt');
    await writeFile(file, domains.join('\n'));
    const child = await run(
      ['tsx', resolve(import.meta.dirname, 'soak-worker.ts'), file, join(work, 'out'), String(CONCURRENCY)],
      {
        ...process.env,
        SCAN_API_URL: simulator.url,
        VENDOR_API_KEY: simulator.apiKey,
        ORG_UUID: simulator.orgUuid,
      },
    );
    const line = child.stdout.trim().split('\n').pop() ?? '';
    let figures: { exitCode: number; seconds: number; summary?: string; stored: StoredFile[] };
    try {
      figures = JSON.parse(line);
    } catch {
      throw new Error(`the soak run printed no figures: ${child.stderr}`);
    }
    if (!figures.summary) throw new Error(`the soak run wrote no summary.json: ${child.stderr}`);
    const summary = JSON.parse(await readFile(figures.summary, 'utf8')) as {
      counts: Record<string, number>;
      domains: { state: string; outputPrefix?: string; error?: { name: string } }[];
      settledStarts?: Record<string, number>;
    };
    simulator.clearFaults();
    const duplicates = domains.filter((domain) => simulator.scansOf(domain).length > 1).length;
    const held = domains.reduce((sum, domain) => sum + simulator.scansOf(domain).length, 0);
    const succeeded = summary.counts.succeeded ?? 0;
    const rejectedBy = new Map<string, number>();
    for (const row of summary.domains) {
      if (row.state === 'rejected') {
        const name = row.error?.name ?? 'unknown';
        rejectedBy.set(name, (rejectedBy.get(name) ?? 0) + 1);
      }
    }
    const settled = summary.settledStarts ?? {};
    process.stdout.write(
      `succeeded ${succeeded}/${DOMAINS} (${((100 * succeeded) / DOMAINS).toFixed(1)}%, goal >= 98%) in ${figures.seconds.toFixed(0)} s\n` +
        `rejected ${summary.counts.rejected ?? 0}${rejectedBy.size ? ` (${[...rejectedBy].map(([n, c]) => `${c} ${n}`).join(', ')})` : ''}, failed ${summary.counts.failed ?? 0}, timed out ${summary.counts.timed_out ?? 0}\n` +
        `duplicates at the vendor (domains with > 1 scan): ${duplicates} (goal 0); scans held ${held} for ${DOMAINS} domains\n` +
        `settled starts: adopted ${settled.adopted ?? 0}, retried ${settled.retried ?? 0}, unresolved ${settled.unresolved ?? 0}\n` +
        `requests: POST /scan ${simulator.requestCount('POST /scan')}, GET /scans ${simulator.requestCount('GET /scans')}\n` +
        storedBytesLines(
          figures.stored,
          simulator.outputsServed(),
          summary.domains.filter((row) => row.state === 'succeeded').map((row) => row.outputPrefix ?? ''),
        ),
    );
  } finally {
    await simulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

/** Every path of the scanning API but `GET /scans`' (see the module comment). */
const EVERY_PATH_BUT_THE_LISTING = /^\/(?!scans\/?$)/;

interface StoredFile {
  /** `scans/<domain>/<yyyy>/<mm>/<dd>/<uuid>/<file>` in the results bucket. */
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
}

const OUTPUT_FILE = /^scans\/[^/]+\/\d{4}\/\d{2}\/\d{2}\/([0-9a-f-]{36})\/(report|logs|debug)\.[a-z]+$/;

/**
 * The stored outputs against what the vendor served: each stored output's bytes must be those the
 * simulator answered for that scan and output, and each output served for a succeeded domain's
 * scan must be stored under that domain's prefix. Files beside the outputs (manifests) are counted.
 */
export function storedBytesLines(
  stored: readonly StoredFile[],
  served: readonly ServedOutput[],
  succeededPrefixes: readonly string[],
): string {
  const servedBy = new Map(served.map((entry) => [`${entry.uuid}/${entry.output}`, entry]));
  const storedBy = new Map<string, StoredFile>();
  let matching = 0;
  let storedBytes = 0;
  const differing: string[] = [];
  const others = new Map<string, number>();
  for (const file of stored) {
    const match = OUTPUT_FILE.exec(file.key);
    if (!match) {
      const name = file.key.split('/').at(-1) ?? '';
      others.set(name, (others.get(name) ?? 0) + 1);
      continue;
    }
    const id = `${match[1]}/${match[2]}`;
    storedBy.set(id, file);
    const original = servedBy.get(id);
    if (original && original.sha256 === file.sha256 && original.bytes === file.bytes) {
      matching += 1;
      storedBytes += file.bytes;
    } else differing.push(file.key);
  }
  const succeededScans = new Set(succeededPrefixes.map((prefix) => prefix.split('/').at(-2)));
  const missing = served.filter(
    (entry) => succeededScans.has(entry.uuid) && !storedBy.has(`${entry.uuid}/${entry.output}`),
  );
  const outputsOfSucceeded = served.filter((entry) => succeededScans.has(entry.uuid)).length;
  const notStoredElsewhere = served.filter(
    (entry) => !succeededScans.has(entry.uuid) && !storedBy.has(`${entry.uuid}/${entry.output}`),
  ).length;
  const staged = stored.filter((file) => file.key.startsWith(SCAN_STAGING_PREFIX)).length;
  const otherCount = [...others.values()].reduce((sum, n) => sum + n, 0);
  const otherNames = [...others]
    .sort(([, a], [, b]) => b - a)
    .slice(0, 4)
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');
  return (
    `stored bytes: ${matching} of ${stored.length - otherCount} stored outputs (${storedBytes} bytes) are what the vendor served, ` +
    `by SHA-256 and length; differing or never served: ${differing.length}${differing.length ? ` (${differing.slice(0, 3).join(', ')})` : ''} (goal 0)\n` +
    `served and missing: ${missing.length} of the ${outputsOfSucceeded} outputs served for the ${succeededScans.size} succeeded domains' scans (goal 0); ` +
    `${notStoredElsewhere} served for scans no domain succeeded with; other files: ${otherCount}${otherCount ? ` (${otherNames})` : ''}; ${staged} staged leftovers\n`
  );
}
