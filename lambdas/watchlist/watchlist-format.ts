/**
 * What makes an object a watchlist and the limits it is held to: plain data with the variables as
 * its only import, so that the configuration schema and the constructs take them without bundling
 * the watchlist parser (csv-parse) or any AWS client.
 */
import { WATCHLIST_VARIABLES } from '#lambdas/watchlist/variables';

export type WatchlistFormat = 'csv' | 'json';

/** Key suffixes of watchlists (matched case-insensitively). */
export const WATCHLIST_SUFFIXES: readonly string[] = ['.csv', '.json'];

/** People per watchlist unless configured otherwise: each is a child execution and a recon. */
export const DEFAULT_MAX_WATCHLIST_ROWS = 10_000;
/** A watchlist object larger than this is refused before it is read. */
export const DEFAULT_MAX_WATCHLIST_BYTES = 5 * 1024 * 1024;

/** The watchlist limits: their variables, the bounds synth and the handlers hold them to, defaults. */
export const WATCHLIST_LIMITS = {
  maxBytes: {
    variable: WATCHLIST_VARIABLES.maxBytes,
    bounds: { min: 1024, max: 100 * 1024 * 1024, integer: true },
    default: DEFAULT_MAX_WATCHLIST_BYTES,
  },
  maxRows: {
    variable: WATCHLIST_VARIABLES.maxRows,
    bounds: { min: 1, max: 100_000, integer: true },
    default: DEFAULT_MAX_WATCHLIST_ROWS,
  },
} as const;

/** The format a key's suffix names; anything else is not a watchlist. */
export function watchlistFormatOf(key: string): WatchlistFormat | undefined {
  const lower = key.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  return undefined;
}
