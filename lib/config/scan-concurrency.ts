/**
 * Scans of one list in flight at once (`scan.maxConcurrency`, the local runner's `--concurrency`).
 * The largest is what a Distributed Map runs at once: 10,000 child executions
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html). No imports:
 * the CLI checks its flags with it before it loads anything else.
 */
export const SCAN_CONCURRENCY_BOUNDS = { min: 1, max: 10_000, integer: true } as const;

/**
 * The deployed default of `scan.maxConcurrency`, chosen from `npm run bench -- cost` and
 * `npm run bench -- scale`: the smallest of the concurrencies they show (10, 1,000, 2,500, 5,000,
 * 10,000) at which a 100,000-domain list of learned 30-minute scans finishes within a day with a
 * tenth of it spare (about 21 h). A vendor that allows fewer scans at once answers 429, which each
 * start waits out (Retry-After plus jitter, bounded); set the vendor's own limit when it is known.
 */
export const DEFAULT_SCAN_CONCURRENCY = 2_500;

/**
 * The local runner's default: every execution of a list runs in one process on one machine, so it
 * takes the lower of `scan.maxConcurrency` and this unless `--concurrency` says otherwise.
 */
export const LOCAL_SCAN_CONCURRENCY = 50;
