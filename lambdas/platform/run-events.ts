/**
 * "A run finished" events for what comes after a domain list or a watchlist: counts and where the
 * summary is, never a domain's findings, a name or an email. EventBridge in AWS (the stack routes
 * them to the run notifications topic); nothing locally unless a publisher is given.
 *
 * The summary is already written when the event goes out, and it is the record: a failed publish
 * is logged and never fails the run.
 */
import type { VendorLogger } from '#lambdas/platform/vendor-api/types';

/** EventBridge `source` of every run event. */
export const RUN_EVENT_SOURCE = 'security-pipeline.runs';

export const RUN_FINISHED = {
  'domain-list': 'DomainListRunFinished',
  watchlist: 'WatchlistRunFinished',
} as const;

export type RunKind = keyof typeof RUN_FINISHED;

export interface RunFinishedDetail {
  readonly kind: RunKind;
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
