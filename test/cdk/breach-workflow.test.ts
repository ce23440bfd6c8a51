/**
 * The BreachReport state machine and its functions, as synthesized: the shape the issue asks for,
 * retries that never repeat a recon blindly, and grants scoped to `breach/` of the results bucket.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type AslDefinition,
  actionsAllowed,
  allStates,
  functionFor,
  grantsOf,
  resourcesAllowed,
  retriedErrors,
  retriesOf,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from './helpers.ts';

let synthesized: Synthesized;
let machine: ReturnType<typeof stateMachineWith>;
let definition: AslDefinition;

beforeAll(() => {
  synthesized = synth({
    vendor: { breachApiUrl: 'https://breach.vendor.example.net' },
    breach: { maxEmails: 20 },
  });
  machine = stateMachineWith(synthesized, 'Recon');
  definition = machine.definition;
});

describe('BreachReport state machine', () => {
  it('runs Recon, then archives and writes the manifest on success, and succeeds at once on no_results', () => {
    expect(definition.StartAt).toBe('Recon');
    expect(stateNamed(definition, 'Recon').Next).toBe('BreachesFound?');
    expect(stateNamed(definition, 'BreachesFound?')).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.recon.status', StringEquals: 'success', Next: 'ArchiveReport' },
        { Variable: '$.recon.status', StringEquals: 'no_results', Next: 'NoBreachesFound' },
      ],
      Default: 'MarkReconFailed',
    });
    expect(stateNamed(definition, 'ArchiveReport').Next).toBe('WriteBreachManifest');
    expect(stateNamed(definition, 'WriteBreachManifest').Next).toBe('ReportArchived');
    expect(stateNamed(definition, 'NoBreachesFound').Type).toBe('Succeed');
    expect(stateNamed(definition, 'ReportArchived').Type).toBe('Succeed');
  });

  it('labels every failure, records it, and ends in a Fail state carrying the record', () => {
    for (const [task, mark] of [
      ['Recon', 'MarkReconFailed'],
      ['ArchiveReport', 'MarkArchiveFailed'],
      ['WriteBreachManifest', 'MarkManifestFailed'],
    ] as const) {
      expect(stateNamed(definition, task).Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: mark },
      ]);
      expect(stateNamed(definition, mark)).toMatchObject({
        Type: 'Pass',
        ResultPath: '$.failure',
        Next: 'RecordBreachFailure',
      });
    }
    expect(stateNamed(definition, 'RecordBreachFailure').Next).toBe('BreachReportFailed');
    // A recorder that fails itself still ends the run as the person's own failure.
    expect(stateNamed(definition, 'RecordBreachFailure').Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.notRecorded', Next: 'BreachFailureNotRecorded' },
    ]);
    expect(stateNamed(definition, 'BreachFailureNotRecorded').Next).toBe('BreachReportFailed');
    expect(stateNamed(definition, 'BreachReportFailed')).toEqual({
      Type: 'Fail',
      ErrorPath: '$.failure.error',
      CausePath: '$.failure.cause',
    });
  });

  it('retries Recon only on errors that prove no report was made', () => {
    // A 401 proves it too: the vendor refused the request (its own rule, tested below).
    expect(retriedErrors(stateNamed(definition, 'Recon')).sort()).toEqual(
      ['Lambda.TooManyRequestsException', 'VendorThrottledError', 'VendorAuthError'].sort(),
    );
    for (const ambiguous of [
      'VendorNetworkError',
      'VendorTimeoutError',
      'VendorUnavailableError',
      'Lambda.ServiceException',
    ]) {
      expect(retriedErrors(stateNamed(definition, 'Recon'))).not.toContain(ambiguous);
    }
  });

  it('retries the idempotent steps with full jitter, never a permanent error', () => {
    for (const task of ['ArchiveReport', 'WriteBreachManifest', 'RecordBreachFailure']) {
      const [rule] = retriesOf(stateNamed(definition, task));
      expect(rule).toMatchObject({ JitterStrategy: 'FULL', MaxAttempts: 5 });
      expect(rule?.ErrorEquals).toEqual(
        expect.arrayContaining(['VendorNetworkError', 'Lambda.ServiceException']),
      );
      for (const permanent of ['InvalidInputError', 'ArchiveVerificationError', 'ReconOutcomeUnknownError']) {
        expect(rule?.ErrorEquals).not.toContain(permanent);
      }
    }
  });

  it('retries a vendor 401 in Recon and ArchiveReport only, in its own rule without jitter', () => {
    for (const [name, state] of allStates(definition)) {
      const rules = retriesOf(state).filter((rule) => rule.ErrorEquals.includes('VendorAuthError'));
      if (name === 'Recon' || name === 'ArchiveReport') {
        expect(rules, name).toEqual([
          expect.objectContaining({
            ErrorEquals: ['VendorAuthError'],
            MaxAttempts: 3,
            JitterStrategy: 'NONE',
          }),
        ]);
      } else {
        expect(rules, name).toEqual([]);
      }
    }
  });

  it('is a Standard machine with a timeout, tracing, and logs without execution data', () => {
    expect(machine.properties).toMatchObject({
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: { IncludeExecutionData: false, Level: 'ALL' },
    });
    expect(definition.TimeoutSeconds).toBe(7200);
    expect(allStates(definition).size).toBe(12);
  });
});

describe('BreachReport functions', () => {
  it('gives the vendor URL and the key secret to Recon and ArchiveReport only', () => {
    for (const file of ['breach-recon', 'archive-breach-report']) {
      const fn = functionFor(synthesized, file);
      expect(fn.environment.BREACH_API_URL).toBe('https://breach.vendor.example.net');
      expect(fn.environment.VENDOR_API_KEY_SECRET_ARN).toBeDefined();
      expect(actionsAllowed(grantsOf(synthesized, fn.roleLogicalId))).toContain(
        'secretsmanager:GetSecretValue',
      );
    }
    for (const file of ['write-breach-manifest', 'record-breach-failure']) {
      const fn = functionFor(synthesized, file);
      expect(fn.environment.BREACH_API_URL).toBeUndefined();
      expect(fn.environment.VENDOR_API_KEY_SECRET_ARN).toBeUndefined();
      expect(actionsAllowed(grantsOf(synthesized, fn.roleLogicalId))).not.toContain(
        'secretsmanager:GetSecretValue',
      );
    }
    expect(functionFor(synthesized, 'breach-recon').environment.BREACH_MAX_EMAILS).toBe('20');
  });

  it('scopes every object grant to breach/ of the results bucket', () => {
    for (const file of [
      'breach-recon',
      'archive-breach-report',
      'write-breach-manifest',
      'record-breach-failure',
    ]) {
      const grants = grantsOf(synthesized, functionFor(synthesized, file).roleLogicalId);
      const objectResources = ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'].flatMap((action) =>
        resourcesAllowed(grants, action),
      );
      expect(objectResources.length, file).toBeGreaterThan(0);
      for (const resource of objectResources) expect(resource, file).toMatch(/\/breach\/\*$/);
    }
  });

  it('lets only ArchiveReport delete staged objects and read versions, and only Recon delete its claim', () => {
    const actionsOf = (file: string) =>
      actionsAllowed(grantsOf(synthesized, functionFor(synthesized, file).roleLogicalId));
    expect(actionsOf('archive-breach-report')).toEqual(
      expect.arrayContaining(['s3:GetObjectVersion', 's3:DeleteObject', 's3:AbortMultipartUpload']),
    );
    expect(actionsOf('breach-recon')).toContain('s3:DeleteObject');
    expect(actionsOf('write-breach-manifest')).not.toContain('s3:DeleteObject');
    expect(actionsOf('record-breach-failure').filter((a) => a.startsWith('s3:'))).toEqual(['s3:PutObject']);
  });

  it('gives the archive step Lambda’s longest timeout and room to stream', () => {
    synthesized.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('lambdas/breach/handlers/archive-breach-report\\.ts$'),
      Timeout: 900,
      MemorySize: 1024,
    });
  });

  it('outputs the machine ARN', () => {
    synthesized.template.hasOutput('BreachStateMachineArn', { Value: { Ref: machine.logicalId } });
  });
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
      DOMAIN_LIST_STATE_MACHINE_ARN: { Ref: watchlist.logicalId },
    });
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({
        detail: Match.objectLike({
          object: {
            key: Match.arrayWith([{ wildcard: 'watchlists/*.csv' }, { wildcard: 'watchlists/*.JSON' }]),
          },
        }),
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
