import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_START_SETTLE } from '#lambdas/scan/settings';
import { DEFAULT_START_THROTTLE } from '#lambdas/scan/start-throttle';
import {
  type AslDefinition,
  allStates,
  functionFor,
  retriedErrors,
  retriesOf,
  type Synthesized,
  stateMachineWith,
  stateNamed,
  synth,
} from '../kit/synth.ts';

const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];
const VENDOR_TRANSIENT_ERRORS = [
  'VendorThrottledError',
  'VendorUnavailableError',
  'VendorTimeoutError',
  'VendorNetworkError',
];
const PERMANENT_ERRORS = ['VendorHttpError', 'VendorResponseError', 'InvalidInputError'];
const IDEMPOTENT_TASKS = [
  'PollScanStatus',
  'FetchReport',
  'FetchLogs',
  'FetchDebug',
  'WriteManifest',
  'RecordFailure',
];
const MARK_STATES = {
  MarkScanFailed: 'ScanFailed',
  MarkScanTimedOut: 'ScanTimedOut',
  MarkScanRejected: 'ScanRejected',
  MarkPollFailed: 'PollFailed',
  MarkOutputFetchFailed: 'OutputFetchFailed',
  MarkManifestFailed: 'ManifestFailed',
};

let synthesized: Synthesized;
let definition: AslDefinition;
let machine: ReturnType<typeof stateMachineWith>;

beforeAll(() => {
  synthesized = synth();
  machine = stateMachineWith(synthesized, 'StartScan');
  definition = machine.definition;
});

