/**
 * `npm run bench -- poll`: what polling costs and how late it notices, over many end times.
 *
 * For scans of 1 min, 5 min, 30 min, 2 h and 6 h, the vendor's scan ends at each of a fine sweep of
 * end times within ±10 % of the duration (a vendor's durations vary), plus one second after every
 * poll the sweep saw inside that range (the worst lag a schedule can give there). Each end time is
 * one real execution of the synthesized ScanDomain definition in virtual time (bench/poll-cost.ts):
 * transitions are what the engine entered, the lag is the virtual time from the vendor finishing to
 * the poll that saw it.
 *
 * Cases, all in the same run: fixed 30 s polling (the baseline: the same definition with min = max
 * = 30 s, at every end time of 1 and 5 min scans, at the 21 grid end times of longer ones), the
 * default schedule before anything is learned, and learned from four earlier scans
 * of the domain (real executions whose WriteManifest learned them) whose durations were accurate,
 * 20 % shorter or 20 % longer than this scan's. The learned object is restored before each end time,
 * so the sweep measures one expectation, not one that drifts as the sweep teaches it.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { StateMachine } from 'aws-local-stepfunctions';
import {
  DEFAULT_POLL_SETTINGS,
  estimateHistoryEvents,
  POLL_HISTORY_EVENT_BUDGET,
  type PollSettings,
} from '#lambdas/scan/poll-schedule';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import { type S3rverFixture, startS3rver } from '../local/services/s3/embedded-s3.ts';
import { type AslDefinition, scanDomainStateMachine } from '../local/synth/definitions.ts';
import { cachedTemplate } from '../local/synth/synth-cache.ts';
import { BENCH_LEARNED_KEY, teachDurations, virtualScan, watcherAt } from './poll-cost.ts';
import { printPollLearning } from './poll-learning.ts';

const BUCKET = 'bench-poll';
const DURATIONS = [60, 300, 1800, 7200, 6 * 3600] as const;
/** End times span the duration ±SPREAD. */
const SPREAD = 0.1;
const GRID_POINTS = 21;

interface Case {
  readonly name: string;
  /** Learned from earlier scans this much longer than this one's duration; undefined: unlearned. */
  readonly learnedScale?: number;
}

/** Each is compared with fixed 30 s polling at the same end times (fixedBaseline). */
const CASES: readonly Case[] = [
  { name: 'unlearned' },
  { name: 'learned', learnedScale: 1 },
  { name: 'learned -20 %', learnedScale: 0.8 },
  { name: 'learned +20 %', learnedScale: 1.2 },
];

interface Run {
  readonly endSeconds: number;
  readonly transitions: number;
  readonly lagSeconds: number;
  /** Ages (s) of every poll. */
  readonly pollAges: readonly number[];
  /** The early-end watcher's vendor status calls for this scan (none for fixed polling). */
  readonly watcherChecks: number;
}

export interface SweepRow {
  readonly durationSeconds: number;
  readonly caseName: string;
  readonly runs: readonly Run[];
  /** Fixed 30 s polling at the same end times. */
  readonly fixed: readonly Run[];
}

interface Bench {
  readonly definition: AslDefinition;
  readonly machine: StateMachine;
  readonly s3: S3rverFixture;
  /** Fixed 30 s runs by end time. */
  readonly baseline: Map<number, Run>;
}

/**
 * Fixed 30 s polling. The production deadline would break its history budget (the settings refuse
 * it); a deadline past the end time does not change the transitions of a scan that ends before it.
 */
const fixedSettings = (endSeconds: number): PollSettings => ({
  minWaitSeconds: 30,
  maxWaitSeconds: 30,
  growthFactor: 1,
  deadlineSeconds: endSeconds + 600,
});

/** One end time; the adaptive schedule runs with the early-end watcher, as deployed. */
async function runOnce(bench: Bench, endSeconds: number, poll: PollSettings, watched: boolean): Promise<Run> {
  const run = await virtualScan(
    { ...bench, s3: bench.s3.client, bucket: BUCKET },
    endSeconds,
    poll,
    watched ? watcherAt(endSeconds) : undefined,
  );
  return {
    endSeconds,
    transitions: run.transitions,
    lagSeconds: run.lagSeconds,
    pollAges: run.pollAges,
    watcherChecks: run.watcherChecks,
  };
}

/** The learned object after four earlier scans of the domain, or undefined (unlearned). */
async function learnedSnapshot(
  bench: Bench,
  durationSeconds: number,
  scale?: number,
): Promise<Buffer | undefined> {
  await bench.s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: BENCH_LEARNED_KEY }));
  if (scale === undefined) return undefined;
  await teachDurations({ ...bench, s3: bench.s3.client, bucket: BUCKET }, durationSeconds * scale);
  const stored = await bench.s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: BENCH_LEARNED_KEY }));
  return Buffer.from((await stored.Body?.transformToByteArray()) ?? []);
}

