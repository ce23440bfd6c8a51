/** The `alarms` section: the thresholds of the alarms on the pipeline's own metrics. */
import * as z from 'zod/mini';
import { boundedNumber, section } from '#lambdas/platform/input/schema';

export const alarmsSchema = section({
  /** Failed or timed-out scans per started scan, in an hour, that alarm (ScanFailureRate). @default 0.25 */
  scanFailureRate: z._default(boundedNumber({ min: 0.01, max: 1 }), 0.25),
  /** Started scans in the hour below which the rate is not judged. @default 5 */
  minScansForRate: z._default(boundedNumber({ min: 1, max: 10_000, integer: true }), 5),
  /**
   * The window, in days, of NoSuccessfulScan, NothingStored and NoScanStarted while schedules are
   * enabled: one period of this many days, and CloudWatch allows at most 7. @default 2
   */
  quietDays: z._default(boundedNumber({ min: 1, max: 7, integer: true }), 2),
  /** Throttled vendor retries per 5 minutes that, for 15 minutes, alarm. @default 20 */
  throttledRetriesPerFiveMinutes: z._default(boundedNumber({ min: 1, max: 100_000, integer: true }), 20),
});

export type AlarmsConfig = z.output<typeof alarmsSchema>;
