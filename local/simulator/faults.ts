/**
 * Scriptable faults. Rules are checked in insertion order; the first rule that matches a request
 * spends one of its uses and its fault applies to that request alone.
 */
import { createHash } from 'node:crypto';
import { REDIRECT_TARGETS } from './adversarial.ts';
import { KEY_ECHO_TARGETS, validateHeaders } from './key-echo.ts';
import { isRotateAnswerShape, ROTATE_ANSWER_SHAPES } from './rotate-answers.ts';
import type { Fault, FaultRule, SimulatedApi } from './types.ts';

export interface FaultTarget {
  /** Undefined for paths that belong to no API (unknown routes). */
  readonly api: SimulatedApi | undefined;
  readonly method: string;
  /** Raw request path without the query. */
  readonly path: string;
  /**
   * What the request is about, the same in every run whatever the arrival order (e.g. the status
   * poll of a domain's first scan). With it, `probability` rules draw from a hash of the seed, the
   * rule, the subject and how many requests of that subject came before: a concurrent run's faults
   * then strike the same requests every time. Without it they draw from one stream in arrival order.
   */
  readonly subject?: string;
}

interface ActiveRule {
  readonly rule: FaultRule;
  /** The rule's place in the order rules were added: part of its keyed draws. */
  readonly number: number;
  remaining: number;
}

/** Faults that answer for the route before authentication and handling (or, `phase: 'after'`, in place of its answer). */
export type PreemptiveFault = Extract<Fault, { type: 'status' | 'latency' | 'hang' | 'refuse' }>;
/** Faults that shape the real response after the request was processed. */
export type ShapingFault = Exclude<
  Fault,
  PreemptiveFault | { type: 'rotate-answer' | 'key-echo' | 'headers' }
>;

export function isPreemptive(fault: Fault): fault is PreemptiveFault {
  return (
    fault.type === 'status' || fault.type === 'latency' || fault.type === 'hang' || fault.type === 'refuse'
  );
}

/** A status or hang fault that lets the request be handled first and takes only its answer. */
export function strikesAfter(fault: Fault | undefined): boolean {
  return (fault?.type === 'status' || fault?.type === 'hang') && fault.phase === 'after';
}

function validatePhase(fault: { readonly type: string; readonly phase?: unknown }): void {
  if (fault.phase !== undefined && fault.phase !== 'before' && fault.phase !== 'after') {
    throw new TypeError(
      `${fault.type} fault phase must be 'before' or 'after'; got ${JSON.stringify(fault.phase)}`,
    );
  }
}
/** One use of a rule: the operation it hit, so a fault spent where nobody looked can be found. */
export interface SpentFault {
  /** `GET /stats`: the request's method and path (without the query). */
  readonly operation: string;
  readonly api: SimulatedApi | null;
  readonly fault: Fault;
  /** When it was spent (ISO). */
  readonly at: string;
  /** Why npm start injected it, when it did (FaultRule.injectedBecause). */
  readonly injectedBecause?: string;
}

/** Spent uses kept for GET /__simulator/faults; the oldest are dropped beyond this. */
const SPENT_KEPT = 1_000;

export class FaultBook {
  private rules: ActiveRule[] = [];
  private spentUses: SpentFault[] = [];

  /** Every use spent so far (the last SPENT_KEPT), oldest first. */
  spent(): readonly SpentFault[] {
    return this.spentUses;
  }

  /** Draws for requests without a subject, in arrival order. */
  private readonly random: () => number;
  private added = 0;
  private readonly seen = new Map<string, number>();

  /** `seed` decides which requests `probability` rules strike, so a soak repeats. */
  constructor(private readonly seed = 1) {
    this.random = seededRandom(seed);
  }

