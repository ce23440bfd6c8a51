/**
 * How a watchlist run stores its people's requests: in shards, one JSON line a person, each Map
 * item naming its shard and the bytes of its line.
 */
import type { BreachReportInput } from '#lambdas/breach/contracts';
import { breachExecutionName } from '#lambdas/breach/contracts';
import type { ParsedWatchlist } from './watchlist.ts';

/** One person of the run, as the Map hands it to a child: hashes and object keys only. */
export type WatchlistItem = BreachReportInput & { readonly row: number; readonly executionName: string };

/**
 * People whose requests share one object (a shard, one JSON line each). One object per person
 * made S3 requests grow 1:1 with the watchlist: 100,000 PUTs at 25 ms each, and the SDK's CPU for
 * each, took 60% of the step's timeout. A shard of 1,000 typical people is some 70 KB; of 1,000
 * with 50 long addresses each, some 13 MB, still inside the function's memory with the watchlist.
 * Each child reads only its own line (a ranged GET), so no child ever sees another person's
 * addresses, and addresses still appear in no state payload.
 */
export const WATCHLIST_SHARD_PEOPLE = 1_000;

/** `w<runId>-<row>`: with the person it names the child execution, so a redrive finds it again. */
function requestIdFor(runId: string, row: number): string {
  return `w${runId}-${row}`;
}

/**
 * The people's requests in shards of WATCHLIST_SHARD_PEOPLE, one JSON line each, and each person's
 * Map item naming its shard and the bytes of its line.
 */
export function shardRequests(
  people: ParsedWatchlist['people'],
  where: { readonly runId: string; readonly bucket: string; readonly requestsPrefix: string },
): { items: WatchlistItem[]; shards: { key: string; body: Buffer }[] } {
  const items: WatchlistItem[] = [];
  const shards: { key: string; body: Buffer }[] = [];
  for (let first = 0; first < people.length; first += WATCHLIST_SHARD_PEOPLE) {
    const key = `${where.requestsPrefix}shard-${String(shards.length).padStart(5, '0')}.jsonl`;
    const lines: Buffer[] = [];
    let offset = 0;
    for (const { row, person, request } of people.slice(first, first + WATCHLIST_SHARD_PEOPLE)) {
      const line = Buffer.from(`${JSON.stringify(request)}\n`, 'utf8');
      const requestId = requestIdFor(where.runId, row);
      items.push({
        row,
        requestId,
        person,
        // The line without its newline: exactly the JSON Recon parses.
        request: { bucket: where.bucket, key, range: { start: offset, end: offset + line.length - 2 } },
        executionName: breachExecutionName(person, requestId),
      });
      lines.push(line);
      offset += line.length;
    }
    shards.push({ key, body: Buffer.concat(lines) });
  }
  return { items, shards };
}
