/**
 * Progress output for `npm start`. Two modes:
 *
 * - `verbose`: what each domain waits for (`waiting 22 s`), every vendor and state-machine retry
 *   as it happens, one line per domain when it finishes, and the full table at the end;
 * - `compact` (large lists, or `--quiet`): one status line with counts (retries included),
 *   redrawn on a terminal and printed at most every `intervalMs` into a pipe or log, then only the
 *   problems at the end.
 *
 * A terminal always gets the redrawn status line; problems are printed above it as they happen.
 */

import type { Writable as NodeWritable } from 'node:stream';
import type { VendorAttemptEvent } from '#lambdas/vendor-api/transport/types';
import { QUIET_WAIT_MS, terminal, writeTerminal } from './terminal-text.ts';

export type ProgressEvent =
  | {
      readonly type: 'list-prepared';
      readonly total: number;
      readonly invalid: number;
      readonly duplicate: number;
      /** The run's folder in the results bucket (`lists/<list>/<runId>/`). */
      readonly resultsPrefix: string;
      readonly runId: string;
    }
  | {
      readonly type: 'domain-state';
      readonly domain: string;
      readonly state: string;
      readonly detail?: string;
    }
  /** The state machine retries a failed Task state (its Retry rule, as in AWS). */
  | {
      readonly type: 'state-retry';
      readonly domain: string;
      readonly state: string;
      readonly error: string;
      readonly attempt: number;
      readonly maxAttempts: number;
    }
  /** The vendor client retries a call inside one invocation, or gives up on it. */
  | {
      readonly type: 'vendor-retry';
      readonly attempt: VendorAttemptEvent & { readonly retryInMs: number };
      /** What the client sleeps instead of retryInMs, when the run's timing replaces it (LocalTiming). */
      readonly overriddenMs?: number;
    }
  | {
      readonly type: 'vendor-gave-up';
      readonly attempt: VendorAttemptEvent;
      /** Why the fault behind it was injected on purpose (the demo's), when it was. */
      readonly injectedBecause?: string;
    }
  | {
      readonly type: 'domain-done';
      readonly domain: string;
      readonly result: 'succeeded' | 'failed' | 'timed_out' | 'rejected' | 'interrupted';
      readonly detail?: string;
    };

export type ProgressListener = (event: ProgressEvent) => void;

