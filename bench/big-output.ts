/**
 * `npm run bench -- big-output` (by name only): a scan report over 5 GiB, generated lazily by a
 * plain byte server, through the real fetch step into the embedded S3 on local disk (staged
 * upload, multipart copy, staged version deleted), against a plain lib-storage `Upload` of the
 * same report in the same run. Heavy: about three times the output's size of disk at the peak
 * (s3rver assembles parts into a new file). BENCH_BIG_OUTPUT_MIB sets the size, BENCH_BIG_OUTPUT_RUNS
 * the pairs of runs (each in a fresh embedded S3, the order alternating); medians are printed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { startS3rver } from '../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../local/simulator/index.ts';
import { runChild } from './child.ts';
import { startReportServer } from './report-server.ts';

/** Over CopyObject's 5 GiB by a quarter GiB; BENCH_BIG_OUTPUT_MIB overrides it. */
const BIG_OUTPUT_MIB = Number(process.env.BENCH_BIG_OUTPUT_MIB ?? 5 * 1024 + 256);
const RUNS = Number(process.env.BENCH_BIG_OUTPUT_RUNS ?? 3);

interface Baseline {
  readonly seconds: number;
  /** Of the worker process: the code under test and the SDK. */
  readonly cpuSeconds: number;
  /** Of this process meanwhile: the embedded S3 and the report server. */
  readonly s3CpuSeconds: number;
  readonly bytes: number;
}

interface Fetched {
  readonly key: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly s3CpuSeconds: number;
  /** Until the staged upload's CompleteMultipartUpload answered: reading, hashing, uploading. */
  readonly uploadSeconds?: number;
  /** The promotion: the final key's CreateMultipartUpload to its CompleteMultipartUpload. */
  readonly copySeconds?: number;
  /** Of the copy, the CompleteMultipartUpload alone (s3rver assembling the copied parts). */
  readonly copyCompleteSeconds?: number;
  readonly readyRssMiB: number;
  readonly peakRssMiB: number;
  readonly requests: Record<string, number>;
  readonly metadataSha256?: string;
  readonly headBytes?: number;
  readonly keysUnderPrefix: string[];
  /** Objects left under the output's staging prefix. */
  readonly stagedLeftovers: number;
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function freeBytes(path: string): Promise<number> {
  const fs = await statfs(path);
  return fs.bavail * fs.bsize;
}

async function sha256OfFile(file: string | undefined): Promise<{ sha256?: string; bytes: number }> {
  if (!file) return { bytes: 0 };
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

export async function bigOutput(): Promise<void> {
  const bytes = BIG_OUTPUT_MIB * 1024 * 1024;
  if (!Number.isInteger(RUNS) || RUNS < 1)
    throw new Error(`BENCH_BIG_OUTPUT_RUNS must be a whole number >= 1, got ${RUNS}`);
  process.stdout.write(
    `\n== Big output: a ${fmt(bytes / 2 ** 30)} GiB scan report through FetchReport into the embedded S3, ` +
      `against a plain lib-storage Upload, ${RUNS} run(s) each ==\n`,
  );
  const free = await freeBytes(tmpdir());
  if (free < 4 * bytes) {
    process.stdout.write(
      `skipped: ${fmt(free / 2 ** 30)} GiB free under ${tmpdir()}, ${fmt((4 * bytes) / 2 ** 30)} GiB needed\n`,
    );
    return;
  }
  const simulator = await startVendorSimulator({ pollsToFinish: 0 });
  const { server: reportServer, url: reportUrl } = await startReportServer(bytes);
  let lowestFree = free;
  const sampler = setInterval(() => {
    freeBytes(tmpdir()).then(
      (now) => {
        lowestFree = Math.min(lowestFree, now);
      },
      () => {},
    );
  }, 500);
  const rows: { baseline: Baseline; fetched: Fetched; load: number }[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      // A fresh embedded S3 per pair: the disk holds one pair at a time.
      const s3 = await startS3rver({ buckets: ['bench-results'] });
      try {
        const measure = async (mode: 'fetch' | 'baseline') => {
          // This process runs the embedded S3 (and the report server, the same for both modes).
          const cpuBefore = process.cpuUsage();
          const child = await runChild(
            'npx',
            ['tsx', resolve(import.meta.dirname, 'big-output-worker.ts'), mode],
            {
              ...process.env,
              SCAN_API_URL: simulator.url,
              VENDOR_API_KEY: simulator.apiKey,
              S3_ENDPOINT: s3.endpoint,
              S3_BUCKET: 'bench-results',
              REPORT_URL: reportUrl,
            },
          );
          if (child.code !== 0)
            throw new Error(`big-output-worker ${mode} exited ${child.code}: ${child.stderr}`);
          const s3Cpu = process.cpuUsage(cpuBefore);
          return {
            ...JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}'),
            s3CpuSeconds: (s3Cpu.user + s3Cpu.system) / 1e6,
          };
        };
        const load = loadavg()[0] ?? 0;
        // Alternating which goes first, so neither always meets the warmer page cache.
        const first = run % 2 === 0 ? 'baseline' : 'fetch';
        const a = await measure(first);
        const b = await measure(first === 'baseline' ? 'fetch' : 'baseline');
        const [baseline, fetched] = (first === 'baseline' ? [a, b] : [b, a]) as [Baseline, Fetched];
        rows.push({ baseline, fetched, load });
        if (run === 0) {
          await describeStored(fetched, s3.storedFile('bench-results', fetched.key));
          process.stdout.write(
            'run | load 1m | plain Upload s (CPU s: worker, S3) | fetch s (CPU s: worker, S3) | of which upload s | copy s (its Complete s) | plain/fetch | without the copy\n',
          );
        }
        printRow(run + 1, { baseline, fetched, load });
      } finally {
        await s3.close();
      }
    }
  } finally {
    clearInterval(sampler);
    reportServer.close();
    await simulator.close();
  }
  const mibps = (n: number, seconds: number) => n / 2 ** 20 / seconds;
  const ratio = median(rows.map((r) => r.baseline.seconds / r.fetched.seconds));
  const ratioWithoutCopy = median(
    rows.map((r) => r.baseline.seconds / (r.fetched.uploadSeconds ?? r.fetched.seconds)),
  );
  const copyShare = median(rows.map((r) => (r.fetched.copySeconds ?? 0) / r.fetched.seconds));
  process.stdout.write(
    `medians of ${rows.length}: plain Upload ${fmt(mibps(bytes, median(rows.map((r) => r.baseline.seconds))), 1)} MiB/s, ` +
      `fetch ${fmt(mibps(bytes, median(rows.map((r) => r.fetched.seconds))), 1)} MiB/s; throughput x${fmt(ratio)} of the plain Upload (goal >= 0.9), ` +
      `x${fmt(ratioWithoutCopy)} with the promotion copy excluded (the copy, which S3 does server-side, is ${fmt(100 * copyShare, 0)}% of the fetch here); ` +
      `CPU s (medians): worker ${fmt(median(rows.map((r) => r.baseline.cpuSeconds)), 1)} plain, ${fmt(median(rows.map((r) => r.fetched.cpuSeconds)), 1)} fetch; ` +
      `embedded S3 ${fmt(median(rows.map((r) => r.baseline.s3CpuSeconds)), 1)} plain, ${fmt(median(rows.map((r) => r.fetched.s3CpuSeconds)), 1)} fetch; ` +
      `load average (1 min) ${fmt(median(rows.map((r) => r.load)), 1)} on ${availableParallelism()} cores\n` +
      `peak disk used under ${tmpdir()}: ${fmt((free - lowestFree) / 2 ** 30)} GiB\n`,
  );
}

