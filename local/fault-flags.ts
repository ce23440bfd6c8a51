/**
 * `--fault` of `scan`, the demo and `breach`: a simulator fault by name, so a hostile vendor's
 * case can be shown with one flag (`npm start -- breach --fault key-echo=report-name`). `rotate`
 * has its own (`rotate-answer=<shape>`, local/rotate-command.ts).
 */
import { UsageError } from './cli-checks.ts';
import type { FaultRule } from './simulator/types.ts';

/**
 * The `key-echo` cases (local/simulator/key-echo.ts), each as the rule the simulator is given: every
 * matching request of the run gets it.
 */
const KEY_ECHO_RULES = {
  /** Every status answer echoes the request's `Authorization` header, and the bare key. */
  status: {
    api: 'scan',
    method: 'GET',
    path: '/status/',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo' },
  },
  /** Every recon answer echoes the request's `x-api-key` header, and the bare key. */
  recon: {
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo' },
  },
  /** Every recon makes a report named after the key (`rpt-<key>-<hex>`). */
  'report-name': {
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo', into: 'report-name' },
  },
} as const satisfies Record<string, FaultRule>;

export type KeyEchoCase = keyof typeof KEY_ECHO_RULES;

/** The cases each command's `--fault` takes: the vendor texts that command reads. */
export const FAULTS_OF = {
  scan: ['status'],
  breach: ['recon', 'report-name'],
} as const satisfies Record<string, readonly KeyEchoCase[]>;

/** The `--fault` help text for `cases`. */
export function faultFlagHelp(cases: readonly KeyEchoCase[]): string {
  return `simulator only: ${cases.map((c) => `key-echo=${c}`).join(' or ')} (a vendor that echoes the key it is sent)`;
}

/** The rules `--fault <spec>` stands for; a UsageError naming the cases `cases` takes otherwise. */
export function faultRulesOf(spec: string | undefined, cases: readonly KeyEchoCase[]): FaultRule[] {
  if (spec === undefined) return [];
  const wanted = /^key-echo=(.*)$/.exec(spec.trim())?.[1];
  const known = cases.find((c) => c === wanted);
  if (known === undefined) {
    throw new UsageError(`--fault ${spec}: expected ${cases.map((c) => `key-echo=${c}`).join(' or ')}`);
  }
  return [KEY_ECHO_RULES[known]];
}
