/**
 * A fault scripted into the simulator is spent by the first request it matches, which may not be
 * the one the user meant (the up-front `GET /stats` check comes first). So a run against a
 * simulator says which faults it spent, and on which operation.
 */
import { isLoopbackHost } from '../../lib/config/schema.ts';
import { PREFLIGHT_OPERATIONS } from '../cli/preflight.ts';

interface SpentFault {
  readonly operation: string;
  readonly fault: { readonly type: string; readonly status?: number };
  readonly at: string;
  readonly injectedBecause?: string;
}

/**
 * `Simulator faults spent: …` for the faults spent since `since`, read from the simulator's control
 * plane; empty for a vendor that is not a loopback simulator (a real vendor is never asked).
 */
export async function spentFaultsLine(baseUrl: string, since: string): Promise<string> {
  const url = new URL(baseUrl);
  if (!isLoopbackHost(url.hostname)) return '';
  let spent: SpentFault[];
  try {
    const answer = await fetch(new URL('/__simulator/faults', url), { signal: AbortSignal.timeout(5_000) });
    if (!answer.ok) return '';
    spent = ((await answer.json()) as { spent?: SpentFault[] }).spent ?? [];
  } catch {
    return '';
  }
  const ours = spent.filter((use) => use.at >= since);
  if (ours.length === 0) return '';
  // A rule for every request (`--fault key-echo=status`) spends a use per poll: one entry per
  // fault and operation, with how often, keeps the line readable.
  const counts = new Map<string, number>();
  for (const use of ours) {
    const what = use.fault.type === 'status' ? `status ${use.fault.status}` : use.fault.type;
    const note = use.injectedBecause
      ? ` (injected on purpose: ${use.injectedBecause})`
      : PREFLIGHT_OPERATIONS.includes(use.operation)
        ? ' (the up-front check)'
        : '';
    const entry = `${what} on ${use.operation}${note}`;
    counts.set(entry, (counts.get(entry) ?? 0) + 1);
  }
  const described = [...counts].map(([entry, times]) => (times === 1 ? entry : `${entry} (${times} times)`));
  return `Simulator faults spent by this run: ${described.join(', ')}\n`;
}
