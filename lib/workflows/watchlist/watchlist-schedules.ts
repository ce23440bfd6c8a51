/**
 * The breach schedules as the platform's ScheduledRuns takes them: each names its watchlist object
 * in the input bucket, and its own name labels it.
 */
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ScheduledRun, ScheduleTiming } from '../../platform/scheduled-runs.ts';

/** What a watchlist schedule fire starts (descriptions and the dead-letter queue's purpose). */
export const WATCHLIST_RUNS = 'breach reports for watchlist';

export function watchlistSchedules(
  schedules: readonly (ScheduleTiming & { readonly watchlistKey: string })[],
  inputBucket: IBucket,
): ScheduledRun[] {
  return schedules.map(({ watchlistKey, ...timing }) => ({
    ...timing,
    input: { bucket: inputBucket.bucketName, key: watchlistKey },
    inputLabel: timing.name,
  }));
}