describe('ScanDomain state machine: shape', () => {
  it('has exactly the states of docs/contracts.md (no DeleteScanAtVendor by default)', () => {
    expect(definition.StartAt).toBe('StartScan');
    expect(Object.keys(definition.States).sort()).toEqual(
      [
        'StartScan',
        'StartThrottled?',
        'WaitForStartSlot',
        'WaitForScan',
        'WaitForScanUnrecorded',
        'PollScanStatus',
        'ScanFinished?',
        'FetchOutputs',
        'WriteManifest',
        'RecordFailure',
        'FailureNotRecorded',
        'Failed',
        ...Object.keys(MARK_STATES),
      ].sort(),
    );
    expect(allStates(definition).has('DeleteScanAtVendor')).toBe(false);
  });

  it('ends in Failed with the label even when RecordFailure itself fails', () => {
    expect(stateNamed(definition, 'RecordFailure').Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.notRecorded', Next: 'FailureNotRecorded' },
    ]);
    expect(stateNamed(definition, 'FailureNotRecorded')).toMatchObject({
      Type: 'Pass',
      Parameters: { 'error.$': '$.failure.error' },
      ResultPath: '$.failure',
      Next: 'Failed',
    });
  });

  it('waits out a throttled start exactly (SecondsPath), then starts again', () => {
    expect(stateNamed(definition, 'StartScan').Next).toBe('StartThrottled?');
    expect(stateNamed(definition, 'StartThrottled?')).toEqual({
      Type: 'Choice',
      Choices: [{ Variable: '$.startThrottle', IsPresent: true, Next: 'WaitForStartSlot' }],
      Default: 'WaitForScan',
    });
    expect(stateNamed(definition, 'WaitForStartSlot')).toEqual({
      Type: 'Wait',
      SecondsPath: '$.startThrottle.waitSeconds',
      Next: 'StartScan',
    });
  });

  it('loops StartScan -> WaitForScan (a releasable wait) -> PollScanStatus -> ScanFinished?', () => {
    // The wait records the scan as waiting (key: scan, start, attempt, planned wait; body: the task
    // token), then ends by the watcher's SendTaskSuccess or by its heartbeat timeout, the planned
    // wait: both lead to the execution's own poll.
    expect(stateNamed(definition, 'WaitForScan')).toEqual({
      Type: 'Task',
      Resource: 'arn:<Ref:AWS::Partition>:states:::aws-sdk:s3:putObject.waitForTaskToken',
      Parameters: {
        Bucket: expect.stringMatching(/^<Ref:StorageResults\w+>$/),
        'Key.$':
          "States.Format('scans/waiting/{}/{}/wait-{}-{}', $.scanUuid, $.poll.startedAt, $.poll.attempt, $.poll.nextWaitSeconds)",
        'Body.$': '$$.Task.Token',
      },
      HeartbeatSecondsPath: '$.poll.nextWaitSeconds',
      TimeoutSeconds: 86_400 + 300,
      ResultPath: '$.release',
      Next: 'PollScanStatus',
      Catch: [
        {
          ErrorEquals: ['States.HeartbeatTimeout', 'States.Timeout'],
          ResultPath: null,
          Next: 'PollScanStatus',
        },
        { ErrorEquals: ['States.ALL'], ResultPath: null, Next: 'WaitForScanUnrecorded' },
      ],
    });
    // A record S3 would not take: the planned wait, unreleasable.
    expect(stateNamed(definition, 'WaitForScanUnrecorded')).toEqual({
      Type: 'Wait',
      SecondsPath: '$.poll.nextWaitSeconds',
      Next: 'PollScanStatus',
    });
    expect(stateNamed(definition, 'PollScanStatus').Next).toBe('ScanFinished?');
  });

  it('checks succeeded, then failed, then the deadline, and otherwise waits again', () => {
    expect(stateNamed(definition, 'ScanFinished?')).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.status.state', StringEquals: 'succeeded', Next: 'FetchOutputs' },
        { Variable: '$.status.state', StringEquals: 'failed', Next: 'MarkScanFailed' },
        { Variable: '$.poll.deadlineExceeded', BooleanEquals: true, Next: 'MarkScanTimedOut' },
      ],
      Default: 'WaitForScan',
    });
  });

  it('fetches report, logs and debug in parallel into $.stored, then ends on writing the manifest', () => {
    const parallel = stateNamed(definition, 'FetchOutputs');
    expect(parallel.Type).toBe('Parallel');
    expect(parallel.ResultPath).toBe('$.stored');
    expect(parallel.Next).toBe('WriteManifest');
    const branches = parallel.Branches as AslDefinition[];
    expect(branches.map((b) => b.StartAt)).toEqual(['FetchReport', 'FetchLogs', 'FetchDebug']);
    // No Succeed state after it: every scan would pay one more transition for it.
    expect(stateNamed(definition, 'WriteManifest')).toMatchObject({ Type: 'Task', End: true });
    expect(stateNamed(definition, 'WriteManifest').Next).toBeUndefined();
  });

  it('passes the in-progress scan plus the output name to each fetch', () => {
    for (const [state, output] of [
      ['FetchReport', 'report'],
      ['FetchLogs', 'logs'],
      ['FetchDebug', 'debug'],
    ] as const) {
      expect(stateNamed(definition, state).Parameters).toEqual({
        'domain.$': '$.domain',
        'runId.$': '$.runId',
        'scanUuid.$': '$.scanUuid',
        'outputPrefix.$': '$.outputPrefix',
        'poll.$': '$.poll',
        'status.$': '$.status',
        output,
      });
    }
  });

  it('invokes every Lambda directly (payload-only: Resource is the function ARN)', () => {
    for (const [name, state] of allStates(definition)) {
      // WaitForScan is the S3 integration's callback task (above).
      if (state.Type !== 'Task' || name === 'WaitForScan') continue;
      expect(state.Resource, name).toMatch(/^<GetAtt:ScanDomain\w+Function\w+\.Arn>$/);
    }
  });
});

describe('ScanDomain state machine: failure path', () => {
  it.each(Object.entries(MARK_STATES))(
    '%s labels the failure %s and goes to RecordFailure',
    (state, error) => {
      expect(stateNamed(definition, state)).toEqual({
        Type: 'Pass',
        Result: { error },
        ResultPath: '$.failure',
        Next: 'RecordFailure',
      });
    },
  );

  it.each([
    ['StartScan', 'MarkScanRejected'],
    ['PollScanStatus', 'MarkPollFailed'],
    ['FetchOutputs', 'MarkOutputFetchFailed'],
    ['WriteManifest', 'MarkManifestFailed'],
  ])('catches every error of %s into $.caught and goes to %s', (state, mark) => {
    expect(stateNamed(definition, state).Catch).toEqual([
      { ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: mark },
    ]);
  });

  it('records the failure, then fails with the recorded error and cause', () => {
    expect(stateNamed(definition, 'RecordFailure').Next).toBe('Failed');
    expect(stateNamed(definition, 'Failed')).toEqual({
      Type: 'Fail',
      ErrorPath: '$.failure.error',
      CausePath: '$.failure.cause',
    });
  });
});

