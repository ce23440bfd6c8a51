/**
 * WriteWatchlistSummary on a redriven run: every child that already ran answers
 * ExecutionAlreadyExists and is looked up with DescribeExecution. Those lookups go out at most
 * DESCRIBE_EXECUTION_CONCURRENCY at a time: the API's token bucket is shared by the account.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, SFNClient } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DESCRIBE_EXECUTION_CONCURRENCY } from '#lambdas/platform/runs/fan-out-results';
import { sfnExecutionLookup } from '#lambdas/platform/runtime/execution-lookup';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import { writeWatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { type S3rverFixture, startS3rver } from '#local/services/s3/embedded-s3';
import { IDENTITY_KEY, RESULTS_BUCKET } from '../breach/fixture.ts';
import { createMemoryLogger } from '../kit/loggers.ts';

const INPUT = 'watchlist-input';
const PEOPLE = 60;
const MACHINE = 'arn:aws:states:eu-west-1:123456789012:stateMachine:BreachReport';
const sfnMock = mockClient(SFNClient);
// The mock patches SFNClient for the whole worker: put it back for the files that run next.
afterAll(() => sfnMock.restore());
let s3: S3rverFixture;
beforeEach(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET, INPUT] });
  sfnMock.reset();
});
afterEach(async () => {
  await s3.close();
});

describe('WriteWatchlistSummary on a redriven run', () => {
  it('looks up the children that already ran a bounded number at a time', async () => {
    const csv = Array.from({ length: PEOPLE }, (_, i) => `Person ${i},person${i}@example.com\n`).join('');
    await s3.client.send(new PutObjectCommand({ Bucket: INPUT, Key: 'watchlists/redo.csv', Body: csv }));
    const deps = {
      s3: s3.client,
      logger: createMemoryLogger(),
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50 },
      identityKey: async () => IDENTITY_KEY,
      executions: sfnExecutionLookup(new SFNClient({ region: 'eu-west-1' }), MACHINE),
    };
    const prepared = await prepareWatchlist(deps, {
      source: { type: 's3', bucket: INPUT, key: 'watchlists/redo.csv' },
    });
    const items = await readItems(prepared.itemsKey);
    // What Step Functions holds: every child finished earlier, the even rows archived, the odd failed.
    const executions = new Map(
      items.map((item) => [
        `${MACHINE.replace(':stateMachine:', ':execution:')}:${item.executionName}`,
        item.row % 2 === 0
          ? { status: 'SUCCEEDED', output: JSON.stringify({ manifestKey: `m/${item.row}.json` }) }
          : { status: 'FAILED', error: 'ArchiveFailed', cause: 'the ZIP did not verify' },
      ]),
    );
    let inFlight = 0;
    let peak = 0;
    sfnMock.on(DescribeExecutionCommand).callsFake(async ({ executionArn }: { executionArn: string }) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((done) => setTimeout(done, 5));
      inFlight -= 1;
      const found = executions.get(executionArn);
      if (!found) throw Object.assign(new Error('ExecutionDoesNotExist'), { name: 'ExecutionDoesNotExist' });
      return { executionArn, ...found };
    });

    const written = await writeWatchlistSummary(deps, {
      ...prepared,
      results: items.map((item) => ({
        executionName: item.executionName,
        status: 'failed' as const,
        error: { name: 'StepFunctions.ExecutionAlreadyExistsException', message: 'Execution Already Exists' },
      })),
    });

    expect(sfnMock.commandCalls(DescribeExecutionCommand)).toHaveLength(PEOPLE);
    expect(peak).toBe(DESCRIBE_EXECUTION_CONCURRENCY);
    expect(written.counts).toMatchObject({ archived: PEOPLE / 2, failed: PEOPLE / 2, rows: PEOPLE });
  });
});

async function readItems(key: string): Promise<{ row: number; executionName: string }[]> {
  const object = await s3.client.send(new GetObjectCommand({ Bucket: RESULTS_BUCKET, Key: key }));
  return JSON.parse((await object.Body?.transformToString()) ?? '[]');
}
