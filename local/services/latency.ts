/**
 * An injected per-request latency for the local stand-ins (the embedded S3, the vendor simulator):
 * loopback answers in about a millisecond, S3 from a Lambda function in 10-30 ms, so a step that is
 * fast here can still outlive its timeout in AWS. The bench and `npm start --s3-latency 25ms` run at
 * a realistic latency; the tests keep loopback speed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Command, InvalidArgumentError } from 'commander';

export interface Latency {
  /** Added to every request. */
  readonly meanMs: number;
  /** Each request's delay is uniform in mean ± jitter (never below zero). @default 0 */
  readonly jitterMs?: number;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s)?$/;

function durationMs(text: string, what: string): number {
  const match = DURATION.exec(text.trim());
  if (!match)
    throw new Error(`${what} must be a duration such as 25ms or 0.03s (got ${JSON.stringify(text)})`);
  const value = Number(match[1]) * (match[2] === 's' ? 1000 : 1);
  if (value > 10_000) throw new Error(`${what} must be at most 10s (got ${text})`);
  return value;
}

/** `25ms`, `0.025s`, or a jitter after a comma: `25ms,10ms`. `flag` names the setting in errors. */
export function parseLatency(text: string, flag: string): Latency {
  const [mean = '', jitter, extra] = text.split(',');
  if (extra !== undefined) throw new Error(`${flag} takes a latency and at most one jitter, e.g. 25ms,10ms`);
  const meanMs = durationMs(mean, flag);
  const jitterMs = jitter === undefined ? 0 : durationMs(jitter, `${flag}'s jitter`);
  if (jitterMs > meanMs)
    throw new Error(`${flag}'s jitter (${jitterMs} ms) must not exceed its latency (${meanMs} ms)`);
  return { meanMs, jitterMs };
}

/** One request's delay. */
export function delayOf(latency: Latency, random: () => number = Math.random): number {
  const jitter = latency.jitterMs ?? 0;
  return Math.max(0, latency.meanMs + (random() * 2 - 1) * jitter);
}

const defaults: { s3?: Latency; vendor?: Latency } = {};

/**
 * The latency the stand-ins a local run starts get when they are given none: set once by
 * `npm start --s3-latency/--vendor-latency`, so the flags need no plumbing through every command.
 * Tests never set it, and keep loopback speed.
 */
export function setDefaultLatency(kind: 's3' | 'vendor', latency: Latency | undefined): void {
  defaults[kind] = latency;
}

export function defaultLatency(kind: 's3' | 'vendor'): Latency | undefined {
  return defaults[kind];
}

/** Waits one request's delay (nothing at zero latency). */
export async function injectLatency(latency: Latency | undefined): Promise<void> {
  if (latency === undefined || latency.meanMs <= 0) return;
  await sleep(delayOf(latency));
}

/**
 * `--s3-latency` and `--vendor-latency` on every command: each request to the embedded S3 or the
 * vendor simulator waits that long (e.g. `--s3-latency 25ms`, or `25ms,10ms` with jitter).
 */
export function addLatencyFlags(program: Command): Command {
  const flag = (name: string) => (value: string) => {
    try {
      return parseLatency(value, name);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };
  return program
    .option(
      '--s3-latency <duration>',
      'added to every embedded-S3 request, e.g. 25ms or 25ms,10ms (jitter)',
      flag('--s3-latency'),
    )
    .option(
      '--vendor-latency <duration>',
      'added to every vendor-simulator answer, e.g. 80ms',
      flag('--vendor-latency'),
    )
    .hook('preAction', (command) => {
      const options = command.opts<{ s3Latency?: Latency; vendorLatency?: Latency }>();
      setDefaultLatency('s3', options.s3Latency);
      setDefaultLatency('vendor', options.vendorLatency);
    });
}