/** One pair: each time, the fetch's phases, and the plain Upload's time over the fetch's (1.0 = as fast). */
function printRow(
  run: number,
  { baseline, fetched, load }: { baseline: Baseline; fetched: Fetched; load: number },
) {
  const withoutCopy = fetched.uploadSeconds ?? fetched.seconds;
  const copy = `${fmt(fetched.copySeconds ?? 0, 1)} (${fmt(fetched.copyCompleteSeconds ?? 0, 1)})`;
  process.stdout.write(
    `${String(run).padStart(3)} | ${fmt(load, 1).padStart(7)} | ${`${fmt(baseline.seconds, 1)} (${fmt(baseline.cpuSeconds, 1)}, ${fmt(baseline.s3CpuSeconds, 1)})`.padStart(34)} | ` +
      `${`${fmt(fetched.seconds, 1)} (${fmt(fetched.cpuSeconds, 1)}, ${fmt(fetched.s3CpuSeconds, 1)})`.padStart(27)} | ${fmt(withoutCopy, 1).padStart(17)} | ${copy.padStart(23)} | ` +
      `${`x${fmt(baseline.seconds / fetched.seconds)}`.padStart(11)} | x${fmt(baseline.seconds / withoutCopy)}\n`,
  );
}

/** The first run's stored object, checked independently of the code under test. */
async function describeStored(f: Fetched, file: string | undefined): Promise<void> {
  // The stored file's own digest, read from s3rver's disk.
  const onDisk = await sha256OfFile(file);
  const total = Object.values(f.requests).reduce((sum, n) => sum + n, 0);
  const byCommand = Object.entries(f.requests)
    .sort(([, a], [, b]) => b - a)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
  process.stdout.write(
    `stored ${f.key} (${f.bytes} bytes) in ${fmt(f.seconds)} s (${fmt(f.bytes / 2 ** 20 / f.seconds, 1)} MiB/s)\n` +
      `peak RSS of the fetch process: ${fmt(f.peakRssMiB, 0)} MiB (${fmt(f.readyRssMiB, 0)} MiB before the fetch)\n` +
      `S3 requests of the fetch: ${total} (${byCommand})\n` +
      `complete: HEAD ${f.headBytes} bytes, on disk ${onDisk.bytes} -> ${f.headBytes === f.bytes && onDisk.bytes === f.bytes}\n` +
      `verified: metadata sha256 = computed sha256 = digest of the stored bytes -> ${f.metadataSha256 === f.sha256 && onDisk.sha256 === f.sha256}\n` +
      `objects under the scan prefix: ${f.keysUnderPrefix.join(', ')} (no staged leftover: ${f.stagedLeftovers === 0})\n`,
  );
}
