/**
 * The `scan` props of `SecurityPipeline`: how domain scans run and are reconciled. Beside props.ts,
 * which holds the rest, under the same rule (each `@default` is what the schema does when the prop
 * is left out).
 */
import type { Duration, Size } from 'aws-cdk-lib';
import type { Schedule } from 'aws-cdk-lib/aws-events';

/** The vendor's status words for each pipeline state; matched case-insensitively, each word in one state. */
export interface StatusVocabularyProps {
  /** Words meaning the scan is queued. */
  readonly pending: string[];
  /** Words meaning the scan is running. */
  readonly running: string[];
  /** Words meaning the scan finished with results. */
  readonly succeeded: string[];
  /** Words meaning the scan failed. */
  readonly failed: string[];
}

/** Dot paths into the vendor's `GET /scans` answer; each left out is searched among common names. */
export interface ScanListFieldsProps {
  /**
   * The array of scans, e.g. `data.scans`.
   * @default - scans, items, data, results or the body itself
   */
  readonly list?: string;
  /**
   * The scan's UUID, within one scan.
   * @default - uuid, scan_uuid, id
   */
  readonly uuid?: string;
  /**
   * The scanned domain, within one scan.
   * @default - domain, target, host, hostname
   */
  readonly domain?: string;
  /**
   * The scan's status word, within one scan.
   * @default - status, state, scan_status, phase
   */
  readonly status?: string;
  /**
   * When the vendor created the scan (ISO text or epoch seconds/ms), within one scan.
   * @default - created_at, createdAt, created, started_at
   */
  readonly createdAt?: string;
}

/** Dot paths into the vendor's `GET /stats` answer of its finished and failed scan counts. */
export interface ScanStatsFieldsProps {
  /**
   * The count of finished scans.
   * @default - the status words the vocabulary calls succeeded (e.g. `by_status.completed`)
   */
  readonly finished?: string;
  /**
   * The count of failed scans.
   * @default - the status words the vocabulary calls failed
   */
  readonly failed?: string;
}

/** Scheduled reconciliation of the vendor's scans with the archive, and its statistics. */
export interface ScanReconciliationProps {
  /**
   * Run scan reconciliation, and the operations workflow's job that reads the vendor's statistics.
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * When reconciliation and the statistics job run (EventBridge Scheduler).
   * @default Schedule.rate(Duration.days(1))
   */
  readonly schedule?: Schedule;
  /**
   * Scans the vendor created longer ago are ignored; whole days, 1 to 90.
   * @default - 7 days, or two days past `minAge` when that is longer
   */
  readonly horizon?: Duration;
  /**
   * A scan younger than this may still be in a workflow's hands and is left for a later run;
   * whole minutes, up to 8 days.
   * @default - the poll deadline plus 60 minutes
   */
  readonly minAge?: Duration;
  /**
   * A rejected start recorded this close to an orphan's creation is linked to it; whole minutes, 1
   * minute to 1 day.
   * @default Duration.minutes(30)
   */
  readonly matchWindow?: Duration;
  /**
   * Orphans archived per run (each is three streamed outputs); the rest wait for the next run.
   * @default 25
   */
  readonly maxArchivesPerRun?: number;
  /**
   * Where the vendor's scan list keeps each field.
   * @default - each field searched among common names
   */
  readonly listFields?: ScanListFieldsProps;
  /**
   * Where the vendor's statistics keep the finished and failed counts (read by the statistics job).
   * @default - found from the status vocabulary
   */
  readonly statsFields?: ScanStatsFieldsProps;
}

/** How domain scans run. */
export interface ScanProps {
  /**
   * Delete the scan at the vendor once its manifest is written.
   * @default false
   */
  readonly deleteAtVendorAfterManifest?: boolean;
  /**
   * The vendor's status words, replacing the handlers' built-in ones.
   * @default - the built-in vocabulary (pending/queued, running/in_progress, completed/done, failed/error …)
   */
  readonly statusVocabulary?: StatusVocabularyProps;
  /**
   * Special-use suffixes scanned anyway, e.g. `['test']` for a lab: `local`, `internal`, `invalid`,
   * `test`, `example`. `localhost` and `metadata.google.internal` are never scanned.
   * @default []
   */
  readonly allowSpecialUseDomains?: string[];
  /**
   * Domains of one list scanned at once (the Distributed Map's MaxConcurrency), 1 to 10,000. The
   * default lets a 100,000-domain list of 30-minute scans finish within a day; set the vendor's
   * limit when it allows fewer scans at once (a throttled start waits, then is rejected).
   * @default 2500
   */
  readonly maxConcurrency?: number;
  /**
   * A scan output (report, logs, debug) past this size, counted after gzip/br decoding as it
   * streams, fails its fetch and nothing is stored; 1 MiB to 5 GiB.
   * @default Size.gibibytes(1)
   */
  readonly maxOutputSize?: Size;
  /**
   * A scan output that inflates past this many decoded bytes per byte received (gzip, br), once
   * past its first MiB, fails its fetch and nothing is stored: a size cap alone lets a small
   * compressed answer fill it. 2 to 100,000.
   * @default 100
   */
  readonly maxDecodingRatio?: number;
  /**
   * Scheduled reconciliation of the vendor's scans with the archive.
   * @default - enabled, daily
   */
  readonly reconciliation?: ScanReconciliationProps;
}