describe('ScanDomain state machine: retries and timeouts', () => {
  it.each(IDEMPOTENT_TASKS)(
    '%s retries Lambda service and vendor transient errors with full jitter',
    (name) => {
      const [retry, ...others] = retriesOf(stateNamed(definition, name));
      // Only the vendor-401 rule follows (asserted below).
      expect(others.map((rule) => rule.ErrorEquals)).toEqual(
        name === 'WriteManifest' || name === 'RecordFailure' ? [] : [['VendorAuthError']],
      );
      expect(retry?.ErrorEquals).toEqual(
        expect.arrayContaining([...LAMBDA_SERVICE_ERRORS, ...VENDOR_TRANSIENT_ERRORS]),
      );
      expect(retry).toMatchObject({
        IntervalSeconds: 5,
        BackoffRate: 2,
        MaxAttempts: 5,
        MaxDelaySeconds: 120,
        JitterStrategy: 'FULL',
      });
    },
  );

  it('retries StartScan only on errors that prove the scan was not started', () => {
    const retries = retriesOf(stateNamed(definition, 'StartScan'));
    // The second rule is the vendor 401, which proves the scan was not started either.
    expect(retries.map((rule) => rule.ErrorEquals)).toEqual([expect.any(Array), ['VendorAuthError']]);
    // Not VendorThrottledError: its full jitter may come sooner than Retry-After (WaitForStartSlot waits it).
    expect(retries[0]?.ErrorEquals).toEqual(['Lambda.TooManyRequestsException']);
    expect(retries[0]).toMatchObject({ JitterStrategy: 'FULL', MaxDelaySeconds: 120 });
  });

  it('never retries a permanent error or States.ALL anywhere', () => {
    for (const [name, state] of allStates(definition)) {
      for (const error of [...PERMANENT_ERRORS, 'States.ALL', 'States.Timeout']) {
        expect(retriedErrors(state), `${name} must not retry ${error}`).not.toContain(error);
      }
    }
  });

  it('retries a vendor 401 on every vendor call past a key rotation window, and nowhere else', () => {
    const vendorCalls = ['StartScan', 'PollScanStatus', 'FetchReport', 'FetchLogs', 'FetchDebug'];
    for (const [name, state] of allStates(definition)) {
      const rule = (retriesOf(state) as { ErrorEquals: string[]; [k: string]: unknown }[]).find((r) =>
        r.ErrorEquals.includes('VendorAuthError'),
      );
      if (!vendorCalls.includes(name)) {
        expect(rule, `${name} calls no vendor API`).toBeUndefined();
        continue;
      }
      expect(rule?.ErrorEquals, name).toEqual(['VendorAuthError']);
      const { IntervalSeconds = 1, BackoffRate = 2, MaxAttempts = 3 } = rule as Record<string, number>;
      let span = 0;
      for (let attempt = 0; attempt < MaxAttempts; attempt++)
        span += IntervalSeconds * BackoffRate ** attempt;
      // Longer than a rotation's window plus a failed step's retry, short of hiding a dead key for long.
      expect(span, name).toBeGreaterThanOrEqual(120);
      expect(MaxAttempts, name).toBeLessThanOrEqual(3);
      expect(rule, name).toMatchObject({ JitterStrategy: 'NONE' });
    }
  });

  it.each([
    ['StartScan', 'start-scan'],
    ['PollScanStatus', 'poll-scan-status'],
    ['FetchReport', 'fetch-scan-output'],
    ['WriteManifest', 'write-scan-manifest'],
    ['RecordFailure', 'record-scan-failure'],
  ])('%s times out just after its Lambda (%s) does', (state, handler) => {
    const taskTimeout = stateNamed(definition, state).TimeoutSeconds as number;
    const lambdaTimeout = functionFor(synthesized, handler).properties.Timeout as number;
    expect(taskTimeout).toBeGreaterThan(lambdaTimeout);
    expect(taskTimeout - lambdaTimeout).toBeLessThanOrEqual(15);
  });

  it('gives StartScan room to settle a lost answer: a start, the looks and one more start', () => {
    const lambdaTimeoutMs = (functionFor(synthesized, 'start-scan').properties.Timeout as number) * 1000;
    const { startReserveMs, lagWaitMs, looks } = DEFAULT_START_SETTLE;
    expect(lambdaTimeoutMs).toBeGreaterThanOrEqual(2 * startReserveMs + (looks - 1) * lagWaitMs);
  });

  it('gives every Lambda task a timeout between 60 s and 910 s', () => {
    for (const [name, state] of allStates(definition)) {
      if (state.Type !== 'Task' || name === 'WaitForScan') continue;
      expect(state.TimeoutSeconds, name).toBeGreaterThanOrEqual(60);
      expect(state.TimeoutSeconds, name).toBeLessThanOrEqual(910);
    }
    expect(stateNamed(definition, 'FetchDebug').TimeoutSeconds).toBe(910);
  });

  it('times the whole execution out two hours after the scan deadline and the throttle budget (a backstop)', () => {
    expect(definition.TimeoutSeconds).toBe(86_400 + DEFAULT_START_THROTTLE.maxTotalWaitSeconds + 7200);
  });
});

