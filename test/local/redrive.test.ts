/**
 * `npm run redrive`: a deployed list or watchlist run that did not finish is redriven; a child
 * execution, a run still going, and one Step Functions will not redrive are refused with the reason.
 * Step Functions has no local stand-in, so it is a stateful fake (executions and the synthesized
 * state machines, by ARN) behind aws-sdk-client-mock; the definitions are the real synthesized ones.
 */
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionDoesNotExist,
  ExecutionNotRedrivable,
  RedriveExecutionCommand,
  SFNClient,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { stateMachinesIn } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';
import { executionRegion, redriveRun } from '../../scripts/redrive.ts';

const ACCOUNT = '111122223333';
const machineArn = (name: string) => `arn:aws:states:eu-west-1:${ACCOUNT}:stateMachine:${name}`;
const executionArn = (machine: string, name: string) =>
  `arn:aws:states:eu-west-1:${ACCOUNT}:execution:${machine}:${name}`;

/** The synthesized definitions, by an ARN named after the construct (ScanDomain, DomainListScan…). */
const machines = new Map<string, string>();
interface FakeExecution {
  machine: string;
  status: string;
  redriveStatus?: string;
  redriveStatusReason?: string;
  redriveCount: number;
  tokens: Set<string>;
}
const executions = new Map<string, FakeExecution>();
const sfnMock = mockClient(SFNClient);
const sfn = new SFNClient({ region: 'eu-west-1' });

beforeAll(async () => {
  for (const { logicalId, definition } of stateMachinesIn(await cachedTemplate(DEFAULT_PIPELINE_CONFIG))) {
    machines.set(machineArn(logicalId.replace(/StateMachine[0-9A-F]{8}$/, '')), JSON.stringify(definition));
  }
});
afterAll(() => sfnMock.restore());

beforeEach(() => {
  executions.clear();
  sfnMock.reset();
  const find = (arn: string) => {
    const found = executions.get(arn);
    if (!found)
      throw new ExecutionDoesNotExist({ message: `Execution Does Not Exist: '${arn}'`, $metadata: {} });
    return found;
  };
  sfnMock.on(DescribeExecutionCommand).callsFake(({ executionArn: arn }: { executionArn: string }) => {
    const { machine, status, redriveStatus, redriveStatusReason, redriveCount } = find(arn);
    return {
      executionArn: arn,
      stateMachineArn: machineArn(machine),
      status,
      redriveCount,
      ...(redriveStatus ? { redriveStatus } : {}),
      ...(redriveStatusReason ? { redriveStatusReason } : {}),
    };
  });
  sfnMock.on(DescribeStateMachineCommand).callsFake(({ stateMachineArn }: { stateMachineArn: string }) => ({
    stateMachineArn,
    name: stateMachineArn.split(':').pop(),
    definition: machines.get(stateMachineArn),
  }));
  // As Step Functions does: only an unsuccessful run that may be redriven; a repeated token is the same redrive.
  sfnMock
    .on(RedriveExecutionCommand)
    .callsFake(({ executionArn: arn, clientToken }: { executionArn: string; clientToken: string }) => {
      const execution = find(arn);
      if (!execution.tokens.has(clientToken)) {
        if (execution.status === 'RUNNING' || execution.redriveStatus === 'NOT_REDRIVABLE') {
          throw new ExecutionNotRedrivable({ message: 'Execution is not redrivable', $metadata: {} });
        }
        execution.tokens.add(clientToken);
        execution.status = 'RUNNING';
        execution.redriveCount += 1;
      }
      return { redriveDate: new Date('2026-11-28T12:00:00Z') };
    });
});

function given(machine: string, status: string, extra: Partial<FakeExecution> = {}): string {
  const arn = executionArn(machine, `run-${executions.size + 1}`);
  executions.set(arn, { machine, status, redriveCount: 0, tokens: new Set(), ...extra });
  return arn;
}

describe('npm run redrive', () => {
  it.each(['DomainListScan', 'WatchlistRun'])(
    'redrives a %s run that failed, aborted or timed out, and not again while it runs',
    async (machine) => {
      expect([...machines.keys()]).toContain(machineArn(machine));
      for (const status of ['FAILED', 'ABORTED', 'TIMED_OUT']) {
        const arn = given(machine, status);

        const result = await redriveRun(sfn, arn);

        expect(result.code).toBe(0);
        expect(result.lines[0]).toContain(`Redriven ${arn} (${machine}, ${status}; redrive 1)`);
        expect(result.lines[0]).toContain('no domain is scanned and no recon sent a second time');
        // Asked again: the run is going again, so it is not redriven a second time.
        const again = await redriveRun(sfn, arn);
        expect(again.code).toBe(1);
        expect(again.lines[0]).toContain('is RUNNING');
        expect(executions.get(arn)?.redriveCount).toBe(1);
      }
    },
  );

  it.each(['ScanDomain', 'BreachReport'])(
    'refuses a %s child execution: its failure was recorded',
    async (machine) => {
      expect([...machines.keys()]).toContain(machineArn(machine));
      const arn = given(machine, 'FAILED');

      const result = await redriveRun(sfn, arn);

      expect(result.code).toBe(1);
      expect(result.lines[0]).toContain('which has no Distributed Map: redrive the list or watchlist run');
      expect(sfnMock.commandCalls(RedriveExecutionCommand)).toHaveLength(0);
    },
  );

  it('refuses a run that is still running or succeeded, and one Step Functions will not redrive, with its reason', async () => {
    for (const status of ['RUNNING', 'SUCCEEDED', 'PENDING_REDRIVE']) {
      const result = await redriveRun(sfn, given('DomainListScan', status));
      expect(result).toEqual({
        code: 1,
        lines: [expect.stringMatching(`is ${status}: only a FAILED, ABORTED or TIMED_OUT run is redriven$`)],
      });
    }
    const old = given('DomainListScan', 'FAILED', {
      redriveStatus: 'NOT_REDRIVABLE',
      redriveStatusReason: 'Execution is older than 14 days',
    });
    expect((await redriveRun(sfn, old)).lines[0]).toContain(
      `Step Functions will not redrive ${old}: Execution is older than 14 days;`,
    );
    expect(sfnMock.commandCalls(RedriveExecutionCommand)).toHaveLength(0);
  });

  it('answers anything but an execution ARN with usage (exit 2), asking AWS nothing', async () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.constant(machineArn('DomainListScan')),
          fc.constant(`arn:aws:states:eu-west-1:${ACCOUNT}:execution:DomainListScan`),
          fc.constant('arn:aws:lambda:eu-west-1:111122223333:function:x'),
        ),
        (text) => executionRegion(text) === undefined,
      ),
      { seed: 47 },
    );
    const result = await redriveRun(sfn, machineArn('DomainListScan'));
    expect(result.code).toBe(2);
    expect(result.lines[0]).toBe(
      `error: ${machineArn('DomainListScan')} is not a Step Functions execution ARN`,
    );
    expect(sfnMock.calls()).toHaveLength(0);
  });
});