async function restore(bench: Bench, snapshot: Buffer | undefined): Promise<void> {
  await bench.s3.client.send(
    snapshot === undefined
      ? new DeleteObjectCommand({ Bucket: BUCKET, Key: BENCH_LEARNED_KEY })
      : new PutObjectCommand({ Bucket: BUCKET, Key: BENCH_LEARNED_KEY, Body: snapshot }),
  );
}

async function sweepCase(bench: Bench, durationSeconds: number, entry: Case): Promise<SweepRow> {
  const low = Math.round(durationSeconds * (1 - SPREAD));
  const high = Math.round(durationSeconds * (1 + SPREAD));
  const grid = Array.from({ length: GRID_POINTS }, (_, i) =>
    Math.round(low + ((high - low) * i) / (GRID_POINTS - 1)),
  );
  const snapshot = await learnedSnapshot(bench, durationSeconds, entry.learnedScale);
  const runAt = async (endSeconds: number): Promise<Run> => {
    await restore(bench, snapshot);
    return runOnce(bench, endSeconds, DEFAULT_POLL_SETTINGS, true);
  };
  const runs: Run[] = [];
  for (const end of grid) runs.push(await runAt(end));
  // One second after each poll in range: the scan just missed it, the worst lag there.
  const seen = new Set(grid);
  const justMissed = [...new Set(runs.flatMap((run) => run.pollAges))]
    .map((age) => age + 1)
    .filter((end) => end >= low && end <= high && !seen.has(end));
  for (const end of justMissed.sort((a, b) => a - b)) runs.push(await runAt(end));
  runs.sort((a, b) => a.endSeconds - b.endSeconds);
  // The baseline at every end time of short scans (where the goal compares end time by end time),
  // at the grid's end times of longer ones (fixed polling of hours is thousands of states a run).
  const baselineEnds = durationSeconds <= 300 ? runs.map((run) => run.endSeconds) : grid;
  const fixed: Run[] = [];
  for (const end of baselineEnds) fixed.push(await fixedBaseline(bench, end));
  return { durationSeconds, caseName: entry.name, runs, fixed };
}

/** Fixed 30 s polling at `endSeconds`, unlearned; measured once per end time, shared by the cases. */
async function fixedBaseline(bench: Bench, endSeconds: number): Promise<Run> {
  const known = bench.baseline.get(endSeconds);
  if (known) return known;
  await restore(bench, undefined);
  // The baseline as it was: fixed polling by the execution alone.
  const run = await runOnce(bench, endSeconds, fixedSettings(endSeconds), false);
  bench.baseline.set(endSeconds, run);
  return run;
}

export async function measurePollSweep(durations: readonly number[] = DURATIONS): Promise<SweepRow[]> {
  const definition = scanDomainStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: false } });
  const s3 = await startS3rver({ buckets: [BUCKET] });
  try {
    const rows: SweepRow[] = [];
    const bench: Bench = { definition, machine, s3, baseline: new Map() };
    for (const durationSeconds of durations) {
      for (const entry of CASES) rows.push(await sweepCase(bench, durationSeconds, entry));
    }
    return rows;
  } finally {
    await s3.close();
  }
}

/** max(60 s, fraction of the scan's duration). */
export const allowance = (fraction: number, endSeconds: number): number =>
  Math.max(60, fraction * endSeconds);

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
const label = (seconds: number): string => (seconds >= 3600 ? `${seconds / 3600} h` : `${seconds / 60} min`);
/** Mean transitions over mean fixed-30 s transitions, at the end times both were measured at. */
const sameEndsRatio = (row: SweepRow): number => {
  const ends = new Set(row.fixed.map((run) => run.endSeconds));
  const ours = row.runs.filter((run) => ends.has(run.endSeconds)).map((run) => run.transitions);
  return mean(ours) / mean(row.fixed.map((run) => run.transitions));
};
const within = (runs: readonly Run[], fraction: number): number =>
  runs.filter((run) => run.lagSeconds <= allowance(fraction, run.endSeconds)).length;

