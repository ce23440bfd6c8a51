/**
 * Scans of one list in flight at once (`scan.maxConcurrency`, the local runner's `--concurrency`).
 * The largest is what a Distributed Map runs at once: 10,000 child executions
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html). No imports:
 * the CLI checks its flags with it before it loads anything else.
 */
export const SCAN_CONCURRENCY_BOUNDS = { min: 1, max: 10_000, integer: true } as const;