  add(rule: FaultRule): () => void {
    validateFaultRule(rule);
    const active: ActiveRule = { rule, number: this.added++, remaining: rule.times ?? 1 };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  clear(): void {
    this.rules = [];
  }

  /**
   * The rules still active, in the order they are matched, each with its remaining uses, as JSON
   * the control plane accepts back (a RegExp path becomes `{ "regex", "flags" }`).
   */
  list(): Record<string, unknown>[] {
    return this.rules.map(({ rule, remaining }) => ({
      ...(rule.api === undefined ? {} : { api: rule.api }),
      ...(rule.method === undefined ? {} : { method: rule.method }),
      ...(rule.path === undefined
        ? {}
        : {
            path:
              typeof rule.path === 'string' ? rule.path : { regex: rule.path.source, flags: rule.path.flags },
          }),
      ...(rule.probability === undefined ? {} : { probability: rule.probability }),
      remaining: Number.isFinite(remaining) ? remaining : 'unlimited',
      fault: rule.fault,
    }));
  }

  /** Finds the first matching rule, spends one use of it and returns its fault. */
  take(target: FaultTarget): Fault | undefined {
    const occurrence = target.subject === undefined ? 0 : (this.seen.get(target.subject) ?? 0);
    if (target.subject !== undefined) this.seen.set(target.subject, occurrence + 1);
    const draw = (rule: ActiveRule): number =>
      target.subject === undefined
        ? this.random()
        : keyedDraw(`${this.seed}\0${rule.number}\0${target.subject}\0${occurrence}`);
    const index = this.rules.findIndex(
      (r) => matches(r.rule, target) && (r.rule.probability === undefined || draw(r) < r.rule.probability),
    );
    const active = this.rules[index];
    if (!active) return undefined;
    active.remaining -= 1;
    if (active.remaining <= 0) this.rules.splice(index, 1);
    this.spentUses.push({
      operation: `${target.method} ${target.path}`,
      api: target.api ?? null,
      fault: active.rule.fault,
      at: new Date().toISOString(),
      ...(active.rule.injectedBecause === undefined ? {} : { injectedBecause: active.rule.injectedBecause }),
    });
    if (this.spentUses.length > SPENT_KEPT) this.spentUses.shift();
    return active.rule.fault;
  }
}

/** The one request a `rotate-answer` fault can shape. */
const ROTATE_PATH = /^\/orgs\/[^/]+\/api\/key\/rotate$/;
/** The one request a `key-echo` fault `into: 'report-name'` can shape: it names the report. */
const RECON_PATH = /^\/recon\/?$/;

function matches(rule: FaultRule, target: FaultTarget): boolean {
  if (rule.fault.type === 'rotate-answer' && !(target.method === 'POST' && ROTATE_PATH.test(target.path)))
    return false;
  if (
    rule.fault.type === 'key-echo' &&
    rule.fault.into === 'report-name' &&
    !(target.method === 'POST' && RECON_PATH.test(target.path))
  )
    return false;
  if (rule.api !== undefined && rule.api !== target.api) return false;
  if (rule.method !== undefined && rule.method.toUpperCase() !== target.method) return false;
  if (rule.path === undefined) return true;
  if (typeof rule.path === 'string') return target.path.startsWith(rule.path);
  // A global or sticky RegExp remembers where it stopped; every request must start afresh.
  rule.path.lastIndex = 0;
  return rule.path.test(target.path);
}

const APIS: readonly SimulatedApi[] = ['scan', 'keys', 'breach', 'storage'];

function nonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * The answer of the next scan start lost after the vendor made the scan (the fault behind settled
 * starts and orphans), with why it is injected, for the lines that report it.
 */
export function lostStartAnswer(injectedBecause: string): FaultRule {
  return { api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' }, injectedBecause };
}

/** Throws a TypeError that names the offending field. */
export function validateFaultRule(rule: FaultRule): void {
  if (rule.api !== undefined && !APIS.includes(rule.api)) {
    throw new TypeError(`fault rule api must be one of ${APIS.join(', ')}; got ${String(rule.api)}`);
  }
  if (rule.method !== undefined && (typeof rule.method !== 'string' || rule.method === '')) {
    throw new TypeError('fault rule method must be a non-empty string');
  }
  if (rule.path !== undefined && typeof rule.path !== 'string' && !(rule.path instanceof RegExp)) {
    throw new TypeError('fault rule path must be a string prefix or a RegExp');
  }
  if (
    rule.times !== undefined &&
    !(rule.times === Number.POSITIVE_INFINITY || (nonNegativeInteger(rule.times) && rule.times > 0))
  ) {
    throw new TypeError(`fault rule times must be a positive integer; got ${String(rule.times)}`);
  }
  if (
    rule.probability !== undefined &&
    !(typeof rule.probability === 'number' && rule.probability > 0 && rule.probability <= 1)
  ) {
    throw new TypeError(`fault rule probability must be a number in (0, 1]; got ${String(rule.probability)}`);
  }
  validateFault(rule.fault);
}

/** A uniform number in [0, 1) that is a function of `key` alone: 48 bits of its SHA-256. */
function keyedDraw(key: string): number {
  return createHash('sha256').update(key).digest().readUIntBE(0, 6) / 2 ** 48;
}

/**
 * The Lehmer (Park-Miller) generator: seedable and tiny; a soak needs repeatability, not quality.
 */
export function seededRandom(seed: number): () => number {
  const modulus = 2_147_483_647;
  let state = Math.abs(Math.trunc(seed)) % modulus || 1;
  return () => {
    state = (state * 48_271) % modulus;
    return (state - 1) / (modulus - 1);
  };
}

function validateFault(fault: Fault): void {
  switch (fault?.type) {
    case 'status':
      if (!Number.isInteger(fault.status) || fault.status < 200 || fault.status > 599) {
        throw new TypeError(`status fault needs an HTTP status 200-599; got ${String(fault.status)}`);
      }
      if (
        fault.retryAfter !== undefined &&
        typeof fault.retryAfter !== 'string' &&
        !nonNegativeInteger(fault.retryAfter)
      ) {
        throw new TypeError('status fault retryAfter must be whole seconds or an HTTP date string');
      }
      if (fault.body !== undefined && typeof fault.body !== 'string') {
        throw new TypeError('status fault body must be a string');
      }
      if (fault.bodyBase64 !== undefined) {
        if (typeof fault.bodyBase64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(fault.bodyBase64)) {
          throw new TypeError('status fault bodyBase64 must be a base64 string');
        }
        if (fault.body !== undefined) throw new TypeError('status fault takes body or bodyBase64, not both');
      }
      if (fault.echoRequest !== undefined && typeof fault.echoRequest !== 'boolean') {
        throw new TypeError('status fault echoRequest must be true or false');
      }
      if (fault.echoRequest && (fault.body !== undefined || fault.bodyBase64 !== undefined)) {
        throw new TypeError('status fault takes echoRequest or a body, not both');
      }
      if (
        fault.contentType !== undefined &&
        (typeof fault.contentType !== 'string' || fault.contentType === '')
      ) {
        throw new TypeError('status fault contentType must be a non-empty string');
      }
      validatePhase(fault);
      if (fault.echoRequest && fault.phase === 'after') {
        throw new TypeError('status fault echoRequest needs the unread request: not with phase after');
      }
      return;
    case 'latency':
      if (!nonNegativeInteger(fault.ms))
        throw new TypeError('latency fault ms must be a non-negative integer');
      return;
    case 'reset-mid-body':
    case 'truncate':
      if (!nonNegativeInteger(fault.afterBytes)) {
        throw new TypeError(`${fault.type} fault afterBytes must be a non-negative integer`);
      }
      return;
    case 'unframed':
      if (fault.afterBytes !== undefined && !nonNegativeInteger(fault.afterBytes)) {
        throw new TypeError('unframed fault afterBytes must be a non-negative integer');
      }
      if (fault.end !== undefined && fault.end !== 'close' && fault.end !== 'reset') {
        throw new TypeError(
          `unframed fault end must be 'close' or 'reset'; got ${JSON.stringify(fault.end)}`,
        );
      }
      return;
    case 'rotate-answer':
      if (!isRotateAnswerShape(fault.shape)) {
        throw new TypeError(
          `rotate-answer fault shape must be one of ${ROTATE_ANSWER_SHAPES.join(', ')}; got ${JSON.stringify(fault.shape)}`,
        );
      }
      optionalPositive(fault.decoys, 'rotate-answer fault decoys', 10_000);
      optionalPositive(fault.bytes, 'rotate-answer fault bytes', 64 * 1024 * 1024);
      for (const [field, value] of [
        ['delaySeconds', fault.delaySeconds],
        ['trickleSeconds', fault.trickleSeconds],
      ] as const) {
        if (value !== undefined && !(typeof value === 'number' && value >= 0 && value <= 3600)) {
          throw new TypeError(`rotate-answer fault ${field} must be a number of seconds from 0 to 3600`);
        }
      }
      if (fault.keyAt !== undefined && fault.keyAt !== 'start' && fault.keyAt !== 'end') {
        throw new TypeError(
          `rotate-answer fault keyAt must be 'start' or 'end'; got ${JSON.stringify(fault.keyAt)}`,
        );
      }
      return;
    case 'oversized-body':
      optionalPositive(fault.bytes, 'oversized-body fault bytes');
      if (fault.encoding !== undefined && fault.encoding !== 'gzip' && fault.encoding !== 'identity') {
        throw new TypeError(
          `oversized-body fault encoding must be 'gzip' or 'identity'; got ${JSON.stringify(fault.encoding)}`,
        );
      }
      return;
    case 'zip-bomb':
      optionalPositive(fault.inflatedBytes, 'zip-bomb fault inflatedBytes', ZIP32_MAX);
      return;
    case 'overlapping-zip':
      optionalPositive(fault.entries, 'overlapping-zip fault entries', 65_535);
      optionalPositive(fault.entryBytes, 'overlapping-zip fault entryBytes', ZIP32_MAX);
      if (fault.data !== undefined && fault.data !== 'stored' && fault.data !== 'deflate') {
        throw new TypeError(
          `overlapping-zip fault data must be 'stored' or 'deflate'; got ${JSON.stringify(fault.data)}`,
        );
      }
      return;
    case 'oversized-output':
      optionalPositive(fault.bytes, 'oversized-output fault bytes', 64 * 1024 * 1024);
      return;
    case 'key-echo':
      if (fault.into !== undefined && !(KEY_ECHO_TARGETS as readonly string[]).includes(fault.into)) {
        throw new TypeError(
          `key-echo fault into must be one of ${KEY_ECHO_TARGETS.join(', ')}; got ${JSON.stringify(fault.into)}`,
        );
      }
      return;
    case 'headers':
      validateHeaders(fault.set);
      return;
    case 'hang':
      validatePhase(fault);
      return;
    case 'trickle':
      optionalPositive(fault.intervalMs, 'trickle fault intervalMs', 600_000);
      return;
    case 'deep-json':
      optionalPositive(fault.depth, 'deep-json fault depth', 1_000_000);
      return;
    case 'redirect-internal':
      if (fault.to !== undefined && !Object.hasOwn(REDIRECT_TARGETS, fault.to)) {
        throw new TypeError(
          `redirect-internal fault to must be one of ${Object.keys(REDIRECT_TARGETS).join(', ')}; got ${JSON.stringify(fault.to)}`,
        );
      }
      return;
    case 'malformed-json':
    case 'refuse':
    case 'lose-response':
      return;
    default:
      throw new TypeError(
        `unknown fault type ${JSON.stringify((fault as { type?: unknown } | undefined)?.type)}`,
      );
  }
}

const ZIP32_MAX = 2 ** 32 - 1;

function optionalPositive(value: unknown, field: string, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (!nonNegativeInteger(value) || value < 1 || value > max) {
    throw new TypeError(`${field} must be a whole number from 1 to ${max}; got ${String(value)}`);
  }
}
