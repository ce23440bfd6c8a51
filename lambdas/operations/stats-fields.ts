/**
 * Where the vendor's `GET /stats` keeps its counts of finished and failed scans, as one schema: the
 * configuration (`scan.reconciliation.statsFields`) is checked with it at synth, and the statistics
 * job checks its `VENDOR_STATS_FIELDS` variable with it at cold start. The answer's shape is not
 * shown by the vendor: each path left out is found by the status words of the vocabulary.
 */
import * as z from 'zod/mini';
import { dotPath, parseJsonVariable } from '#lambdas/platform/input/schema';

export const statsFieldsSchema = z.strictObject({
  /** @default the status words the vocabulary calls succeeded (e.g. `by_status.completed`) */
  finished: dotPath(),
  /** @default the status words the vocabulary calls failed */
  failed: dotPath(),
});

export type StatsFields = z.output<typeof statsFieldsSchema>;

/** The paths from the variable's JSON; unset means none configured. A problem names the variable and field. */
export function parseStatsFields(json: string | undefined, variable: string): StatsFields {
  return json === undefined ? {} : parseJsonVariable(json, variable, statsFieldsSchema);
}
