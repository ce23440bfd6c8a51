/** Scan reconciliation as synthesized: schedule, retries and queue, grants, settings, alarms. */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseReconcileSettings } from '#lambdas/scan/reconcile-settings';
import {
  actionsAllowed,
  expectListsOnlyUnder,
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  type Synthesized,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;

beforeAll(() => {
  synthesized = synth({ vendor: { scanApiUrl: 'https://scan.vendor.example.net' } });
});

function settingsOf(s: Synthesized) {
  const fn = functionFor(s, 'reconcile-scans');
  return parseReconcileSettings(fn.environment.SCAN_RECONCILIATION as string, 'SCAN_RECONCILIATION');
}

describe('scan reconciliation', () => {
  it("runs daily by default, with no retry of its own, into the scan jobs' dead-letter queue", () => {
    const fn = functionFor(synthesized, 'reconcile-scans');
    const queue = logicalIdOfType(synthesized, 'AWS::SQS::Queue', 'ScanDomainEarlyEndWatcherDeadLetterQueue');
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 day)',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [fn.logicalId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
      }),
    });
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn.logicalId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    expect(fn.properties).toMatchObject({ Timeout: 900, MemorySize: 1024 });
  });

  it('gets the scan steps’ own settings, and its own with the default minimum age of the deadline plus an hour', () => {
    const fn = functionFor(synthesized, 'reconcile-scans');
    const poll = functionFor(synthesized, 'poll-scan-status');
    for (const variable of [
      'SCAN_API_URL',
      'POLL_MIN_WAIT_SECONDS',
      'SCAN_DEADLINE_SECONDS',
      'RESULTS_BUCKET',
    ]) {
      expect(fn.environment[variable], variable).toEqual(poll.environment[variable]);
    }
    expect(settingsOf(synthesized)).toEqual({
      horizonDays: 7,
      minAgeSeconds: 86_400 + 3600,
      matchWindowSeconds: 1800,
      maxArchivesPerRun: 25,
      deleteAtVendor: false,
      listFields: {},
    });
  });

  it('takes its schedule and settings from configuration, deleteAtVendorAfterManifest included', () => {
    const configured = synth({
      poll: { deadlineSeconds: 7 * 86_400, maxWaitSeconds: 3600 },
      scan: {
        deleteAtVendorAfterManifest: true,
        reconciliation: {
          schedule: 'cron(30 4 * * ? *)',
          matchWindowMinutes: 10,
          listFields: { list: 'data.items', uuid: 'id' },
          statsFields: { finished: 'totals.done' },
        },
      },
    });
    configured.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(30 4 * * ? *)',
    });
    expect(settingsOf(configured)).toMatchObject({
      // A week-long deadline: the horizon grows past the minimum age by itself.
      horizonDays: 10,
      minAgeSeconds: 7 * 86_400 + 3600,
      matchWindowSeconds: 600,
      deleteAtVendor: true,
      listFields: { list: 'data.items', uuid: 'id' },
    });
    // statsFields configures the vendor statistics job (test/operations/vendor-statistics.cdk.test.ts).
    expect(settingsOf(configured)).not.toHaveProperty('statsFields');
  });

  it('refuses settings it cannot work with, naming them', () => {
    expect(() => synth({ scan: { reconciliation: { horizonDays: 1 } } })).toThrow(
      /pipeline\.scan\.reconciliation\.horizonDays must be longer than the minimum age of 25 h/,
    );
    expect(() => synth({ scan: { reconciliation: { listFields: { uuid: 'a..b' } } } })).toThrow(
      /pipeline\.scan\.reconciliation\.listFields\.uuid must be a dot path/,
    );
    expect(() => synth({ scan: { reconciliation: { schedule: 'every day' } } })).toThrow(
      /pipeline\.scan\.reconciliation\.schedule/,
    );
    expect(() => synth({ scan: { reconciliation: { maxArchivesPerRun: 0 } } })).toThrow(
      /pipeline\.scan\.reconciliation\.maxArchivesPerRun must be between 1 and 500/,
    );
  });

  it('grants exactly what it declares: scans/ and staging objects, listings of them only, the scan key', () => {
    const fn = functionFor(synthesized, 'reconcile-scans');
    const grants = grantsOf(synthesized, fn.roleLogicalId);
    expect(actionsAllowed(grants).sort()).toEqual(
      [
        's3:AbortMultipartUpload',
        's3:DeleteObject',
        's3:GetObject',
        's3:GetObjectVersion',
        's3:ListBucket',
        's3:PutObject',
        's3:DeleteObjectVersion',
        'secretsmanager:GetSecretValue',
        // Its own log group, and tracing: every function has them.
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
        // The on-failure destination of an invocation Lambda gives up on.
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ].sort(),
    );
    const queue = logicalIdOfType(synthesized, 'AWS::SQS::Queue', 'ScanDomainEarlyEndWatcherDeadLetterQueue');
    expect(resourcesAllowed(grants, 'sqs:SendMessage')).toEqual([`<GetAtt:${queue}.Arn>`]);
    const results = logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageResults');
    const [scans, staging] = [`<GetAtt:${results}.Arn>/scans/*`, `<GetAtt:${results}.Arn>/staging/scans/*`];
    expect(new Set(resourcesAllowed(grants, 's3:PutObject'))).toEqual(new Set([scans, staging]));
    expect(new Set(resourcesAllowed(grants, 's3:DeleteObject'))).toEqual(new Set([scans, staging]));
    // A version is deleted only where outputs are staged, never under scans/.
    expect(resourcesAllowed(grants, 's3:DeleteObjectVersion')).toEqual([staging]);
    expectListsOnlyUnder(synthesized, fn.roleLogicalId, 'scans/*');
    expect(resourcesAllowed(grants, 'secretsmanager:GetSecretValue')).toEqual([
      `<Ref:${logicalIdOfType(synthesized, 'AWS::SecretsManager::Secret', 'VendorSecretsOrgApiKey')}>`,
    ]);
  });

  it('alarms when the vendor finishes scans while none is recorded, and on vendor failures never seen', () => {
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('docs/runbooks/alarms.md#vendorscansunrecorded$'),
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      Metrics: Match.arrayWith([
        Match.objectLike({
          Expression: 'IF(FILL(v, 0) > 0 AND FILL(s, 0) + FILL(r, 0) == 0, FILL(v, 0), 0)',
        }),
        Match.objectLike({
          Id: 'v',
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ MetricName: 'VendorScansFinishedIncrease' }),
            Period: 86_400,
            Stat: 'Sum',
          }),
        }),
        Match.objectLike({
          Id: 's',
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'ScansSucceeded' }) }),
        }),
        Match.objectLike({
          Id: 'r',
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'ScansReconciled' }) }),
        }),
      ]),
    });
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp('docs/runbooks/alarms.md#vendorfailuresunseen$'),
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(v, 0) - FILL(f, 0)' }),
        Match.objectLike({
          Id: 'f',
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              MetricName: 'ScansFailed',
              Dimensions: Match.arrayWith([{ Name: 'outcome', Value: 'ScanFailed' }]),
            }),
          }),
        }),
      ]),
    });
  });

  it('is not built at all when disabled', () => {
    const off = synth({ scan: { reconciliation: { enabled: false } } });
    expect(() => functionFor(off, 'reconcile-scans')).toThrow(/found 0/);
    expect(Object.keys(off.json.Resources).filter((id) => id.startsWith('ScanReconciliation'))).toEqual([]);
    expect(off.template.findOutputs('ScanReconcileFunctionName')).toEqual({});
    expect(synthesized.template.findOutputs('ScanReconcileFunctionName')).not.toEqual({});
  });
});
