/**
 * Where the suite's CPU goes, file by file: with `SUITE_CPU_LOG=<file>` set, every test file
 * appends one tab-separated line to that file when it ends: its path, the CPU seconds its worker
 * spent on it (user + system), the CPU seconds of the child processes it ran and waited for
 * (installs, compilers, CLI runs), and its wall seconds. The suite is CPU-bound on 2 cores, so these
 * and not the wall times (which depend on what the other worker runs meanwhile) say what a change
 * saves. Off unless the variable is set.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

interface CpuSample {
  readonly own: number;
  readonly children: number;
  readonly wall: number;
}

/** Linux's clock ticks per second for /proc times (USER_HZ), 100 on every supported platform. */
const TICKS_PER_SECOND = 100;

function sample(): CpuSample {
  const usage = process.cpuUsage();
  // /proc/self/stat: after the command name, field 16 (cutime) and 17 (cstime) are the CPU of
  // waited-for children, grandchildren included (each parent adds what it waited for).
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return {
    own: (usage.user + usage.system) / 1e6,
    children: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
    wall: performance.now() / 1000,
  };
}

/** Registers the per-file hooks when `SUITE_CPU_LOG` names a file; does nothing otherwise. */
export function installCpuLog(): void {
  const log = process.env.SUITE_CPU_LOG;
  if (log === undefined || log === '' || process.platform !== 'linux') return;
  let start: CpuSample | undefined;
  beforeAll(() => {
    start = sample();
  });
  afterAll(() => {
    if (start === undefined) return;
    const end = sample();
    const seconds = (value: number) => value.toFixed(2);
    const file = expect.getState().testPath ?? 'unknown';
    appendFileSync(
      log,
      `${file}\t${seconds(end.own - start.own)}\t${seconds(end.children - start.children)}\t${seconds(end.wall - start.wall)}\n`,
    );
  });
}
