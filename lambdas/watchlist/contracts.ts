/**
 * What starts a watchlist run, as a zod/mini schema: the intake checks a schedule fire against it
 * and PrepareWatchlist parses its input with it, so an error names the field (`source.key`).
 */
import * as z from 'zod/mini';
import type { RunEventName } from '#lambdas/platform/runs/run-events';

/**
 * The event WriteWatchlistSummary puts when a watchlist run finished
 * (lambdas/platform/runs/run-events.ts): the operations workflow's run notifications rule matches its
 * detail type.
 */
export const WATCHLIST_RUN_FINISHED = {
  kind: 'watchlist',
  detailType: 'WatchlistRunFinished',
} as const satisfies RunEventName;

const text = () =>
  z
    .string({ error: 'must be a non-empty string' })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));

/** What started a watchlist run: an upload, or a schedule fire naming a watchlist object. */
export const watchlistSourceSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('s3'),
    bucket: text(),
    key: text(),
    versionId: z.optional(text()),
    etag: z.optional(text()),
  }),
  z.object({
    type: z.literal('schedule'),
    scheduleName: text(),
    scheduledTime: text(),
    bucket: text(),
    key: text(),
  }),
]);
export type WatchlistSource = z.infer<typeof watchlistSourceSchema>;

/** Input of the watchlist state machine. */
export const watchlistInputSchema = z.object({ source: watchlistSourceSchema });
