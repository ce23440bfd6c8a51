/**
 * "A run finished" events for what comes after a domain list or a watchlist: counts and where the
 * summary is, never a domain's findings, a name or an email. EventBridge in AWS (the stack routes
 * them to the run notifications topic); nothing locally unless a publisher is given.
 *
 * The summary is already written when the event goes out, and it is the record: a failed publish
 * is logged and never fails the run. Each workflow names its own events (its `RunEventName`, in its
 * contracts.ts): the run notifications rule matches their detail types.
 */
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

/** EventBridge `source` of every run event. */
export const RUN_EVENT_SOURCE = 'security-pipeline.runs';

/** How a workflow's run-finished events are named. */
export interface RunEventName {
  /** The detail's `kind`, e.g. `watchlist`. */
  readonly kind: string;
  /** The EventBridge `detail-type`, e.g. `WatchlistRunFinished`. */
  readonly detailType: string;
}

export interface RunFinishedDetail {
  /** Which workflow's run: its `RunEventName.kind`. */
  readonly kind: string;
  readonly runId: string;
  /** What started it: `upload`, `schedule` or `adhoc`. */
  readonly trigger: string;
  /** The summary's counts (numbers only). */
  readonly counts: Readonly<Record<string, number>>;
  /** `s3://<bucket>/<key>` of summary.json. */
  readonly summary: string;
  readonly finishedAt: string;
  /** Why the whole list was refused, when it was. */
  readonly refused: string | null;
}

export interface RunEventPublisher {
  runFinished(detail: RunFinishedDetail): Promise<void>;
}

/** Publishes the event when there is a publisher; logs, never throws, when publishing fails. */
export async function announceRunFinished(
  deps: { readonly events?: RunEventPublisher; readonly logger: VendorLogger },
  detail: RunFinishedDetail,
): Promise<void> {
  if (deps.events === undefined) return;
  try {
    await deps.events.runFinished(detail);
  } catch (error) {
    deps.logger.warn('run-finished event not published; the summary is written', {
      runId: detail.runId,
      kind: detail.kind,
      errorName: error instanceof Error ? error.name : 'UnknownError',
    });
  }
}
