/**
 * The WatchlistRun state machine, breach reconciliation and watchlist schedules, as synthesized:
 * every person runs as a BreachReport child, and each schedule and intake is scoped to its objects.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { BREACH_SETTINGS } from '../breach/breach-settings.ts';
import {
  functionFor,
  grantsOf,
  resourcesAllowed,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;
/** The BreachReport machine, which every watchlist run starts once per person. */
let machine: ReturnType<typeof stateMachineWith>;

beforeAll(() => {
  synthesized = synth(BREACH_SETTINGS);
  machine = stateMachineWith(synthesized, 'Recon');
});

describe('WatchlistRun', () => {
  let watchlist: ReturnType<typeof stateMachineWith>;
  beforeAll(() => {
    watchlist = stateMachineWith(synthesized, 'PrepareWatchlist');
  });

  it('prepares, runs every person as a BreachReport child, and writes the summary', () => {
    const { definition: asl } = watchlist;
    expect(asl.StartAt).toBe('PrepareWatchlist');
    expect(stateNamed(asl, 'PrepareWatchlist').Next).toBe('ReportOnEachPerson');
    const map = stateNamed(asl, 'ReportOnEachPerson');
    expect(map).toMatchObject({
      Type: 'Map',
      MaxConcurrency: 5,
      ToleratedFailurePercentage: 100,
      ItemReader: {
        Resource: 'arn:<Ref:AWS::Partition>:states:::s3:getObject',
        ReaderConfig: { InputType: 'JSON' },
      },
      Next: 'WriteWatchlistSummary',
    });
    const child = stateNamed(asl, 'ReportOnePerson');
    expect(child.Resource).toBe('arn:<Ref:AWS::Partition>:states:::states:startExecution.sync:2');
    expect(child.Parameters).toMatchObject({
      StateMachineArn: `<Ref:${machine.logicalId}>`,
      'Name.$': '$.executionName',
      Input: { 'requestId.$': '$.requestId', 'person.$': '$.person', 'request.$': '$.request' },
    });
    // The child's input names a request object and hashes: never an address.
    expect(JSON.stringify(child.Parameters)).not.toMatch(/email/i);
    expect(stateNamed(asl, 'WriteWatchlistSummary').Next).toBe('WatchlistSucceeded');
  });

  it('gives the prepare step the configured watchlist limits', () => {
    expect(functionFor(synthesized, 'prepare-watchlist').environment).toMatchObject({
      WATCHLIST_MAX_BYTES: String(5 * 1024 * 1024),
      WATCHLIST_MAX_ROWS: '10000',
      BREACH_MAX_EMAILS: '20',
    });
    const limited = synth({ breach: { maxWatchlistBytes: 65536, maxWatchlistRows: 250 } });
    expect(functionFor(limited, 'prepare-watchlist').environment).toMatchObject({
      WATCHLIST_MAX_BYTES: '65536',
      WATCHLIST_MAX_ROWS: '250',
    });
  });

  it('gives the prepare step time and a whole vCPU for the largest watchlist allowed (100,000 people)', () => {
    expect(functionFor(synthesized, 'prepare-watchlist').properties).toMatchObject({
      Timeout: 900,
      MemorySize: 1769,
    });
  });

  it.each([
    [{ maxWatchlistBytes: 100 }, /pipeline\.breach\.maxWatchlistBytes/],
    [{ maxWatchlistRows: 0 }, /pipeline\.breach\.maxWatchlistRows/],
    [{ maxWatchlistRows: 1.5 }, /pipeline\.breach\.maxWatchlistRows/],
  ])('refuses watchlist limits out of bounds: %j', (breach, message) => {
    expect(() => synth({ breach })).toThrow(message);
  });

  it('reads the identity key from its own secret, in the prepare step only', () => {
    const prepare = functionFor(synthesized, 'prepare-watchlist');
    const summary = functionFor(synthesized, 'write-watchlist-summary');
    expect(prepare.environment.BREACH_IDENTITY_KEY_SECRET_ARN).toBeDefined();
    expect(summary.environment.BREACH_IDENTITY_KEY_SECRET_ARN).toBeUndefined();
    expect(
      resourcesAllowed(grantsOf(synthesized, prepare.roleLogicalId), 'secretsmanager:GetSecretValue'),
    ).toEqual([joinRef(prepare.environment.BREACH_IDENTITY_KEY_SECRET_ARN)]);
    synthesized.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Description: Match.stringLikeRegexp('HMAC key that names people'),
      GenerateSecretString: Match.objectLike({ PasswordLength: 64, ExcludePunctuation: true }),
    });
  });

  it('lets the summary describe BreachReport executions only, to resolve a redriven run', () => {
    const summary = functionFor(synthesized, 'write-watchlist-summary');
    expect(summary.environment.BREACH_STATE_MACHINE_ARN).toEqual({ Ref: machine.logicalId });
    const describable = resourcesAllowed(
      grantsOf(synthesized, summary.roleLogicalId),
      'states:DescribeExecution',
    );
    expect(describable).toHaveLength(1);
    expect(describable[0]).toMatch(/:execution:/);
    expect(describable[0]).toContain(machine.logicalId);
  });

  it('starts a watchlist run for .csv and .json uploads under the watchlist prefix', () => {
    const intake = functionFor(synthesized, 'start-watchlist');
    expect(intake.environment).toMatchObject({
      INTAKE_PREFIX: 'watchlists/',
      INTAKE_SUFFIXES: '.csv,.json',
      WATCHLIST_STATE_MACHINE_ARN: { Ref: watchlist.logicalId },
    });
    // The rule matches the prefix; the function checks the suffix in any letter case
    // (test/stack/event-patterns.cdk.test.ts feeds real uploads through both).
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({
        detail: Match.objectLike({ object: { key: [{ prefix: 'watchlists/' }] } }),
      }),
    });
  });
});