/** Prints the sweep table and, per polling goal (docs/operations.md), whether it holds. */
export async function printPollSweep(): Promise<void> {
  process.stdout.write(
    '\n== Poll cost over a sweep of end times (±10 % of each duration): transitions per scan and lag ==\n',
  );
  const rows = await measurePollSweep();
  process.stdout.write(
    'duration | case          | ends | transitions min/mean/max | fixed 30 s mean/max | ratio | lag mean/p95/max (s) | allowance 10 % / 25 % at D (s) | ends within 10 % | within 25 %\n',
  );
  for (const row of rows) {
    const transitions = row.runs.map((run) => run.transitions);
    const fixed = row.fixed.map((run) => run.transitions);
    const lags = row.runs.map((run) => run.lagSeconds);
    const cells = [
      label(row.durationSeconds).padEnd(8),
      row.caseName.padEnd(13),
      String(row.runs.length).padStart(4),
      `${Math.min(...transitions)} / ${mean(transitions).toFixed(1)} / ${Math.max(...transitions)}`.padStart(
        24,
      ),
      `${mean(fixed).toFixed(1)} / ${Math.max(...fixed)}`.padStart(19),
      sameEndsRatio(row).toFixed(2).padStart(5),
      `${mean(lags).toFixed(0)} / ${percentile(lags, 95).toFixed(0)} / ${Math.max(...lags).toFixed(0)}`.padStart(
        20,
      ),
      `${allowance(0.1, row.durationSeconds).toFixed(0)} / ${allowance(0.25, row.durationSeconds).toFixed(0)}`.padStart(
        30,
      ),
      `${within(row.runs, 0.1)}/${row.runs.length}`.padStart(16),
      `${within(row.runs, 0.25)}/${row.runs.length}`.padStart(11),
    ];
    process.stdout.write(`${cells.join(' | ')}\n`);
  }
  const watched = rows.flatMap((row) => row.runs.map((run) => run.watcherChecks));
  process.stdout.write(
    `early-end watcher cost: ${mean(watched).toFixed(1)} vendor status calls per scan (max ${Math.max(...watched)}) ` +
      `over every adaptive end time above; ${24 * 60} Lambda invocations a day (one a minute, two passes each), ` +
      'whatever the number of scans; no state transitions\n',
  );
  const learning = await printPollLearning();
  for (const line of [...goals(rows), ...learning]) process.stdout.write(`${line}\n`);
}

/** The polling goals (docs/operations.md), each with the figures that decide it. */
export function goals(rows: readonly SweepRow[]): string[] {
  const of = (durationSeconds: number, caseName: string) =>
    rows.find((row) => row.durationSeconds === durationSeconds && row.caseName === caseName);
  const verdict = (holds: boolean) => (holds ? 'HOLDS' : 'FAILS');
  const lines: string[] = [];
  const learned30 = of(1800, 'learned');
  if (learned30) {
    const most = Math.max(...learned30.runs.map((run) => run.transitions));
    const inside = within(learned30.runs, 0.1);
    lines.push(
      `goal, learned 30 min: at most 25 transitions -> max ${most}; every end time's lag within max(60 s, 10 %) -> ` +
        `${inside}/${learned30.runs.length}: ${verdict(most <= 25 && inside === learned30.runs.length)}`,
    );
  }
  const unlearned = rows.filter((row) => row.caseName === 'unlearned');
  const runs = unlearned.flatMap((row) => row.runs);
  const inside = within(runs, 0.25);
  lines.push(
    `goal, unlearned: lag within max(60 s, 25 %) at every end time of every duration -> ${inside}/${runs.length}: ` +
      verdict(inside === runs.length),
  );
  const short = of(60, 'unlearned');
  if (short) {
    const fixedAt = new Map(short.fixed.map((run) => [run.endSeconds, run.transitions]));
    const over = short.runs.filter((run) => run.transitions > (fixedAt.get(run.endSeconds) ?? 0)).length;
    lines.push(
      `goal, unlearned 1 min: never more transitions than fixed 30 s polling at the same end time -> ` +
        `${over} of ${short.runs.length} end times more: ${verdict(over === 0)}`,
    );
  }
  const learnedRuns = rows.filter((row) => row.caseName === 'learned').flatMap((row) => row.runs);
  lines.push(
    `learned (accurate), all durations: lag within max(60 s, 10 %) -> ${within(learnedRuns, 0.1)}/${learnedRuns.length}`,
  );
  for (const name of ['learned -20 %', 'learned +20 %']) {
    const wrong = rows.filter((row) => row.caseName === name).flatMap((row) => row.runs);
    lines.push(
      `${name} expectation, all durations: lag within max(60 s, 10 %) -> ${within(wrong, 0.1)}/${wrong.length}, ` +
        `within max(60 s, 25 %) -> ${within(wrong, 0.25)}/${wrong.length}`,
    );
  }
  const events = estimateHistoryEvents(DEFAULT_POLL_SETTINGS);
  lines.push(
    `history bound: worst case ${events} events (learned or not) <= budget ${POLL_HISTORY_EVENT_BUDGET} at the ` +
      `${DEFAULT_POLL_SETTINGS.deadlineSeconds} s deadline: ${verdict(events <= POLL_HISTORY_EVENT_BUDGET)}`,
  );
  return lines;
}
