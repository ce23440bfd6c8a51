/**
 * `npm run bench -- scale`: each step at three sizes up to its documented maximum, with S3's real
 * latency injected (BENCH_S3_LATENCY_MS, default 25 ms a request, ±20 % jitter), each figure
 * against the limit that applies: the function's timeout and memory (read from the synthesized
 * template), and 256 KiB for what the step returns into the state. Each step runs in its own
 * worker process (bench/scale-worker.ts); the embedded S3 and the vendor simulator run here.
 *
 * BENCH_SCALE_SIZES=small runs the two smaller sizes of each step only; BENCH_SCALE_ONLY=kind[:size]
 * (comma-separated, e.g. `breach-reconcile:10000`) runs only those, and skips the poll-cost rows.
 */
import { resolve } from 'node:path';
import { ARCHIVE_CONCURRENCY } from '#lambdas/breach/reconcile-breach-reports';
import { BREACH_RECONCILE_DEFAULTS } from '#lambdas/breach/reconcile-settings';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import { startS3rver } from '../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../local/simulator/index.ts';
import { synthesizeTemplate } from '../local/synth/synth.ts';
import { runChild } from './child.ts';
import { printDailyList } from './cost.ts';
import { measurePollCost, measureScanWork } from './poll-cost.ts';
import { startReportServer } from './report-server.ts';
import { type MeasuredHistories, measureHistories } from './scale-history.ts';
import type { ReconcileRun } from './scale-reconcile.ts';
import { breachVendorFor, scanVendorFor } from './scale-vendors.ts';

const LATENCY_MS = Number(process.env.BENCH_S3_LATENCY_MS ?? 25);
const PAYLOAD_LIMIT = 256 * 1024;
const HISTORY_LIMIT = 25_000;
const BUCKET = 'bench-scale';

interface Case {
  readonly kind: string;
  readonly label: string;
  /** The function whose timeout and memory apply. */
  readonly handler: string;
  readonly sizes: readonly number[];
  readonly unit: string;
  /** Whether the step returns into a state payload (scheduled functions do not). */
  readonly payload: boolean;
  readonly history: string;
  /**
   * Where the history column comes from: the run the worker drives through its state machine
   * (`run`), one BreachReport execution (`BreachReport`), or none (`n/a: ...`, the reason).
   */
  readonly historyColumn: 'run' | 'BreachReport' | `n/a: ${string}`;
}

const CASES: readonly Case[] = [
  {
    kind: 'list-prepare',
    label: 'PrepareDomainList',
    handler: 'prepare-domain-list',
    sizes: [1_000, 10_000, 100_000],
    unit: 'lines',
    payload: true,
    history: 'list run: O(1) per run (Distributed Map; each domain is its own ScanDomain execution)',
    historyColumn: 'run',
  },
  {
    kind: 'watchlist-prepare',
    label: 'PrepareWatchlist',
    handler: 'prepare-watchlist',
    sizes: [1_000, 10_000, 100_000],
    unit: 'rows',
    payload: true,
    history: 'watchlist run: O(1) per run (Distributed Map; each person is its own BreachReport execution)',
    historyColumn: 'run',
  },
  {
    kind: 'list-summary',
    label: 'WriteListSummary',
    handler: 'write-list-summary',
    sizes: [1_000, 10_000, 100_000],
    unit: 'domains',
    payload: true,
    history: 'list run: O(1) per run (reads the Map results from S3)',
    historyColumn: 'run',
  },
  {
    kind: 'watchlist-summary',
    label: 'WriteWatchlistSummary',
    handler: 'write-watchlist-summary',
    sizes: [1_000, 10_000, 100_000],
    unit: 'people',
    payload: true,
    history: 'watchlist run: O(1) per run (reads the Map results from S3)',
    historyColumn: 'run',
  },
  {
    // The whole step: download from the vendor (through its redirect), store, verify, manifest.
    kind: 'archive-report',
    label: 'ArchiveReport (download, store, verify, manifest)',
    handler: 'archive-breach-report',
    sizes: [100, 1_000, 10_000],
    unit: 'entries',
    payload: true,
    history: 'BreachReport: a fixed path of states, whatever the entry count',
    historyColumn: 'BreachReport',
  },
  {
    // A backlog: every listed report unarchived, drained by successive daily runs.
    kind: 'breach-reconcile',
    label: 'Breach reconciliation, backlog (all unarchived)',
    handler: 'reconcile-breach-reports',
    sizes: [100, 1_000, 10_000],
    unit: 'listed',
    payload: false,
    history: `no state machine (a scheduled function); ${BREACH_RECONCILE_DEFAULTS.maxArchivesPerRun} archives a run at most by default, ${ARCHIVE_CONCURRENCY} at a time`,
    historyColumn: 'n/a: no state machine (a scheduled function)',
  },
  {
    kind: 'scan-reconcile',
    label: 'Scan reconciliation',
    handler: 'reconcile-scans',
    sizes: [100, 1_000, 10_000],
    unit: 'listed',
    payload: false,
    history:
      'no state machine (a scheduled function); archives a run as `scan.reconcile.maxArchivesPerRun` allows',
    historyColumn: 'n/a: no state machine (a scheduled function)',
  },
  {
    // The hard case for its archive index: one S3 listing per domain, and every listed scan its own
    // domain (the 100,000-domain list, scanned daily). Ten scans a domain (above) hides it.
    kind: 'scan-reconcile-spread',
    label: 'Scan reconciliation, one scan a domain',
    handler: 'reconcile-scans',
    sizes: [1_000, 10_000, 100_000],
    unit: 'listed',
    payload: false,
    history:
      'no state machine (a scheduled function); the domains are indexed 32 at a time (`INDEX_CONCURRENCY`)',
    historyColumn: 'n/a: no state machine (a scheduled function)',
  },
];

