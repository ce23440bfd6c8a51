/**
 * PrepareWatchlist at S3's real latency: one request object per person, written in bounded
 * parallel, so the largest watchlist allowed (100,000 people) prepares inside the step's timeout
 * when every PUT takes the 10-30 ms it takes from Lambda. Here 500 people at 40 ms a request.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareWatchlist, WATCHLIST_WRITE_CONCURRENCY } from '#lambdas/watchlist/watchlist-run';
import { type S3rverFixture, startS3rver } from '#local/embedded-s3';
import { createMemoryLogger } from '../kit/loggers.ts';
import { IDENTITY_KEY, RESULTS_BUCKET } from './fixture.ts';

const INPUT = 'watchlist-input';
const PEOPLE = 500;
const LATENCY_MS = 40;
let s3: S3rverFixture;
beforeEach(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET, INPUT], latency: { meanMs: LATENCY_MS } });
});
afterEach(async () => {
  await s3.close();
});

describe('PrepareWatchlist at S3 latency', () => {
  it('writes the request objects in bounded parallel', async () => {
    // Prepare
    const csv = Array.from({ length: PEOPLE }, (_, i) => `Person ${i},person${i}@example.com\n`).join('');
    await s3.client.send(new PutObjectCommand({ Bucket: INPUT, Key: 'watchlists/big.csv', Body: csv }));
    let inFlight = 0;
    let peak = 0;
    const client = s3.createClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'PutObjectCommand') return next(args);
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        try {
          return await next(args);
        } finally {
          inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countInFlight' },
    );
    const deps = {
      s3: client,
      logger: createMemoryLogger(),
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50 },
      identityKey: async () => IDENTITY_KEY,
    };

    // Act
    const started = performance.now();
    const prepared = await prepareWatchlist(deps, {
      source: { type: 's3', bucket: INPUT, key: 'watchlists/big.csv' },
    });
    const seconds = (performance.now() - started) / 1000;

    // Assess: one after another would be PEOPLE × 40 ms = 20 s (s3rver itself adds a few ms a PUT)
    expect(prepared.counts).toMatchObject({ rows: PEOPLE, valid: PEOPLE });
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(WATCHLIST_WRITE_CONCURRENCY);
    expect(seconds).toBeLessThan((PEOPLE * LATENCY_MS) / 1000 / 2);
    const read = async (key: string) =>
      JSON.parse(
        (await (
          await s3.client.send(new GetObjectCommand({ Bucket: RESULTS_BUCKET, Key: key }))
        ).Body?.transformToString()) ?? 'null',
      );
    const items = (await read(prepared.itemsKey)) as { request: { key: string } }[];
    expect(items).toHaveLength(PEOPLE);
    expect(await read(items[PEOPLE - 1]?.request.key ?? '')).toMatchObject({
      name: `Person ${PEOPLE - 1}`,
      emails: [`person${PEOPLE - 1}@example.com`],
    });
  }, 120_000);
});
