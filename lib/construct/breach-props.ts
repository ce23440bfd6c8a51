/**
 * The `breach` props of `SecurityPipeline`: how breach reports and watchlist runs go. Beside
 * props.ts, which holds the rest, for the same reasons and under the same rule (each `@default` is
 * what the schema does when the prop is left out).
 */
import type { Size } from 'aws-cdk-lib';
import type { Schedule } from 'aws-cdk-lib/aws-events';
import type { PipelineScheduleProps } from './schedule-props.ts';

/** A schedule that runs one watchlist object of the input bucket. */
export interface WatchlistScheduleProps extends PipelineScheduleProps {
  /** The watchlist (`.csv` or `.json`) in the input bucket each fire reports on. */
  readonly watchlistKey: string;
}

/** How breach reports and watchlist runs go. */
export interface BreachProps {
  /**
   * Distinct addresses one report may cover, 1 to 100 (the vendor's limit).
   * @default 50
   */
  readonly maxEmails?: number;
  /**
   * Key prefix in the input bucket under which an upload is a watchlist; ends with `/`.
   * @default 'watchlists/'
   */
  readonly watchlistPrefix?: string;
  /**
   * A watchlist larger than this is refused before it is read, with a summary saying why; 1 KiB to
   * 100 MiB.
   * @default Size.mebibytes(5)
   */
  readonly maxWatchlistSize?: Size;
  /**
   * People per watchlist, 1 to 100,000; rows beyond are accounted for as invalid.
   * @default 10000
   */
  readonly maxWatchlistRows?: number;
  /**
   * A report download is cut past this size, as it streams (after gzip/br decoding); 1 MiB to 5 GiB.
   * @default Size.mebibytes(64)
   */
  readonly maxArchiveSize?: Size;
  /**
   * A report ZIP whose entries inflate to more than this in total is refused; 1 MiB to 16 GiB.
   * @default Size.mebibytes(256)
   */
  readonly maxUncompressedSize?: Size;
  /**
   * A ZIP entry above 1 MiB that inflates more than this many times its size is refused; 2 to 2000.
   * @default 100
   */
  readonly maxCompressionRatio?: number;
  /**
   * A vendor value larger than this (UTF-8) stays in S3 and the state payload carries its
   * reference; 256 bytes to 32 KiB.
   * @default Size.bytes(1024)
   */
  readonly maxInlineValueSize?: Size;
  /**
   * People reported on at once by a watchlist run (the Distributed Map's MaxConcurrency), 1 to 100.
   * @default 5
   */
  readonly maxConcurrency?: number;
  /**
   * When reconciliation archives reports the workflow never did.
   * @default Schedule.rate(Duration.days(1))
   */
  readonly reconcileSchedule?: Schedule;
  /**
   * Report archives one reconciliation run starts (failed ones count), four at a time; the rest wait
   * for the next run. 1 to 5000.
   * @default 1000
   */
  readonly reconcileMaxArchivesPerRun?: number;
  /**
   * EventBridge Scheduler schedules that each start a watchlist run.
   * @default []
   */
  readonly schedules?: WatchlistScheduleProps[];
}
