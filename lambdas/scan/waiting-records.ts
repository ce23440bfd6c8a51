/**
 * The waiting records of ScanDomain's `WaitForScan` and the early-end watcher's markers beside them,
 * as keys: what the state machine's definition, the watcher and the local runner all name. No
 * client here, so the constructs can import it.
 */

/** Where waiting records live in the results bucket. */
export const WAITING_PREFIX = 'scans/waiting/';

/** What the every-minute rule sends the poll function to run the watcher instead of a poll. */
export const EARLY_END_TICK = Object.freeze({ task: 'watch-early-ends' });

/** Whether `event` is the watcher's tick (no ScanInProgress has a `task`). */
export function isEarlyEndTick(event: unknown): boolean {
  return (
    event !== null && typeof event === 'object' && (event as { task?: unknown }).task === EARLY_END_TICK.task
  );
}

/** A waiting record (the callback task's) or a check marker (the watcher's), read from its key. */
export type WaitingKey =
  | {
      readonly kind: 'wait';
      readonly key: string;
      readonly scanUuid: string;
      readonly startedAt: string;
      readonly attempt: number;
      readonly waitSeconds: number;
    }
  | {
      readonly kind: 'checked';
      readonly key: string;
      readonly scanUuid: string;
      readonly startedAt: string;
      readonly ageSeconds: number;
    };

const WAITING_KEY =
  /^scans\/waiting\/([0-9A-Za-z-]{1,64})\/([0-9T:.Z-]{1,40})\/(?:wait-(\d+)-(\d+)|checked-(\d+))$/;

/** The key's parts, or undefined for a key this module never writes. */
export function parseWaitingKey(key: string): WaitingKey | undefined {
  const match = WAITING_KEY.exec(key);
  if (!match) return undefined;
  const [, scanUuid = '', startedAt = '', attempt, waitSeconds, checked] = match;
  if (Number.isNaN(Date.parse(startedAt))) return undefined;
  return checked === undefined
    ? { kind: 'wait', key, scanUuid, startedAt, attempt: Number(attempt), waitSeconds: Number(waitSeconds) }
    : { kind: 'checked', key, scanUuid, startedAt, ageSeconds: Number(checked) / 1000 };
}

/** The key the callback task writes (its States.Format in the definition builds the same). */
export function waitingRecordKey(scanUuid: string, startedAt: string, attempt: number, waitSeconds: number) {
  return `${WAITING_PREFIX}${scanUuid}/${startedAt}/wait-${attempt}-${waitSeconds}`;
}

export function checkMarkerKey(scanUuid: string, startedAt: string, ageSeconds: number): string {
  return `${WAITING_PREFIX}${scanUuid}/${startedAt}/checked-${Math.floor(ageSeconds * 1000)}`;
}
