/**
 * `npm run bench`: figures, not pass/fail. Every goal is printed as a ratio against a baseline
 * measured in the same run, because these machines are shared and noisy. Each benchmark loads its
 * modules when it runs: one asked for by name loads nothing of the others, and an unknown name is
 * answered without loading any (importing them all costs about 3 s of CPU).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runChild } from './child.ts';

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

/** Every scan still waits one whole second before its first poll; parallelism hides it. */
const CONCURRENCY = 50;

async function throughput(): Promise<void> {
  const { startVendorSimulator } = await import('../local/simulator/index.ts');
  process.stdout.write(
    `\n== Local throughput: npm start -- scan against the simulator, instant scans, concurrency ${CONCURRENCY} ==\n`,
  );
  const simulator = await startVendorSimulator({
    pollsToFinish: 0,
    reportBytes: 16 * 1024,
    debugBytes: 4 * 1024,
  });
  const work = await mkdtemp(join(tmpdir(), 'bench-throughput-'));
  try {
    const results: { count: number; seconds: number; maxRssKiB: number }[] = [];
    for (const count of [100, 1000]) {
      const file = join(work, `domains-${count}.txt`);
      await writeFile(
        file,
        Array.from({ length: count }, (_, i) => `host-${i}.bench.example.com`).join('\n'),
      );
      // Asynchronous on purpose: the simulator answers from this process's event loop.
      const child = await runChild(
        'npx',
        [
          'tsx',
          resolve(import.meta.dirname, 'throughput-worker.ts'),
          file,
          join(work, `out-${count}`),
          String(CONCURRENCY),
        ],
        {
          ...process.env,
          SCAN_API_URL: simulator.url,
          VENDOR_API_KEY: simulator.apiKey,
          ORG_UUID: simulator.orgUuid,
        },
      );
      const line = child.stdout.trim().split('\n').pop() ?? '';
      const figures = JSON.parse(line) as { exitCode: number; seconds: number; maxRssKiB: number };
      if (figures.exitCode !== 0)
        throw new Error(`throughput run of ${count} exited ${figures.exitCode}: ${child.stderr}`);
      results.push({ count, seconds: figures.seconds, maxRssKiB: figures.maxRssKiB });
    }
    process.stdout.write('domains | seconds | domains/s | peak RSS (MiB)\n');
    for (const r of results) {
      process.stdout.write(
        `${String(r.count).padStart(7)} | ${fmt(r.seconds).padStart(7)} | ${fmt(r.count / r.seconds, 1).padStart(9)} | ${fmt(r.maxRssKiB / 1024, 0).padStart(14)}\n`,
      );
    }
    const [small, large] = results;
    if (small && large) {
      process.stdout.write(
        `ratios 1000 vs 100: peak RSS x${fmt(large.maxRssKiB / small.maxRssKiB)} (flat memory ~ 1.0), ` +
          `throughput x${fmt(large.count / large.seconds / (small.count / small.seconds))}\n`,
      );
    }
  } finally {
    await simulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

async function bundles(): Promise<void> {
  const { handlerBundles, httpClients, sdkPlacement, sourceMaps } = await import('./bundles.ts');
  process.stdout.write(
    '\n== Bundles: each handler as the CDK app bundles it; fresh-process import vs empty handler ==\n',
  );
  await handlerBundles();
  process.stdout.write('\n== HTTP clients: a tiny module per client, same bundling ==\n');
  await httpClients();
  process.stdout.write('\n== Source maps: options on start-scan ==\n');
  await sourceMaps();
  process.stdout.write('\n== AWS SDK: bundled (shipped) or from the Lambda runtime ==\n');
  await sdkPlacement();
}

/** `npm start` (the demo) with an empty synth cache, then with the cache it filled. */
async function localRun(): Promise<void> {
  const { DEFAULT_SYNTH_CACHE_DIR } = await import('../local/synth/synth-cache.ts');
  process.stdout.write('\n== Local run: npm start demo, wall time and peak RSS of a fresh process ==\n');
  await rm(DEFAULT_SYNTH_CACHE_DIR, { recursive: true, force: true });
  const rows: { label: string; seconds: number; maxRssKiB: number }[] = [];
  for (const label of ['synthesizes (cold cache)', 'cached definitions']) {
    const started = performance.now();
    const child = await runChild(
      'npx',
      ['tsx', resolve(import.meta.dirname, 'local-run-worker.ts')],
      process.env,
    );
    const seconds = (performance.now() - started) / 1000;
    const figures = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as {
      exitCode: number;
      maxRssKiB: number;
    };
    if (figures.exitCode !== 0) throw new Error(`npm start exited ${figures.exitCode}: ${child.stderr}`);
    rows.push({ label, seconds, maxRssKiB: figures.maxRssKiB });
  }
  process.stdout.write('run                      | wall s | peak RSS (MiB)\n');
  for (const row of rows) {
    process.stdout.write(
      `${row.label.padEnd(24)} | ${fmt(row.seconds).padStart(6)} | ${fmt(row.maxRssKiB / 1024, 0).padStart(14)}\n`,
    );
  }
  const [cold, warm] = rows;
  if (cold && warm) {
    process.stdout.write(
      `cached vs synthesizing: wall x${fmt(warm.seconds / cold.seconds)}, peak RSS x${fmt(warm.maxRssKiB / cold.maxRssKiB)}\n`,
    );
  }
}

/**
 * Archiving a breach report ZIP from the simulator into the embedded S3, at 64 MiB and 1 GiB, each
 * run in a fresh process: peak RSS growth, and throughput against a plain lib-storage Upload of the
 * same download measured in the same run.
 */
async function archive(): Promise<void> {
  const [{ startVendorSimulator }, { startS3rver }] = await Promise.all([
    import('../local/simulator/index.ts'),
    import('../local/services/s3/embedded-s3.ts'),
  ]);
  process.stdout.write('\n== Breach archive: ZIP from the simulator into the embedded S3, verified ==\n');
  type Figures = {
    mode: string;
    bytes: number;
    seconds: number;
    peakGrowthMiB: number;
    verifySeconds?: number;
  };
  const rows: { size: string; archive: Figures; baseline: Figures }[] = [];
  for (const [size, padding] of [
    ['64 MiB', 64 * 1024 * 1024],
    // yazl takes buffers below 1 GiB: 1,023 MiB of padding makes a ~1 GiB archive.
    ['1 GiB', 1023 * 1024 * 1024],
  ] as const) {
    const simulator = await startVendorSimulator({ reportPaddingBytes: padding });
    const s3 = await startS3rver({ buckets: ['bench-results'] });
    try {
      simulator.createReport('bench-report');
      const env = {
        ...process.env,
        BREACH_API_URL: simulator.url,
        // The simulator's pre-signed downloads are on a loopback origin of its own.
        VENDOR_ALLOWED_ORIGINS: simulator.storageUrl,
        VENDOR_API_KEY: simulator.apiKey,
        S3_ENDPOINT: s3.endpoint,
        S3_BUCKET: 'bench-results',
      };
      const measure = async (mode: string): Promise<Figures> => {
        const child = await runChild(
          'npx',
          ['tsx', resolve(import.meta.dirname, 'archive-worker.ts'), mode, 'bench-report'],
          env,
        );
        if (child.code !== 0) throw new Error(`archive-worker ${mode} exited ${child.code}: ${child.stderr}`);
        return JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as Figures;
      };
      // Baseline first: it also warms the simulator's cached archive, so both read the same bytes.
      const baseline = await measure('baseline');
      rows.push({ size, baseline, archive: await measure('archive') });
    } finally {
      await simulator.close();
      await s3.close();
    }
  }
  const mibps = (f: Figures) => f.bytes / 1024 / 1024 / f.seconds;
  process.stdout.write('size   | mode     | seconds | MiB/s | peak RSS growth (MiB) | verify s\n');
  for (const row of rows) {
    for (const f of [row.baseline, row.archive]) {
      process.stdout.write(
        `${row.size.padEnd(6)} | ${f.mode.padEnd(8)} | ${fmt(f.seconds).padStart(7)} | ${fmt(mibps(f), 1).padStart(5)} | ` +
          `${fmt(f.peakGrowthMiB, 0).padStart(21)} | ${f.verifySeconds === undefined ? '' : fmt(f.verifySeconds)}\n`,
      );
    }
    process.stdout.write(
      `${row.size}: archive throughput x${fmt(mibps(row.archive) / mibps(row.baseline))} of the plain Upload (goal >= 0.9); ` +
        `verification costs x${fmt((row.archive.verifySeconds ?? 0) / row.baseline.seconds)} of the plain upload's time\n`,
    );
  }
  const [small, large] = rows;
  if (small && large) {
    process.stdout.write(
      `peak RSS growth: ${fmt(small.archive.peakGrowthMiB, 0)} MiB at 64 MiB, ${fmt(large.archive.peakGrowthMiB, 0)} MiB at 1 GiB ` +
        `(goal <= 100 MiB, within 20%: x${fmt(large.archive.peakGrowthMiB / small.archive.peakGrowthMiB)})\n`,
    );
  }
}

async function reconcile(): Promise<void> {
  const { measureReconciliation } = await import('./reconcile.ts');
  const [domains, perDomain] = [50, 20];
  process.stdout.write(
    `\n== Scan reconciliation: ${domains * perDomain} finished scans over ${domains} domains, nobody archived them ==\n`,
  );
  const runs = await measureReconciliation(domains, perDomain);
  process.stdout.write(
    'run              | seconds | listed | archived | already | GET /status | GET /report | S3 requests (by command)\n',
  );
  for (const r of runs) {
    const s3Total = Object.values(r.s3).reduce((sum, n) => sum + n, 0);
    const byCommand = Object.entries(r.s3)
      .sort(([, a], [, b]) => b - a)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    process.stdout.write(
      `${r.label.padEnd(16)} | ${fmt(r.seconds).padStart(7)} | ${String(r.counts.listed).padStart(6)} | ` +
        `${String(r.counts.archived).padStart(8)} | ${String(r.counts.alreadyArchived).padStart(7)} | ` +
        `${String(r.vendor['GET /status/{uuid}']).padStart(11)} | ${String(r.vendor['GET /report/{uuid}']).padStart(11)} | ` +
        `${s3Total} (${byCommand})\n`,
    );
  }
  const steady = runs.at(-1);
  const archiving = runs.slice(0, -1);
  const archivingSeconds = archiving.reduce((sum, r) => sum + r.seconds, 0);
  if (steady) {
    process.stdout.write(
      `steady state: x${fmt(steady.seconds / archivingSeconds, 3)} of the archiving runs' time; ` +
        `${steady.vendor['GET /status/{uuid}']} status calls and ${steady.vendor['GET /report/{uuid}']} downloads (goal 0); ` +
        `${steady.s3.ListObjectsV2 ?? 0} S3 listings for ${domains} domains (goal about one per domain)\n`,
    );
  }
}

/**
 * Every benchmark by name. Without a name, those not marked `byNameOnly` run in this order; a name
 * that is none of these is refused with the list, rather than a run that measures nothing.
 */
const BENCHMARKS: readonly { name: string; run: () => Promise<void>; byNameOnly?: true }[] = [
  { name: 'poll', run: async () => (await import('./poll-sweep.ts')).printPollSweep() },
  {
    name: 'cost',
    run: async () => {
      process.stdout.write('\n== Cost model: 1,000 scans from one measured scan and on-demand prices ==\n');
      await (await import('./cost.ts')).costModel();
    },
  },
  { name: 'throughput', run: throughput },
  { name: 'bundles', run: bundles },
  { name: 'local', run: localRun },
  { name: 'archive', run: archive },
  { name: 'reconcile', run: reconcile },
  { name: 'listing', run: async () => (await import('./listing-memory.ts')).listingMemory() },
  { name: 'soak', run: async () => (await import('./soak.ts')).soak() },
  { name: 'cli', run: async () => (await import('./cli-startup.ts')).cliStartup() },
  // Heavy (minutes at S3 latency, 100,000-row inputs): only when asked for by name.
  { name: 'scale', run: async () => (await import('./scale.ts')).measureScale(), byNameOnly: true },
  // Heavy (over 5 GiB of disk and minutes): only when asked for by name.
  {
    name: 'big-output',
    run: async () => (await import('./big-output.ts')).bigOutput(),
    byNameOnly: true,
  },
];

const which = process.argv[2];
const chosen =
  which === undefined
    ? BENCHMARKS.filter((bench) => !bench.byNameOnly)
    : BENCHMARKS.filter((bench) => bench.name === which);
if (chosen.length === 0) {
  process.stderr.write(
    `npm run bench: unknown benchmark '${which}'. The names: ${BENCHMARKS.map((bench) => bench.name + (bench.byNameOnly ? ' (by name only)' : '')).join(', ')}\n`,
  );
  process.exit(2);
}
for (const bench of chosen) await bench.run();