export interface Writable {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export type OutputMode = 'compact' | 'verbose';

/** Above this many domains `npm start` switches to compact output unless `--verbose` is given. */
export const COMPACT_THRESHOLD = 50;

/** The flag's mode, else compact above COMPACT_THRESHOLD domains. */
export function outputModeFor(total: number, requested?: OutputMode): OutputMode {
  return requested ?? (total > COMPACT_THRESHOLD ? 'compact' : 'verbose');
}

/** How often a pipe or log gets a progress line in compact mode. */
export const PROGRESS_INTERVAL_MS = 5_000;

export interface ReporterOptions {
  readonly mode: OutputMode;
  /** @default PROGRESS_INTERVAL_MS */
  readonly intervalMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface ConsoleReporter {
  readonly listener: ProgressListener;
  /** Ends the status line: a terminal's redrawn line is closed, a pipe gets the final counts. */
  finish(): void;
}

/** Reports to a stream in the given mode. */
export function createConsoleReporter(out: Writable, options: ReporterOptions): ConsoleReporter {
  const tty = out.isTTY === true;
  const intervalMs = options.intervalMs ?? PROGRESS_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const started = now();
  let lastPrinted = Number.NEGATIVE_INFINITY;
  let total = 0;
  let prepared = false;
  const counts = { succeeded: 0, failed: 0, timed_out: 0, rejected: 0, interrupted: 0 };
  const running = new Set<string>();
  let retries = 0;
  const statusText = () => {
    const done = counts.succeeded + counts.failed + counts.timed_out + counts.rejected + counts.interrupted;
    const elapsedMs = now() - started;
    return (
      `${done}/${total} done: ${counts.succeeded} succeeded, ${counts.failed} failed, ` +
      `${counts.timed_out} timed out, ${counts.rejected} rejected` +
      `${counts.interrupted > 0 ? `, ${counts.interrupted} interrupted` : ''}; ${running.size} running` +
      `${retries > 0 ? `, ${retries} retries` : ''} (${Math.round(elapsedMs / 1000)}s${pace(done, total, elapsedMs)})`
    );
  };
  /** A line of its own in verbose mode; on a terminal it goes above the redrawn status line. */
  const verboseLine = (line: string) => {
    if (options.mode === 'verbose') out.write(tty ? `\r\u001b[K${line}\n` : `${line}\n`);
  };
  const redraw = () => out.write(`\r${statusText()}\u001b[K`);
  const listener: ProgressListener = (event) => {
    switch (event.type) {
      case 'list-prepared':
        total = event.total;
        prepared = true;
        out.write(
          `${event.total} domain(s) to scan; ${event.invalid} invalid and ${event.duplicate} duplicate line(s) skipped\n`,
        );
        break;
      case 'domain-state':
        running.add(event.domain);
        // Only states that say what comes next (a wait): the rest would be noise.
        if (event.detail)
          verboseLine(terminal`  ${event.domain.padEnd(32)} ${event.state} (${event.detail})`);
        break;
      case 'state-retry':
        retries += 1;
        verboseLine(
          terminal`  ${event.domain.padEnd(32)} ${event.state} failed (${event.error}); the state machine retries it (retry ${event.attempt}/${event.maxAttempts})`,
        );
        break;
      case 'vendor-retry':
        retries += 1;
        verboseLine(terminal`  vendor ${describeVendorAttempt(event)}`);
        break;
      case 'vendor-gave-up':
        verboseLine(terminal`  vendor ${describeVendorAttempt(event)}`);
        break;
      case 'domain-done': {
        running.delete(event.domain);
        counts[event.result] += 1;
        // The domain is the user's text and the detail the vendor's: escaped, so neither can move
        // the cursor or fake a line (local/output/terminal-text.ts).
        const detail = event.detail ? terminal` (${event.detail})` : '';
        const line = `${terminal`  ${event.domain.padEnd(32)} => ${event.result}`}${detail}\n`;
        if (options.mode === 'verbose' || (tty && event.result !== 'succeeded')) {
          out.write(tty ? `\r\u001b[K${line}` : line);
        }
        break;
      }
    }
    if (tty) redraw();
    else if (options.mode === 'compact' && prepared && now() - lastPrinted >= intervalMs) {
      lastPrinted = now();
      out.write(`${statusText()}\n`);
    }
  };
  return {
    listener,
    finish() {
      if (tty) out.write('\n');
      else if (options.mode === 'compact' && prepared) out.write(`${statusText()}\n`);
    },
  };
}

/** Below this many finished domains the rate says too little to give an ETA from. */
const MIN_DONE_FOR_ETA = 3;

/**
 * `, 1.6/s, about 3h 25m left`: the rate so far and what it leaves for the rest; nothing until a
 * few domains finished, or once all did.
 */
export function pace(done: number, total: number, elapsedMs: number): string {
  if (done < MIN_DONE_FOR_ETA || done >= total || elapsedMs <= 0) return '';
  const perSecond = done / (elapsedMs / 1000);
  const rate =
    perSecond >= 1 ? `${Number(perSecond.toFixed(1))}/s` : `${Number((perSecond * 60).toFixed(1))}/min`;
  return `, ${rate}, about ${duration(Math.round((total - done) / perSecond))} left`;
}

/** `3h 25m`, `4m 10s`, `35s`. */
function duration(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const secondsLeft = totalSeconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (minutes > 0) return `${minutes}m ${String(secondsLeft).padStart(2, '0')}s`;
  return `${secondsLeft}s`;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;

/**
 * `scan.getReport: HTTP 500, retry 2/5 in 1.2 s`, `scan.getStatus: request timed out after 30 s,
 * retry 1/5 in 0.4 s`, or why the client gave up, including a Retry-After it would not wait for.
 */
export function describeVendorAttempt(
  event: Extract<ProgressEvent, { type: 'vendor-retry' | 'vendor-gave-up' }>,
): string {
  const a = event.attempt;
  const what =
    a.failure === 'timeout'
      ? `request timed out after ${seconds(a.timeoutMs)}`
      : a.status !== undefined
        ? `HTTP ${a.status}`
        : `${a.errorCode ?? a.failure}`;
  if (event.type === 'vendor-retry') {
    const asked = a.retryAfterMs === undefined ? '' : ` (Retry-After ${seconds(a.retryAfterMs)})`;
    const backoff = `${seconds(event.attempt.retryInMs)}${asked}`;
    const wait =
      event.overriddenMs === undefined
        ? `in ${backoff}`
        : `in ${event.overriddenMs} ms (overridden; the backoff says ${backoff})`;
    return `${a.operation}: ${what}, retry ${a.attempt}/${a.maxAttempts - 1} ${wait}`;
  }
  if (a.retryAfterMs !== undefined && a.failure === 'throttled' && a.attempt < a.maxAttempts) {
    const then =
      a.operation === 'scan.startScan'
        ? 'StartScan hands the wait to the state machine, which waits Retry-After plus jitter in WaitForStartSlot, then starts again'
        : `the call fails and the state machine's Retry rule decides when to try again (its own interval, not Retry-After)`;
    return (
      `${a.operation}: ${what} asking to wait ${seconds(a.retryAfterMs)} (Retry-After), longer than the client ` +
      `waits inside one invocation; ${then}: docs/local-runs.md "Retry-After"`
    );
  }
  const injected = event.injectedBecause ? ` (injected on purpose: ${event.injectedBecause})` : '';
  return `${a.operation}: ${what} on attempt ${a.attempt}/${a.maxAttempts}; the client gives up${injected}`;
}

/** How often a wait that goes on says it still waits (as compact mode's status line into a pipe). */
export const STILL_WAITING_EVERY_MS = PROGRESS_INTERVAL_MS;

/** What a command says while it waits on something it cannot show progress of (a vendor answer). */
export interface WaitNotices {
  /**
   * A wait for `what` begins, said of `who` when given (`createSecret: waiting for …`); the same
   * wait as the one under way goes on with it (one probe of many), another ends that one.
   */
  waitingFor(what: string, who?: string): void;
  /** The wait is over: nothing more is said of it. */
  done(): void;
}

export interface WaitNoticeOptions {
  /** @default QUIET_WAIT_MS: a wait shorter than this says nothing */
  readonly quietMs?: number;
  /** @default STILL_WAITING_EVERY_MS */
  readonly everyMs?: number;
}

/**
 * Says what a wait is for once it has lasted `quietMs` (`  waiting for the vendor's answer to the
 * rotate`), then `  still waiting for … (12s)` every `everyMs` until it is done: a short wait adds
 * no line, a long one is never silent. The timers never keep the process alive.
 */
export function createWaitNotices(
  out: Pick<NodeWritable, 'write'>,
  options: WaitNoticeOptions = {},
): WaitNotices {
  const quietMs = options.quietMs ?? QUIET_WAIT_MS;
  const everyMs = options.everyMs ?? STILL_WAITING_EVERY_MS;
  let current: { wait: string; timer: NodeJS.Timeout } | undefined;
  const done = () => {
    if (current) clearTimeout(current.timer);
    current = undefined;
  };
  const after = (ms: number, say: () => void) => {
    const timer = setTimeout(say, ms);
    timer.unref();
    return timer;
  };
  return {
    waitingFor(what, who) {
      const head = who === undefined ? '  ' : terminal`  ${who}: `;
      const wait = `${head}${what}`;
      if (current?.wait === wait) return;
      done();
      const since = performance.now();
      const stillWaiting = () => {
        const seconds = Math.round((performance.now() - since) / 1000);
        writeTerminal(out, terminal`${head}still waiting for ${what} (${seconds}s)\n`);
        if (current) current.timer = after(everyMs, stillWaiting);
      };
      current = {
        wait,
        timer: after(quietMs, () => {
          writeTerminal(out, terminal`${head}waiting for ${what}\n`);
          if (current) current.timer = after(everyMs, stillWaiting);
        }),
      };
    },
    done,
  };
}
