/**
 * PrepareWatchlist at S3's real latency: the people's requests go into shards of
 * WATCHLIST_SHARD_PEOPLE (one JSON line each), so S3 requests do not grow 1:1 with the watchlist
 * and the largest one allowed (100,000 people) is 100 PUTs. Each Map item names its shard and
 * the bytes of its line, which is all its child reads. Here 2,500 people at 40 ms a request.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reportNameObjectKey } from '#lambdas/breach/identity';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import { WATCHLIST_SHARD_PEOPLE, type WatchlistItem } from '#lambdas/watchlist/watchlist-shards';
import { type S3rverFixture, startS3rver } from '#local/services/s3/embedded-s3';
import { IDENTITY_KEY, RESULTS_BUCKET } from '../breach/fixture.ts';
import { createMemoryLogger } from '../kit/loggers.ts';

const INPUT = 'watchlist-input';
const PEOPLE = 2_500;
const LATENCY_MS = 40;
let s3: S3rverFixture;
beforeEach(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET, INPUT], latency: { meanMs: LATENCY_MS } });
});
afterEach(async () => {
  await s3.close();
});

const text = async (key: string, range?: { start: number; end: number }) =>
  (await (
    await s3.client.send(
      new GetObjectCommand({
        Bucket: RESULTS_BUCKET,
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    )
  ).Body?.transformToString()) ?? '';

describe('PrepareWatchlist at S3 latency', () => {
  it('writes the requests in shards, and each item names its own line of one', async () => {
    // Prepare
    const csv = Array.from({ length: PEOPLE }, (_, i) => `Person ${i},person${i}@example.com\n`).join('');
    await s3.client.send(new PutObjectCommand({ Bucket: INPUT, Key: 'watchlists/big.csv', Body: csv }));
    const puts: string[] = [];
    const client = s3.createClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand') puts.push((args.input as { Key: string }).Key);
        return next(args);
      },
      { step: 'initialize', name: 'recordPuts' },
    );
    const deps = {
      s3: client,
      logger: createMemoryLogger(),
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50 },
      identityKey: async () => IDENTITY_KEY,
    };

    // Act
    const prepared = await prepareWatchlist(deps, {
      source: { type: 's3', bucket: INPUT, key: 'watchlists/big.csv' },
    });

    // Assess: 3 shards, items.json and rows.json, where one object a person was 2,502 PUTs
    const shardCount = Math.ceil(PEOPLE / WATCHLIST_SHARD_PEOPLE);
    expect(shardCount).toBe(3);
    expect(prepared.counts).toMatchObject({ rows: PEOPLE, valid: PEOPLE });
    const shardKeys = puts.filter((key) => key.includes('/requests/'));
    expect(shardKeys).toHaveLength(shardCount);
    expect(puts.sort()).toEqual([...shardKeys, prepared.itemsKey, prepared.rowsKey].sort());
    const itemsText = await text(prepared.itemsKey);
    expect(itemsText).not.toContain('@');
    const items = JSON.parse(itemsText) as WatchlistItem[];
    expect(items).toHaveLength(PEOPLE);
    expect(new Set(items.map((item) => item.request.key))).toEqual(new Set(shardKeys));
    // Each child's ranged read is its own person's request, and only that.
    for (const index of [0, 999, 1_000, 1_777, PEOPLE - 1]) {
      const item = items[index] as WatchlistItem;
      expect(item.request.key).toBe(shardKeys.sort()[Math.floor(index / WATCHLIST_SHARD_PEOPLE)]);
      expect(JSON.parse(await text(item.request.key, item.request.range))).toMatchObject({
        name: `Person ${index}`,
        emails: [`person${index}@example.com`],
      });
    }
    // People sharing a shard keep their vendor report names apart.
    const [first, second] = items as [WatchlistItem, WatchlistItem];
    expect(first.request.key).toBe(second.request.key);
    expect(reportNameObjectKey(first, RESULTS_BUCKET)).not.toBe(reportNameObjectKey(second, RESULTS_BUCKET));
    expect(reportNameObjectKey(first, RESULTS_BUCKET)).toBe(
      `${prepared.resultsPrefix}requests/${first.requestId}.report-name.json`,
    );
  }, 120_000);
});
