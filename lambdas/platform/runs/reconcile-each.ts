/**
 * The reconciliation pattern both workflows share: go through what the vendor lists, one item at a
 * time, bring each into the archive the way the workflow would, and keep a record of the run.
 *
 * - One at a time, or as many at once as the caller says (`concurrency`, bounded): a backlog must
 *   not turn into a burst the vendor throttles.
 * - An error that belongs to one item (the vendor refusing it, a corrupt output, bad input) is
 *   recorded and the run goes on; anything else (S3 down, a bug) stops the run, and the next
 *   scheduled run, idempotent, catches up.
 * - A budget bounds each run: so many items worked on, and never one started with less time left in
 *   the invocation than one may need. What is left is deferred; the next run, idempotent, goes on.
 * - The record is written under `<folder><yyyy>/<mm>/<dd>/<time>.json`, the folder the caller's
 *   (e.g. `scans/reconciliation/`), never over an earlier one, and names items only by what the
 *   caller says is safe (a folder, a scan id).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { ArchiveVerificationError, VendorError } from '#lambdas/platform/errors';
import { cleanMessage, cleanName } from '#lambdas/platform/redaction/caught';
import { mapBounded } from '#lambdas/platform/runs/bounded';
import { putJson } from '#lambdas/platform/s3/json-objects';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

export interface ItemFailure {
  readonly item: string;
  readonly error: { readonly name: string; readonly message: string };
}

/**
 * Time an archive may need (a streamed download or three, a verification, a manifest); with less
 * left in the invocation, no new archive starts and the rest are deferred to the next run.
 */
export const ARCHIVE_TIME_RESERVE_MS = 5 * 60_000;

/**
 * Whether the invocation is inside its time reserve: less than `reserveMs` left, so no further
 * request per item may start (the next run, idempotent, finds the rest again by listing).
 * Unlimited when the caller knows no clock.
 */
export function timeReserveReached(
  timeLeftMs: (() => number) | undefined,
  reserveMs: number = ARCHIVE_TIME_RESERVE_MS,
): boolean {
  return timeLeftMs !== undefined && timeLeftMs() < reserveMs;
}

export interface RunBudget {
  /** Items worked on per run (an archive started counts, whether it succeeds or fails). */
  readonly maxPerRun: number;
  /** Milliseconds left in the invocation (Lambda's context). @default unlimited */
  readonly timeLeftMs?: () => number;
  /** No item starts with less time left than this. @default ARCHIVE_TIME_RESERVE_MS */
  readonly reserveMs?: number;
}

/** The run's budget as one item sees it. */
export interface BudgetGate {
  /** True once no further item may start: the count is spent or the time reserve is reached. */
  exhausted(): boolean;
  /** Counts one item worked on. */
  spend(): void;
  /** `spend()` unless exhausted; false when the item must be deferred. */
  take(): boolean;
}

export interface ReconcileEachOptions<Item, Outcome extends string> {
  readonly items: readonly Item[];
  /** How the record names an item: never personal data. */
  readonly label: (item: Item) => string;
  /** @default unlimited */
  readonly budget?: RunBudget;
  /** Items in flight at once; the budget is taken item by item, so it holds across them. @default 1 */
  readonly concurrency?: number;
  /**
   * Brings one item into the archive (or finds it there) and says how it ended; a per-run budget
   * is an outcome too (`deferred`), decided by the caller through `gate` once it knows the item
   * needs work (finding an item archived already costs nothing).
   */
  readonly reconcileOne: (item: Item, gate: BudgetGate) => Promise<Outcome>;
}

export interface ReconcileEachResult<Outcome extends string> {
  /** The labels of the items that ended with each outcome, in list order. */
  readonly byOutcome: ReadonlyMap<Outcome, readonly string[]>;
  readonly failed: readonly ItemFailure[];
}

export async function reconcileEach<Item, Outcome extends string>(
  options: ReconcileEachOptions<Item, Outcome>,
): Promise<ReconcileEachResult<Outcome>> {
  const gate = budgetGate(options.budget);
  type Ended = { readonly outcome: Outcome } | { readonly failure: ItemFailure['error'] };
  // Each item's end is kept at its position, so the record lists items in the vendor's order
  // whatever order concurrent items finish in.
  const ended = await mapBounded(options.items, options.concurrency ?? 1, async (item): Promise<Ended> => {
    try {
      return { outcome: await options.reconcileOne(item, gate) };
    } catch (error) {
      if (!isItemError(error)) throw error;
      return {
        failure: { name: cleanName((error as Error).name), message: cleanMessage((error as Error).message) },
      };
    }
  });
  const byOutcome = new Map<Outcome, string[]>();
  const failed: ItemFailure[] = [];
  ended.forEach((end, index) => {
    const label = options.label(options.items[index] as Item);
    if ('failure' in end) {
      failed.push({ item: label, error: end.failure });
      return;
    }
    const labels = byOutcome.get(end.outcome) ?? [];
    labels.push(label);
    byOutcome.set(end.outcome, labels);
  });
  return { byOutcome, failed };
}

function budgetGate(budget: RunBudget | undefined): BudgetGate {
  let spent = 0;
  const reserveMs = budget?.reserveMs ?? ARCHIVE_TIME_RESERVE_MS;
  const gate: BudgetGate = {
    exhausted: () =>
      budget !== undefined && (spent >= budget.maxPerRun || timeReserveReached(budget.timeLeftMs, reserveMs)),
    spend: () => {
      spent += 1;
    },
    take: () => {
      if (gate.exhausted()) return false;
      gate.spend();
      return true;
    },
  };
  return gate;
}

/**
 * Errors that belong to one item: the vendor refused or garbled it, its archive failed its check,
 * or its listed fields were unusable. Everything else is the run's problem.
 */
export function isItemError(error: unknown): boolean {
  return (
    error instanceof VendorError ||
    error instanceof ArchiveVerificationError ||
    (error as { name?: unknown } | undefined)?.name === 'InvalidInputError'
  );
}

interface RecordDeps {
  readonly s3: S3Client;
  readonly settings: { readonly resultsBucket: string };
  readonly logger: VendorLogger;
}

/**
 * Writes the run's record and logs its counts (a warning when anything failed or could not be
 * read, so a log-based alarm or a human sees it). Returns the record's key.
 */
export async function writeRunRecord(
  deps: RecordDeps,
  options: {
    /** The folder the run records go in, e.g. `breach/reconciliation/`. */
    readonly folder: `${string}/`;
    readonly startedAt: Date;
    readonly record: object;
    /** What the log line carries: counts only. */
    readonly counts: Readonly<Record<string, number>>;
    readonly what: string;
  },
): Promise<string> {
  const stamp = options.startedAt.toISOString();
  const recordKey = `${options.folder}${stamp.slice(0, 10).replace(/-/g, '/')}/${stamp.replace(/[:.]/g, '-')}.json`;
  await putJson(deps, recordKey, options.record, 2);
  const troubled = (options.counts.failed ?? 0) > 0 || (options.counts.unreadable ?? 0) > 0;
  deps.logger[troubled ? 'warn' : 'info'](`${options.what} finished`, { recordKey, ...options.counts });
  return recordKey;
}

/** The labels of one outcome, or none. */
export function labelsOf<Outcome extends string>(
  result: ReconcileEachResult<Outcome>,
  outcome: Outcome,
): readonly string[] {
  return result.byOutcome.get(outcome) ?? [];
}
