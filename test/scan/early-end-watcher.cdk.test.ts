/**
 * The early-end watcher as synthesized: its rule (every minute, on time, in the poll function),
 * and least privilege for both sides of the callback: the machine's role writes waiting records
 * only, the poll function reads and removes them and sends SendTaskSuccess (which IAM only grants
 * on "*").
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EARLY_END_TICK,
  isEarlyEndTick,
  parseWaitingKey,
  waitingRecordKey,
} from '#lambdas/scan/waiting-records';
import {
  actionsAllowed,
  expectListsOnlyUnder,
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;

beforeAll(() => {
  synthesized = synth();
});

/** The role of the ScanDomain machine. */
function machineRoleLogicalId(): string {
  const machine = stateMachineWith(synthesized, 'WaitForScan');
  return (machine.properties.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
}

describe('the ScanDomain machine writes waiting records, nothing else new', () => {
  it('builds the waiting record key the watcher reads (waitingRecordKey)', () => {
    const format = String(
      stateNamed(stateMachineWith(synthesized, 'WaitForScan').definition, 'WaitForScan').Parameters?.[
        'Key.$' as never
      ],
    );
    const template = /^States\.Format\('([^']+)'/.exec(format)?.[1] ?? '';
    const uuid = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    const startedAt = '2026-11-20T10:00:00.000Z';
    const built = [uuid, startedAt, '3', '270'].reduce((key, part) => key.replace('{}', part), template);
    expect(built).toBe(waitingRecordKey(uuid, startedAt, 3, 270));
    expect(parseWaitingKey(built)).toMatchObject({
      kind: 'wait',
      scanUuid: uuid,
      attempt: 3,
      waitSeconds: 270,
    });
  });

  it('may put objects under scans/waiting/ of the results bucket only (for WaitForScan)', () => {
    const grants = grantsOf(synthesized, machineRoleLogicalId());
    expect(resourcesAllowed(grants, 's3:PutObject')).toEqual([
      expect.stringMatching(/^<GetAtt:StorageResults\w+\.Arn>\/scans\/waiting\/\*$/),
    ]);
    expect(actionsAllowed(grants).filter((action) => action.startsWith('s3:'))).toEqual(['s3:PutObject']);
    expect(actionsAllowed(grants)).not.toContain('states:SendTaskSuccess');
  });
});

describe('the early-end watcher, run by the poll function every minute', () => {
  it("is a Scheduler schedule sending the tick, on time, one delivery, on the pipeline's shared role and the scan jobs' queue", () => {
    const poll = functionFor(synthesized, 'poll-scan-status');
    const queue = logicalIdOfType(synthesized, 'AWS::SQS::Queue', 'ScanDomainEarlyEndWatcherDeadLetterQueue');
    const role = logicalIdOfType(synthesized, 'AWS::IAM::Role', 'SchedulerRole');
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      // A late tick would break the lag promise.
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [poll.logicalId, 'Arn'] },
        RoleArn: { 'Fn::GetAtt': [role, 'Arn'] },
        Input: JSON.stringify(EARLY_END_TICK),
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
      }),
    });
    // A failed tick is not retried by Lambda either: the next one comes a minute later.
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: poll.logicalId },
      MaximumRetryAttempts: 0,
    });
    // Two pipelines in one stack are near CloudFormation's 500 resources: no function, role or
    // queue of its own beyond the scan jobs' queue (with its policy and alarm) and the schedule.
    const own = Object.keys(synthesized.json.Resources).filter((id) => id.includes('EarlyEndWatcher'));
    expect(own).toHaveLength(4);
    expect(isEarlyEndTick(EARLY_END_TICK)).toBe(true);
  });

  it('gives the poll function exactly what the watcher adds: waiting records, SendTaskSuccess', () => {
    const poll = functionFor(synthesized, 'poll-scan-status');
    const grants = grantsOf(synthesized, poll.roleLogicalId);
    const waiting = [expect.stringMatching(/^<GetAtt:StorageResults\w+\.Arn>\/scans\/waiting\/\*$/)];
    for (const action of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']) {
      expect(resourcesAllowed(grants, action), action).toEqual(waiting);
    }
    expect(resourcesAllowed(grants, 's3:ListBucket')).toEqual([
      expect.stringMatching(/^<GetAtt:StorageResults\w+\.Arn>$/),
    ]);
    // The Service Authorization Reference lists no resource type for SendTaskSuccess.
    expect(resourcesAllowed(grants, 'states:SendTaskSuccess')).toEqual(['*']);
    expect(actionsAllowed(grants).filter((action) => action.startsWith('states:'))).toEqual([
      'states:SendTaskSuccess',
    ]);
    expect(actionsAllowed(grants)).toContain('secretsmanager:GetSecretValue');
  });

  it('lists the results bucket under scans/waiting/ only', () => {
    const poll = functionFor(synthesized, 'poll-scan-status');
    expectListsOnlyUnder(synthesized, poll.roleLogicalId, 'scans/waiting/*');
  });
});
