/**
 * `--fault` of `scan`, the demo and `breach`: a simulator fault by name, so a hostile vendor's
 * case can be shown with one flag (`npm start -- breach --fault key-echo=report-name`). `rotate`
 * has its own (`rotate-answer=<shape>`, local/cli/rotate-command.ts).
 */

import type { FaultRule } from '../simulator/types.ts';
import { UsageError } from './cli-checks.ts';

/**
 * The cases `--fault` takes (the `key-echo` ones of local/simulator/key-echo.ts, and the
 * hostile answers), each as the rule the simulator is given: every matching request of the run gets it.
 */
const FAULT_RULES = {
  /** Every status answer echoes the request's `Authorization` header, and the bare key. */
  'key-echo=status': {
    api: 'scan',
    method: 'GET',
    path: '/status/',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo' },
  },
  /** Every recon answer echoes the request's `x-api-key` header, and the bare key. */
  'key-echo=recon': {
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo' },
  },
  /** Every recon makes a report named after the key (`rpt-<key>-<hex>`). */
  'key-echo=report-name': {
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'key-echo', into: 'report-name' },
  },
  /** Every report download redirects to the cloud metadata service (refused: VendorDestinationRefusedError). */
  'redirect-internal': {
    api: 'scan',
    method: 'GET',
    path: '/report/',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'redirect-internal' },
  },
  /** Every breach download redirects to the cloud metadata service. */
  'redirect-internal=download': {
    api: 'breach',
    method: 'GET',
    path: '/download/',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'redirect-internal' },
  },
  /** Every recon is made, and answered with JSON nested 20,000 levels deep (VendorJsonLimitError). */
  'deep-json': {
    api: 'breach',
    method: 'POST',
    path: '/recon',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'deep-json' },
  },
} as const satisfies Record<string, FaultRule>;

export type FaultCase = keyof typeof FAULT_RULES;

/** The cases each command's `--fault` takes: the vendor answers that command reads. */
export const FAULTS_OF = {
  scan: ['key-echo=status', 'redirect-internal'],
  breach: ['key-echo=recon', 'key-echo=report-name', 'redirect-internal=download', 'deep-json'],
} as const satisfies Record<string, readonly FaultCase[]>;

/** What each kind of case makes the vendor do, for the help of the commands that take it. */
const FAULT_KINDS = [
  { kind: 'key-echo', does: 'echoes the key it is sent' },
  { kind: 'redirect-internal', does: 'redirects inside the network' },
  { kind: 'deep-json', does: 'nests its JSON 20,000 deep' },
] as const;

/** The `--fault` help text for `cases`: only what those cases do. */
export function faultFlagHelp(cases: readonly FaultCase[]): string {
  const does = FAULT_KINDS.filter(({ kind }) => cases.some((name) => name.split('=')[0] === kind)).map(
    ({ does }) => does,
  );
  const listed = does.length > 1 ? `${does.slice(0, -1).join(', ')} or ${does.at(-1)}` : (does[0] ?? '');
  return `simulator only: ${cases.join(' or ')} (a vendor that ${listed})`;
}

/** The rules `--fault <spec>` stands for; a UsageError naming the cases `cases` takes otherwise. */
export function faultRulesOf(spec: string | undefined, cases: readonly FaultCase[]): FaultRule[] {
  if (spec === undefined) return [];
  const known = cases.find((c) => c === spec.trim());
  if (known === undefined) throw new UsageError(`--fault ${spec}: expected ${cases.join(' or ')}`);
  return [FAULT_RULES[known]];
}
