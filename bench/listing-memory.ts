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
}

async function readListing(mib: number, mode: 'streamed' | 'parsed'): Promise<ListingFigures | string> {
  const child = await runChild(
    'npx',
    ['tsx', `--max-old-space-size=${FUNCTION_MEMORY_MB}`, WORKER, String(mib), mode],
    process.env,
  );
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.code !== 0 || !line.startsWith('{')) {
    return /heap out of memory/i.test(child.stderr) ? 'out of memory' : `exit ${child.code}`;
  }
  return JSON.parse(line) as ListingFigures;
}

export async function listingMemory(): Promise<void> {
  process.stdout.write(
    `\n== Scan listing of empty entries, read within the reconciliation function's ${FUNCTION_MEMORY_MB} MB ==\n`,
  );
  process.stdout.write(
    'reader   |  MiB |    entries | unreadable (sample) | seconds | peak RSS MiB | heap after MiB\n',
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
        `${figures.maxRssMiB.toFixed(0).padStart(12)} | ${figures.heapUsedMiB.toFixed(0).padStart(14)}\n`,
    );
  }
  const parsed = rows.find((row) => row.mode === 'parsed');
  const streamed8 = rows.find((row) => row.mode === 'streamed' && row.mib === 8);
  const atCap = rows.find((row) => row.mode === 'streamed' && row.mib === 64);
  if (parsed && streamed8) {
    process.stdout.write(
      `ratios at 8 MiB, streamed vs parsed: peak RSS x${(streamed8.maxRssMiB / parsed.maxRssMiB).toFixed(2)}, ` +
        `time x${(streamed8.seconds / parsed.seconds).toFixed(2)}\n`,
    );
  }
  if (atCap) {
    process.stdout.write(
      `at the 64 MiB cap: peak RSS ${atCap.maxRssMiB.toFixed(0)} MiB of ${FUNCTION_MEMORY_MB} MB ` +
        `(x${(atCap.maxRssMiB / FUNCTION_MEMORY_MB).toFixed(2)}), ${atCap.entries} entries, ${atCap.sample} described\n`,
    );
  }
}

async function sizes(): Promise<(ListingFigures | string)[]> {
  const figures: (ListingFigures | string)[] = [];
  for (const mib of [8, 16, 64]) figures.push(await readListing(mib, 'streamed'));
  return figures;
}