describe('breach reconciliation', () => {
  it('runs daily by default, with no retry of its own and a dead-letter queue', () => {
    const fn = functionFor(synthesized, 'reconcile-breach-reports');
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 day)',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: Match.objectLike({ Arn: Match.anyValue() }),
      }),
    });
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn.logicalId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
    expect(fn.environment.BREACH_API_URL).toBe('https://breach.vendor.example.net');
  });

  it('takes its schedule from configuration', () => {
    synth({ breach: { reconcileSchedule: 'cron(0 3 * * ? *)' } }).template.hasResourceProperties(
      'AWS::Scheduler::Schedule',
      { ScheduleExpression: 'cron(0 3 * * ? *)' },
    );
  });

  it('refuses a watchlist prefix that overlaps the domain-list intake prefix', () => {
    expect(() =>
      synth({ intake: { prefix: 'uploads/' }, breach: { watchlistPrefix: 'uploads/people/' } }),
    ).toThrow(/pipeline\.breach\.watchlistPrefix must not overlap pipeline\.intake\.prefix/);
  });
});

function joinRef(value: unknown): string {
  return `<Ref:${(value as { Ref: string }).Ref}>`;
}

describe('watchlist schedules', () => {
  const scheduled = () =>
    synth({
      breach: {
        schedules: [
          {
            name: 'weekly-vips',
            expression: 'cron(0 6 ? * MON *)',
            timeZone: 'Europe/Berlin',
            watchlistKey: 'lists/vips.csv',
          },
        ],
      },
    });

  it('invokes the watchlist intake with the schedule, its fire time and the watchlist object', () => {
    const synthesized = scheduled();
    const intake = functionFor(synthesized, 'start-watchlist');
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 6 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [intake.logicalId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
      }),
    });
    // The input joins in the input bucket's name: render it with a placeholder and parse it.
    const schedule = Object.values(synthesized.json.Resources).find(
      (r) =>
        r.Type === 'AWS::Scheduler::Schedule' && String(r.Properties?.Description).includes('weekly-vips'),
    );
    if (schedule === undefined) throw new Error('no weekly-vips schedule');
    const target = schedule.Properties?.Target as { Input: { 'Fn::Join': [string, unknown[]] } };
    const input = target.Input['Fn::Join'][1]
      .map((part) => (typeof part === 'string' ? part : 'input-bucket'))
      .join('');
    expect(JSON.parse(input)).toEqual({
      source: {
        type: 'schedule',
        scheduleName: 'weekly-vips',
        scheduledTime: '<aws.scheduler.scheduled-time>',
        bucket: 'input-bucket',
        key: 'lists/vips.csv',
      },
    });
  });

  it.each([
    [
      { name: 'a', expression: 'rate(1 day)', watchlistKey: 'vips.txt' },
      /schedules\[0\]\.watchlistKey must end with \.csv or \.json/,
    ],
    [{ name: 'a', expression: 'every day', watchlistKey: 'vips.csv' }, /schedules\[0\]\.expression/],
    [{ name: 'a b', expression: 'rate(1 day)', watchlistKey: 'vips.csv' }, /schedules\[0\]\.name/],
  ])('refuses a bad schedule %j, naming the setting', (schedule, message) => {
    expect(() => synth({ breach: { schedules: [schedule] } })).toThrow(message);
  });

  it('refuses two schedules of the same name', () => {
    const schedule = { name: 'twice', expression: 'rate(1 day)', watchlistKey: 'vips.csv' };
    expect(() => synth({ breach: { schedules: [schedule, schedule] } })).toThrow(
      /schedules\[1\]\.name is used twice/,
    );
  });
});