describe('ScanDomain state machine: resource', () => {
  it('is a Standard machine that logs ALL without execution data and is traced', () => {
    synthesized.template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      DefinitionString: Match.anyValue(),
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ALL',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: Match.anyValue() } }],
      },
    });
    expect(machine.properties.StateMachineType).toBe('STANDARD');
    expect(machine.properties.LoggingConfiguration).toMatchObject({
      Level: 'ALL',
      IncludeExecutionData: false,
    });
    expect(machine.properties.TracingConfiguration).toEqual({ Enabled: true });
  });
});

describe('ScanDomain state machine: options', () => {
  it('adds DeleteScanAtVendor after WriteManifest when configured; its failure still succeeds', () => {
    // Act
    const withDelete = stateMachineWith(synth({ scan: { deleteAtVendorAfterManifest: true } }), 'StartScan');

    // Assess
    const states = withDelete.definition.States;
    expect(states.WriteManifest?.Next).toBe('DeleteScanAtVendor');
    expect(states.DeleteScanAtVendor).toMatchObject({
      Type: 'Task',
      ResultPath: null,
      End: true,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: 'ScanSucceeded' }],
    });
    expect(states.ScanSucceeded?.Type).toBe('Succeed');
    expect(retriedErrors(states.DeleteScanAtVendor as never)).toEqual(
      expect.arrayContaining([...LAMBDA_SERVICE_ERRORS, ...VENDOR_TRANSIENT_ERRORS]),
    );
  });

  it("gives the vendor-calling steps the listing's configured field paths, and no variable by default", () => {
    // Act
    const listFields = { list: 'payload.jobs', uuid: 'job_id', createdAt: 'opened' };
    const custom = synth({ scan: { reconciliation: { listFields } } });

    // Assess: StartScan settles a lost start from the same listing reconciliation reads
    expect(JSON.parse(String(functionFor(custom, 'start-scan').environment.SCAN_LIST_FIELDS))).toEqual(
      listFields,
    );
    expect(functionFor(synthesized, 'start-scan').environment).not.toHaveProperty('SCAN_LIST_FIELDS');
    expect(functionFor(custom, 'write-scan-manifest').environment).not.toHaveProperty('SCAN_LIST_FIELDS');
  });

  it('derives the execution timeout and the poll variables from the poll settings', () => {
    // Act
    const custom = synth({
      poll: { minWaitSeconds: 30, maxWaitSeconds: 900, growthFactor: 2, deadlineSeconds: 7200 },
    });

    // Assess
    expect(stateMachineWith(custom, 'StartScan').definition.TimeoutSeconds).toBe(
      7200 + DEFAULT_START_THROTTLE.maxTotalWaitSeconds + 7200,
    );
    expect(functionFor(custom, 'poll-scan-status').environment).toMatchObject({
      POLL_MIN_WAIT_SECONDS: '30',
      POLL_MAX_WAIT_SECONDS: '900',
      POLL_GROWTH_FACTOR: '2',
      SCAN_DEADLINE_SECONDS: '7200',
    });
  });
});
