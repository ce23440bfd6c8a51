import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import {
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  type Synthesized,
  stateMachineWith,
  synth,
} from '../kit/synth.ts';

const scheduled: PipelineConfigInput = {
  intake: { prefix: 'uploads/lists/', suffixes: ['.txt'] },
  domainLists: { critical: { objectKey: 'lists/critical.txt' } },
  schedules: [
    { name: 'nightly', expression: 'cron(0 2 * * ? *)', timeZone: 'Europe/Berlin', domainList: 'critical' },
    {
      name: 'hourly',
      expression: 'rate(1 hour)',
      domains: ['example.com', 'example.org'],
      flexibleWindowMinutes: 0,
      maxRetryAttempts: 5,
      maxEventAgeSeconds: 600,
      enabled: false,
    },
  ],
};

let synthesized: Synthesized;
let inputBucketId: string;
let listMachineId: string;

beforeAll(() => {
  synthesized = synth(scheduled);
  inputBucketId = logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageInput');
  listMachineId = stateMachineWith(synthesized, 'PrepareDomainList').logicalId;
});

function queueIdFor(prefix: string): string {
  return logicalIdOfType(synthesized, 'AWS::SQS::Queue', prefix);
}

describe('UploadIntake', () => {
  it('names each intake function after the handler it runs, not after the domain-list intake', () => {
    // The domain-list intake keeps its logical ID; the watchlist intake's once read
    // `WatchlistIntakeStartDomainListFunction…`, sending an operator to the wrong code.
    expect(functionFor(synthesized, 'start-domain-list').logicalId).toMatch(/^IntakeStartDomainListFunction/);
    const watchlist = functionFor(synthesized, 'start-watchlist').logicalId;
    expect(watchlist).toMatch(/^WatchlistIntakeStartWatchlistFunction/);
    expect(
      Object.keys(synthesized.json.Resources).some((id) => id.includes('WatchlistIntakeStartDomainList')),
    ).toBe(false);
  });

  it('matches Object Created events of the input bucket under the prefix, leaving the suffix to the function', () => {
    // The suffix, in any letter case, is the start function's check: EventBridge refused the
    // wildcard per letter-case spelling (test/stack/event-patterns.cdk.test.ts feeds real events).
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.s3'],
        'detail-type': ['Object Created'],
        detail: {
          bucket: { name: [{ Ref: inputBucketId }] },
          object: { key: [{ prefix: 'uploads/lists/' }] },
        },
      },
    });
    expect(functionFor(synthesized, 'start-domain-list').environment).toMatchObject({
      INTAKE_PREFIX: 'uploads/lists/',
    });
  });

  it('targets the start-domain-list function with retries and a dead-letter queue', () => {
    const fn = functionFor(synthesized, 'start-domain-list');
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueIdFor('IntakeDeadLetterQueue'), 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 21_600 },
        },
      ],
    });
  });

  it('sends events the function failed on to the same dead-letter queue', () => {
    const fn = functionFor(synthesized, 'start-domain-list');
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn.logicalId },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [queueIdFor('IntakeDeadLetterQueue'), 'Arn'] } },
      },
    });
  });

  it('lets the function start the list machine only, and tells it which machine, prefix and suffixes', () => {
    const fn = functionFor(synthesized, 'start-domain-list');
    expect(fn.environment).toMatchObject({
      DOMAIN_LIST_STATE_MACHINE_ARN: { Ref: listMachineId },
      INTAKE_PREFIX: 'uploads/lists/',
      INTAKE_SUFFIXES: '.txt',
      INPUT_BUCKET: { Ref: inputBucketId },
    });
    const grants = grantsOf(synthesized, fn.roleLogicalId);
    expect(resourcesAllowed(grants, 'states:StartExecution')).toEqual([`<Ref:${listMachineId}>`]);
    expect(resourcesAllowed(grants, 's3:GetObject')).toEqual([]);
  });
});

describe('ScheduledRuns', () => {
  it('creates one schedule per configured schedule with its expression, time zone and window', () => {
    // The two configured list schedules, breach and scan reconciliation's, the vendor statistics
    // job's, the daily key-age check, the pause switch's resume safety net and the early-end
    // watcher's tick.
    synthesized.template.resourceCountIs('AWS::Scheduler::Schedule', 8);
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 15 },
      State: 'ENABLED',
      Target: Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 } }),
    });
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'DISABLED',
      Target: Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 5, MaximumEventAgeInSeconds: 600 } }),
    });
  });

  it('invokes the intake function (which names the run) with the scheduled time and the list object', () => {
    const fn = functionFor(synthesized, 'start-domain-list');
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 2 * * ? *)',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueIdFor('SchedulesDeadLetterQueue'), 'Arn'] } },
        Input: {
          'Fn::Join': [
            '',
            [
              '{"source":{"type":"schedule","scheduleName":"nightly","scheduledTime":"<aws.scheduler.scheduled-time>","bucket":"',
              { Ref: inputBucketId },
              '","key":"lists/critical.txt"}}',
            ],
          ],
        },
      }),
    });
  });

  it('passes inline domains in the input', () => {
    const schedule = Object.values(synthesized.json.Resources).find(
      (r) => r.Type === 'AWS::Scheduler::Schedule' && r.Properties?.ScheduleExpression === 'rate(1 hour)',
    );
    const target = schedule?.Properties?.Target as { Input: string } | undefined;
    const input = JSON.parse(target?.Input ?? 'null');
    expect(input).toEqual({
      source: {
        type: 'schedule',
        scheduleName: 'hourly',
        scheduledTime: '<aws.scheduler.scheduled-time>',
        domains: ['example.com', 'example.org'],
      },
    });
  });

  it('assumes a role that may only invoke the intake function and write to the schedule DLQ', () => {
    const roleId = logicalIdOfType(synthesized, 'AWS::IAM::Role', 'SchedulesRole');
    synthesized.template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          }),
        ],
      },
    });
    const grants = grantsOf(synthesized, roleId);
    expect(grants.flatMap((g) => g.actions).sort()).toEqual(['lambda:InvokeFunction', 'sqs:SendMessage']);
    const fn = functionFor(synthesized, 'start-domain-list');
    expect(resourcesAllowed(grants, 'lambda:InvokeFunction')).toContain(`<GetAtt:${fn.logicalId}.Arn>`);
  });

  it('creates no list schedule, role or queue when none is configured', () => {
    const plain = synth();
    // Only breach and scan reconciliation's, the vendor statistics job's, the key-age check's, the
    // resume safety net's and the early-end watcher's own.
    plain.template.resourceCountIs('AWS::Scheduler::Schedule', 6);
    plain.template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(1 day)' });
    expect(Object.keys(plain.json.Resources).some((id) => id.startsWith('Schedules'))).toBe(false);
  });
});

describe('dead-letter queues', () => {
  it('are encrypted, SSL-only and keep messages for 14 days', () => {
    // Domain-list intake, list schedules, watchlist intake, breach reconciliation, the scan jobs (the
    // early-end watcher's ticks, scan reconciliation and the vendor statistics job), key rotation,
    // run notifications, pause resume.
    synthesized.template.resourceCountIs('AWS::SQS::Queue', 8);
    synthesized.template.allResourcesProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1_209_600,
    });
    for (const queue of [
      'IntakeDeadLetterQueue',
      'SchedulesDeadLetterQueue',
      'WatchlistIntakeDeadLetterQueue',
      'BreachReconciliationDeadLetterQueue',
      'ScanDomainEarlyEndWatcherDeadLetterQueue',
    ]) {
      synthesized.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queueIdFor(queue) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });
});
