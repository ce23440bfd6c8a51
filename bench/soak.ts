/**
 * `npm run bench -- soak`: a 400-domain list at concurrency 25 against a flaky vendor. A quarter of
 * the scanning API's requests (drawn from a seeded generator) get a 429, a 503, a reset or a 1.5 s
 * delay; the 503s and resets on a start strike before or after its scan is created, half each.
 * Prints the share that succeeded, the rejections, the duplicates the vendor holds (a domain with
 * more than one scan) and how the settled starts came out.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startVendorSimulator } from '../local/simulator/index.ts';
import type { Fault } from '../local/simulator/types.ts';
import { runChild } from './child.ts';

const DOMAINS = 400;
const CONCURRENCY = 25;
const FAULTED_SHARE = 0.25;
const SEED = 24;

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
    simulator.addFault({ api: 'scan', times: Number.POSITIVE_INFINITY, probability: perRule, fault });
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
    let figures: { exitCode: number; seconds: number; summary?: string };
    try {
      figures = JSON.parse(line);
    } catch {
      throw new Error(`the soak run printed no figures: ${child.stderr}`);
    }
    if (!figures.summary) throw new Error(`the soak run wrote no summary.json: ${child.stderr}`);
    const summary = JSON.parse(await readFile(figures.summary, 'utf8')) as {
      counts: Record<string, number>;
      domains: { state: string; error?: { name: string } }[];
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
        `requests: POST /scan ${simulator.requestCount('POST /scan')}, GET /scans ${simulator.requestCount('GET /scans')}\n`,
    );
  } finally {
    await simulator.close();
    await rm(work, { recursive: true, force: true });
  }
}