interface Measured {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly requests: number;
  readonly peakRssMiB: number;
  readonly payloadBytes: number;
  /** items.json, for the steps that write or read it. */
  readonly itemsBytes?: number;
  /** Events of the list or watchlist run the step belongs to, through its state machine. */
  readonly historyEvents?: number;
  /** A backlog's drain: each scheduled run. */
  readonly runs?: readonly ReconcileRun[];
}

async function runWorker(kind: string, size: number, env: NodeJS.ProcessEnv): Promise<Measured> {
  const { stdout, stderr, code } = await runChild(
    process.execPath,
    [
      // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each worker, to see where a step's CPU goes.
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []),
      '--import',
      'tsx',
      resolve(import.meta.dirname, 'scale-worker.ts'),
      kind,
      String(size),
    ],
    env,
  );
  const line = stdout.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`${kind} ${size} failed (${code}): ${stderr.slice(-4000)}`);
  return JSON.parse(line) as Measured;
}

interface Limits {
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
}

function limitsOf(
  template: { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> },
  handler: string,
): Limits {
  const found = Object.values(template.Resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' &&
      String(resource.Properties?.Description ?? '').endsWith(`/${handler}.ts`),
  );
  if (!found) throw new Error(`no function for ${handler} in the template`);
  return {
    timeoutSeconds: Number(found.Properties?.Timeout ?? 3),
    memoryMiB: Number(found.Properties?.MemorySize ?? 128),
  };
}

/**
 * One scan output through the real StartScan, polls and FetchReport (bench/big-output-worker.ts, the
 * same worker as `npm run bench -- big-output`), S3 at the bench's latency.
 */
async function measureScanOutput(bytes: number): Promise<{
  seconds: number;
  cpuSeconds: number;
  requests: number;
  peakRssMiB: number;
  payloadBytes: number;
}> {
  const simulator = await startVendorSimulator({ pollsToFinish: 0 });
  const report = await startReportServer(bytes);
  const s3 = await startS3rver({ buckets: [BUCKET] });
  try {
    const { stdout, stderr, code } = await runChild(
      process.execPath,
      // The worker's `fetch` mode: the pipeline's FetchReport path (its `baseline` is the big-output
      // bench's plain Upload).
      ['--import', 'tsx', resolve(import.meta.dirname, 'big-output-worker.ts'), 'fetch'],
      {
        ...process.env,
        SCAN_API_URL: simulator.url,
        VENDOR_API_KEY: simulator.apiKey,
        S3_ENDPOINT: s3.endpoint,
        S3_BUCKET: BUCKET,
        REPORT_URL: report.url,
        S3_LATENCY_MS: String(LATENCY_MS),
      },
    );
    const line = stdout.trim().split('\n').at(-1) ?? '';
    if (code !== 0 || !line.startsWith('{'))
      throw new Error(`scan output of ${bytes} bytes failed (${code}): ${stderr.slice(-4000)}`);
    const f = JSON.parse(line) as {
      bytes: number;
      seconds: number;
      cpuSeconds: number;
      peakRssMiB: number;
      payloadBytes: number;
      requests: Record<string, number>;
    };
    if (f.bytes !== bytes) throw new Error(`scan output: ${f.bytes} bytes stored, ${bytes} served`);
    return { ...f, requests: Object.values(f.requests).reduce((sum, n) => sum + n, 0) };
  } finally {
    report.server.close();
    await simulator.close();
    await s3.close();
  }
}

