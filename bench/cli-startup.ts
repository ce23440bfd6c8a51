/**
 * `npm run bench -- cli`: how long `npm start -- --help` and a usage error take to answer, as the
 * user waits for them (a process of its own, as package.json's start script runs it, minus npm's
 * own start-up). The goal is under a second: the arguments are read before the pipeline is loaded.
 * Figures only; the baseline is a bare `node --import tsx` on the same machine in the same run.
 *
 * Also `npm run check-config` on the example configuration and on a file with a wrong setting (goal:
 * under 5 s; the good file loads aws-cdk-lib and cdk-nag and builds the stack, the bad one neither).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runChild } from './child.ts';

const PROJECT_ROOT = resolve(import.meta.dirname, '..');
const RUNS = 5;

/** The node arguments of the start script (`node --import tsx local/cli/main.ts`). */
function startArgs(): string[] {
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [, ...args] = manifest.scripts.start?.split(/\s+/) ?? [];
  return args.map((arg) => (arg.endsWith('.ts') ? join(PROJECT_ROOT, arg) : arg));
}

async function timed(args: string[], expectedCode: number): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const child = await runChild(process.execPath, args, { ...process.env, INIT_CWD: PROJECT_ROOT });
    times.push(performance.now() - started);
    if (child.code !== expectedCode) {
      throw new Error(`${args.join(' ')} exited ${child.code}, not ${expectedCode}: ${child.stderr}`);
    }
  }
  return times.sort((a, b) => a - b);
}

export async function cliStartup(): Promise<void> {
  process.stdout.write(
    `\n== CLI start-up: npm start -- --help and a usage error (goal: under 1 s), check-config (goal: under 5 s), ${RUNS} runs each ==\n`,
  );
  const start = startArgs();
  const scratch = mkdtempSync(join(tmpdir(), 'bench-cli-'));
  const badConfig = join(scratch, 'bad.json');
  writeFileSync(badConfig, JSON.stringify({ poll: { maxWaitSeconds: 99_999 } }));
  const checkConfig = ['--import', 'tsx', join(PROJECT_ROOT, 'scripts/check-config.ts')];
  const cases: { label: string; args: string[]; code: number; goalMs?: number }[] = [
    { label: 'node --import tsx (baseline)', args: ['--import', 'tsx', '-e', ''], code: 0 },
    { label: 'npm start -- --help', args: [...start, '--help'], code: 0, goalMs: 1000 },
    { label: 'npm start -- scna (a typo)', args: [...start, 'scna'], code: 2, goalMs: 1000 },
    { label: 'npm start -- scan (no domains)', args: [...start, 'scan'], code: 2, goalMs: 1000 },
    {
      label: 'check-config (the example)',
      args: [...checkConfig, join(PROJECT_ROOT, 'config/pipeline.example.json')],
      code: 0,
      goalMs: 5000,
    },
    { label: 'check-config (a wrong setting)', args: [...checkConfig, badConfig], code: 1, goalMs: 5000 },
  ];
  process.stdout.write('case                            | min ms | median ms | max ms | goal\n');
  try {
    for (const { label, args, code, goalMs } of cases) {
      const times = await timed(args, code);
      const median = times[Math.floor(times.length / 2)] ?? 0;
      const goal = goalMs === undefined ? '' : median < goalMs ? 'met' : 'missed';
      process.stdout.write(
        `${label.padEnd(31)} | ${(times[0] ?? 0).toFixed(0).padStart(6)} | ${median.toFixed(0).padStart(9)} | ${(times.at(-1) ?? 0).toFixed(0).padStart(6)} | ${goal}\n`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
