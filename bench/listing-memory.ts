/**
 * `npm run bench -- listing`: a scan listing of empty entries (`{"scans":[{},{},…]}`) at three
 * sizes up to its 64 MiB byte cap, each read in a process of its own whose heap is limited to
 * the reconciliation function's memory (1,024 MB), as reconciliation reads it: the text, one entry
 * at a time. The baseline, measured in the same run, is the whole answer parsed first (how the
 * listing was read before), at 8 MiB: it already takes most of that memory, and past 16 MiB
 * it does not finish. Peak RSS is the worker's whole process, the simulator serving the body
 * included (about twice the body's size of it).
 */
import { resolve } from 'node:path';
import { runChild } from './child.ts';

const FUNCTION_MEMORY_MB = 1024;
const WORKER = resolve(import.meta.dirname, 'listing-worker.ts');

interface ListingFigures {
  readonly mode: string;
  readonly mib: number;
  readonly entries: number;
  readonly unreadable: number;
  readonly sample: number;
  readonly seconds: number;
  readonly maxRssMiB: number;
  readonly heapUsedMiB: number;
  /** The most the JS heap held: the largest heap size before any garbage collection (--trace-gc). */
  readonly peakHeapMiB: number;
}

/**
 * The peak of the heap from V8's `--trace-gc` lines (`Scavenge 5.2 (6.0) -> 4.8 (7.0) MB`): the heap
 * is largest just before a collection, so the largest "before" figure (or the heap after the read,
 * if larger) is its peak.
 */
export function peakHeapFromTrace(trace: string, heapAfterMiB: number): number {
  let peak = heapAfterMiB;
  for (const match of trace.matchAll(
    /(?:Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)[^\d]*?([\d.]+) \([\d.]+\) ->/gi,
  )) {
    peak = Math.max(peak, Number(match[1]));
  }
  return peak;
}

async function readListing(mib: number, mode: 'streamed' | 'parsed'): Promise<ListingFigures | string> {
  const child = await runChild(
    'npx',
    ['tsx', `--max-old-space-size=${FUNCTION_MEMORY_MB}`, '--trace-gc', WORKER, String(mib), mode],
    process.env,
  );
  // The worker's one JSON line, among V8's collection traces.
  const line = child.stdout.split('\n').find((text) => text.startsWith('{')) ?? '';
  if (child.code !== 0 || line === '') {
    return /heap out of memory/i.test(child.stderr + child.stdout) ? 'out of memory' : `exit ${child.code}`;
  }
  const figures = JSON.parse(line) as Omit<ListingFigures, 'peakHeapMiB'>;
  return { ...figures, peakHeapMiB: peakHeapFromTrace(child.stdout, figures.heapUsedMiB) };
}

export async function listingMemory(): Promise<void> {
  process.stdout.write(
    `\n== Scan listing of empty entries, read within the reconciliation function's ${FUNCTION_MEMORY_MB} MB ==\n`,
  );
  process.stdout.write(
    'reader   |  MiB |    entries | unreadable (sample) | seconds | peak RSS MiB | peak heap MiB | heap after MiB\n',
  );
  const rows: ListingFigures[] = [];
  const baseline = await readListing(8, 'parsed');
  for (const figures of [baseline, ...(await sizes())]) {
    if (typeof figures === 'string') {
      process.stdout.write(`parsed   |    8 | ${figures}\n`);
      continue;
    }
    rows.push(figures);
    process.stdout.write(
      `${figures.mode.padEnd(8)} | ${String(figures.mib).padStart(4)} | ${String(figures.entries).padStart(10)} | ` +
        `${`${figures.unreadable} (${figures.sample})`.padStart(19)} | ${figures.seconds.toFixed(1).padStart(7)} | ` +
        `${figures.maxRssMiB.toFixed(0).padStart(12)} | ${figures.peakHeapMiB.toFixed(0).padStart(13)} | ` +
        `${figures.heapUsedMiB.toFixed(0).padStart(14)}\n`,
    );
  }
  const parsed = rows.find((row) => row.mode === 'parsed');
  const streamed8 = rows.find((row) => row.mode === 'streamed' && row.mib === 8);
  const atCap = rows.find((row) => row.mode === 'streamed' && row.mib === 64);
  if (parsed && streamed8) {
    process.stdout.write(
      `ratios at 8 MiB, streamed vs parsed: peak RSS x${(streamed8.maxRssMiB / parsed.maxRssMiB).toFixed(2)}, ` +
        `peak heap x${(streamed8.peakHeapMiB / parsed.peakHeapMiB).toFixed(2)}, ` +
        `time x${(streamed8.seconds / parsed.seconds).toFixed(2)}\n`,
    );
  }
  if (atCap) {
    process.stdout.write(
      `at the 64 MiB cap: peak heap ${atCap.peakHeapMiB.toFixed(0)} MiB, peak RSS ${atCap.maxRssMiB.toFixed(0)} MiB of ${FUNCTION_MEMORY_MB} MB ` +
        `(x${(atCap.maxRssMiB / FUNCTION_MEMORY_MB).toFixed(2)}), ${atCap.entries} entries, ${atCap.sample} described\n`,
    );
  }
}

async function sizes(): Promise<(ListingFigures | string)[]> {
  const figures: (ListingFigures | string)[] = [];
  for (const mib of [8, 16, 64]) figures.push(await readListing(mib, 'streamed'));
  return figures;
}