const pct = (value: number, limit: number) => `${((100 * value) / limit).toFixed(1)}%`;

/** A backlog's drain, run by run; with only its first runs measured, what was left and at what rate. */
function drainLine(size: number, runs: readonly ReconcileRun[], limits: Limits): string {
  const left = runs.at(-1)?.deferred ?? 0;
  const perRun = runs.map((run) => `${run.seconds.toFixed(1)} s ${run.archived} archived`).join(', ');
  const rate = runs[0]?.archived ?? 1;
  const drain =
    left === 0
      ? `drained in ${runs.length} run(s): ${runs.length} day(s) on the daily schedule`
      : `${runs.length} run(s) measured, ${left.toLocaleString('en-US')} left: at ${rate} a run, ${runs.length + Math.ceil(left / rate)} runs (days) in all, projected`;
  return `  backlog of ${size.toLocaleString('en-US')} unarchived: ${drain}; per run ${perRun} (of ${limits.timeoutSeconds} s)\n`;
}

/** The history column: measured events of the execution the step runs in, against 25,000. */
function historyCell(spec: Case, m: Measured, histories: MeasuredHistories | undefined): string {
  const of = (events: number, what: string) => `${events} (${pct(events, HISTORY_LIMIT)}; ${what})`;
  if (spec.historyColumn === 'run') {
    if (m.historyEvents === undefined) throw new Error(`${spec.kind}: the worker measured no history`);
    return of(m.historyEvents, `the ${spec.kind.split('-')[0]} run, Map items are child executions`);
  }
  if (spec.historyColumn === 'BreachReport') {
    if (histories === undefined) throw new Error(`${spec.kind}: no BreachReport execution measured`);
    return of(histories.breachReport, 'one BreachReport execution');
  }
  return spec.historyColumn;
}

