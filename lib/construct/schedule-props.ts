/**
 * What every EventBridge Scheduler schedule of `SecurityPipeline` has, whatever it starts (a
 * domain-list run, a watchlist run): one interface the two kinds of schedule props extend.
 */
import type { Duration } from 'aws-cdk-lib';
import type { Schedule } from 'aws-cdk-lib/aws-events';

/** What every EventBridge Scheduler schedule of the pipeline has, whatever it starts. */
export interface PipelineScheduleProps {
  /** Unique name, `[A-Za-z0-9_-]{1,64}`; appears in the run's input and its S3 results path. */
  readonly name: string;
  /** When it fires: `Schedule.cron(…)`, `Schedule.rate(…)` or `Schedule.expression('at(yyyy-mm-ddThh:mm:ss)')`. */
  readonly schedule: Schedule;
  /**
   * IANA time zone the schedule is evaluated in.
   * @default 'UTC'
   */
  readonly timeZone?: string;
  /**
   * Scheduler's flexible time window, whole minutes up to 1 day; `Duration.minutes(0)` turns it off.
   * @default Duration.minutes(15)
   */
  readonly flexibleWindow?: Duration;
  /**
   * Retries of a failed start before the fire goes to the dead-letter queue, 0 to 185.
   * @default 3
   */
  readonly maxRetryAttempts?: number;
  /**
   * Give up on an undelivered fire after this long, whole seconds from 1 minute to 1 day.
   * @default Duration.hours(1)
   */
  readonly maxEventAge?: Duration;
  /**
   * A disabled schedule is deployed but does not fire.
   * @default true
   */
  readonly enabled?: boolean;
}
