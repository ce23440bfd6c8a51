/**
 * A redriven list run re-runs items whose child execution (same deterministic name) already ran:
 * StartExecution answers ExecutionAlreadyExists. The summary records the earlier execution's real
 * outcome instead of a domain error. Step Functions has no local stand-in here, so its
 * DescribeExecution is a stateful fake (a table of executions) behind aws-sdk-client-mock; S3 is
 * the embedded server.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient } from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { type ListDeps, sfnExecutionLookup } from '#lambdas/domain-list/deps';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import { writeListSummary } from '#lambdas/domain-list/write-list-summary';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';

const RESULTS = 'redrive-results';
const SCAN_MACHINE = 'arn:aws:states:eu-west-1:111122223333:stateMachine:ScanDomain';
const silent: VendorLogger = { debug() {}, info() {}, warn() {}, error() {} };
const sfnMock = mockClient(SFNClient);

/** The executions Step Functions knows, by ARN. */
const executions = new Map<string, { status: string; output?: string; error?: string; cause?: string }>();

let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS] });
});

afterAll(async () => {
  await s3.close();
  sfnMock.restore();
});

beforeEach(() => {
  executions.clear();
  sfnMock.reset();
  sfnMock.on(DescribeExecutionCommand).callsFake(({ executionArn }: { executionArn: string }) => {
    const found = executions.get(executionArn);
    if (!found)
      throw new ExecutionDoesNotExist({
        message: `Execution Does Not Exist: '${executionArn}'`,
        $metadata: {},
      });
    return { executionArn, ...found };
  });
});

function outcome(domain: string, state: ScanOutcome['state']): ScanOutcome {
  const prefix = `scans/${domain}/2026/11/22/6f1c1f7e-64f7-4c55-9f1e-3f7a4f1b2c3d/`;
  return {
    domain,
    state,
    scanUuid: '6f1c1f7e-64f7-4c55-9f1e-3f7a4f1b2c3d',
    outputPrefix: prefix,
    manifestKey: state === 'succeeded' ? `${prefix}manifest.json` : undefined,
    error:
      state === 'succeeded'
        ? undefined
        : { name: 'ScanFailed', message: 'the vendor reported the scan failed' },
  };
}

const alreadyExists = (domain: string, executionName: string) => ({
  domain,
  executionName,
  outcome: undefined,
  error: { name: 'StepFunctions.ExecutionAlreadyExistsException', message: 'Execution Already Exists' },
});

describe('a redriven list run', () => {
  it('records the earlier outcome of a child that already ran, not an ExecutionAlreadyExists error', async () => {
    // Prepare: three domains; two children already ran in the first attempt (one succeeded, one failed)
    const deps: ListDeps = {
      s3: s3.client,
      logger: silent,
      settings: { resultsBucket: RESULTS, inputBucket: undefined },
      executions: sfnExecutionLookup(new SFNClient({ region: 'eu-west-1' }), SCAN_MACHINE),
    };
    const prepared = await prepareDomainList(deps, {
      source: {
        type: 'adhoc',
        requestId: 'redrive-1',
        domains: ['done.example.com', 'broken.example.com', 'fresh.example.com'],
      },
    });
    const items = JSON.parse(
      (await (
        await s3.client.send(new GetObjectCommand({ Bucket: RESULTS, Key: prepared.itemsKey }))
      ).Body?.transformToString()) ?? '[]',
    ) as { domain: string; executionName: string }[];
    const nameOf = (domain: string) => items.find((item) => item.domain === domain)?.executionName ?? '';
    const arnOf = (domain: string) =>
      `${SCAN_MACHINE.replace(':stateMachine:', ':execution:')}:${nameOf(domain)}`;
    executions.set(arnOf('done.example.com'), {
      status: 'SUCCEEDED',
      output: JSON.stringify(outcome('done.example.com', 'succeeded')),
    });
    executions.set(arnOf('broken.example.com'), {
      status: 'FAILED',
      error: 'ScanFailed',
      cause: JSON.stringify(outcome('broken.example.com', 'failed')),
    });

    // Act: the redrive's Map results, as the summary step receives them
    const { summaryKey } = await writeListSummary(deps, {
      ...prepared,
      results: [
        alreadyExists('done.example.com', nameOf('done.example.com')),
        alreadyExists('broken.example.com', nameOf('broken.example.com')),
        {
          domain: 'fresh.example.com',
          executionName: nameOf('fresh.example.com'),
          outcome: outcome('fresh.example.com', 'succeeded'),
          error: undefined,
        },
      ],
    });

    // Assess
    const summary = JSON.parse(
      (await (
        await s3.client.send(new GetObjectCommand({ Bucket: RESULTS, Key: summaryKey }))
      ).Body?.transformToString()) ?? '{}',
    ) as ListSummary;
    const byDomain = Object.fromEntries(summary.domains.map((row) => [row.domain, row]));
    expect(byDomain['done.example.com']).toMatchObject({
      state: 'succeeded',
      manifestKey: outcome('done.example.com', 'succeeded').manifestKey,
    });
    expect(byDomain['done.example.com']?.error).toBeUndefined();
    expect(byDomain['broken.example.com']).toMatchObject({ state: 'failed', error: { name: 'ScanFailed' } });
    expect(byDomain['fresh.example.com']?.state).toBe('succeeded');
    expect(JSON.stringify(summary)).not.toContain('ExecutionAlreadyExists');
    expect(summary.counts).toMatchObject({ succeeded: 2, failed: 1 });
    expect(
      sfnMock
        .commandCalls(DescribeExecutionCommand)
        .map((call) => call.args[0].input.executionArn)
        .sort(),
    ).toEqual([arnOf('broken.example.com'), arnOf('done.example.com')].sort());
  });

  it('keeps ExecutionAlreadyExists as the error when nothing can look the child up', async () => {
    // Prepare: no lookup configured (e.g. an older deployment without the grant)
    const deps: ListDeps = {
      s3: s3.client,
      logger: silent,
      settings: { resultsBucket: RESULTS, inputBucket: undefined },
    };
    const prepared = await prepareDomainList(deps, {
      source: { type: 'adhoc', requestId: 'redrive-2', domains: ['done.example.com'] },
    });

    // Act
    const { counts } = await writeListSummary(deps, {
      ...prepared,
      results: [alreadyExists('done.example.com', 'x')],
    });

    // Assess
    expect(counts.failed).toBe(1);
    expect(sfnMock.commandCalls(DescribeExecutionCommand)).toHaveLength(0);
  });
});