export async function measureScale(): Promise<void> {
  process.stdout.write(
    `\n== Scale: each step at three sizes, S3 at ${LATENCY_MS} ms a request (±20 %), against its limits ==\n`,
  );
  // The whole template (the synth cache keeps only the state machines): the functions' limits.
  const template = synthesizeTemplate(DEFAULT_PIPELINE_CONFIG) as unknown as Parameters<typeof limitsOf>[0];
  const simulator = await startVendorSimulator({ reportBytes: 64 * 1024 });
  const small = process.env.BENCH_SCALE_SIZES === 'small';
  const only = (process.env.BENCH_SCALE_ONLY ?? '').split(',').filter(Boolean);
  const picked = (kind: string, size: number) =>
    only.length === 0 || only.some((one) => one === kind || one === `${kind}:${size}`);
  process.stdout.write(
    'step | size | wall s (of timeout) | CPU s | S3 requests | peak RSS MiB (of memory) | payload bytes (of 256 KiB) | history events (of 25,000) | items.json MiB\n' +
      '--- | --- | --- | --- | --- | --- | --- | --- | ---\n',
  );
  const notes: string[] = [];
  // One ScanDomain and one BreachReport execution, for the rows whose step runs in one.
  const histories =
    picked('archive-report', 100) ||
    picked('archive-report', 1_000) ||
    picked('archive-report', 10_000) ||
    picked('scan-output', 64) ||
    picked('scan-output', 1024)
      ? await measureHistories()
      : undefined;
  try {
    for (const spec of CASES) {
      const limits = limitsOf(template, spec.handler);
      if (!spec.sizes.some((size) => picked(spec.kind, size))) continue;
      for (const size of small ? spec.sizes.slice(0, 2) : spec.sizes) {
        if (!picked(spec.kind, size)) continue;
        const breachVendor = await breachVendorFor(spec.kind, size);
        const scanVendor = await scanVendorFor(spec.kind, size);
        const vendor = breachVendor ?? scanVendor ?? simulator;
        // A fresh embedded S3 each time: one measurement's objects never slow the next one's listings.
        const s3 = await startS3rver({ buckets: [BUCKET] });
        const m = await runWorker(spec.kind, size, {
          ...process.env,
          S3_ENDPOINT: s3.endpoint,
          S3_BUCKET: BUCKET,
          S3_LATENCY_MS: String(LATENCY_MS),
          // Where the embedded S3 keeps its files: a large backlog is seeded there directly.
          S3_DIRECTORY: s3.directory,
          BREACH_API_URL: vendor.url,
          VENDOR_ALLOWED_ORIGINS: vendor.storageUrl,
          VENDOR_API_KEY: vendor.apiKey,
          ...(scanVendor ? { SCAN_API_URL: scanVendor.url } : {}),
        }).finally(async () => {
          await s3.close();
          await scanVendor?.close();
          await breachVendor?.close();
        });
        // A backlog is drained by several invocations: each is held to the timeout, so the slowest is shown.
        const seconds = m.runs === undefined ? m.seconds : Math.max(...m.runs.map((run) => run.seconds));
        process.stdout.write(
          `${spec.label} | ${size.toLocaleString('en-US')} ${spec.unit} | ${seconds.toFixed(1)} (${pct(seconds, limits.timeoutSeconds)} of ${limits.timeoutSeconds} s${m.runs === undefined ? '' : ', slowest run'}) | ` +
            `${m.cpuSeconds.toFixed(1)} | ${m.requests.toLocaleString('en-US')} | ` +
            `${m.peakRssMiB.toFixed(0)} (${pct(m.peakRssMiB, limits.memoryMiB)} of ${limits.memoryMiB}) | ` +
            `${spec.payload ? `${m.payloadBytes} (${pct(m.payloadBytes, PAYLOAD_LIMIT)})` : 'n/a (scheduled)'} | ` +
            `${historyCell(spec, m, histories)} | ${m.itemsBytes === undefined ? '-' : (m.itemsBytes / 2 ** 20).toFixed(1)}\n`,
        );
        if (m.runs !== undefined) process.stdout.write(drainLine(size, m.runs, limits));
      }
      notes.push(`${spec.label}: history ${spec.history}`);
    }
    const fetchLimits = limitsOf(template, 'fetch-scan-output');
    for (const mib of [64, 1024]) {
      if (!picked('scan-output', mib)) continue;
      const m = await measureScanOutput(mib * 2 ** 20);
      process.stdout.write(
        `FetchReport (scan output) | ${mib >= 1024 ? `${mib / 1024} GiB` : `${mib} MiB`} | ${m.seconds.toFixed(1)} (${pct(m.seconds, fetchLimits.timeoutSeconds)} of ${fetchLimits.timeoutSeconds} s) | ` +
          `${m.cpuSeconds.toFixed(1)} | ${m.requests} | ${m.peakRssMiB.toFixed(0)} (${pct(m.peakRssMiB, fetchLimits.memoryMiB)} of ${fetchLimits.memoryMiB}) | ` +
          `${m.payloadBytes} (${pct(m.payloadBytes, PAYLOAD_LIMIT)}) | ${histories ? `${histories.scanDomain} (${pct(histories.scanDomain, HISTORY_LIMIT)}; one ScanDomain execution, finished at its first poll)` : '-'} | -\n`,
      );
    }
    // The 100,000-domain list at the default concurrency, from one measured learned 30-minute scan.
    if (only.length === 0) {
      process.stdout.write('\n');
      printDailyList(await measureScanWork(1800), 1800);
    }
    // The adaptive loop next to a fixed 30 s one, as `npm run bench -- poll` measures it.
    const poll = only.length === 0 ? await measurePollCost([3600, 6 * 3600]) : [];
    for (const row of poll) {
      notes.push(
        `ScanDomain, one scan of ${(row.scanSeconds / 3600).toFixed(0)} h: ${row.adaptiveHistoryEvents} history events (${pct(row.adaptiveHistoryEvents, HISTORY_LIMIT)} of ${HISTORY_LIMIT.toLocaleString('en-US')})`,
      );
    }
  } finally {
    await simulator.close();
  }
  process.stdout.write(
    `${notes.map((note) => `- ${note}`).join('\n')}\n` +
      'Peak RSS is the whole worker process (Node, tsx and the SDK included), sampled every 20 ms.\n',
  );
}
