/**
 * The operations workflow's vendor statistics job as synthesized: on the scan reconciliation's
 * schedule expression, with a dead-letter queue; the scanning API's URL and key; its settings from
 * `scan.reconciliation.statsFields` and `scan.statusVocabulary`; and nothing in the results bucket
 * but its own folder.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseStatsFields } from '#lambdas/operations/stats-fields';
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

/** The schedule whose target is `handlerFile`'s function. */
function scheduleOf(s: Synthesized, handlerFile: string) {
  const fn = functionFor(s, handlerFile);
  const schedules = Object.values(s.template.findResources('AWS::Scheduler::Schedule')).filter(
    (schedule) =>
      JSON.stringify(schedule.Properties?.Target?.Arn) ===
      JSON.stringify({ 'Fn::GetAtt': [fn.logicalId, 'Arn'] }),
  );
  expect(schedules, handlerFile).toHaveLength(1);
  return schedules[0]?.Properties as { ScheduleExpression: string; Target: Record<string, unknown> };
}

describe('the vendor statistics job', () => {
  it("runs on the reconciliation's schedule, with no retry of its own, sharing the scan jobs' dead-letter queue and the pipeline's Scheduler role", () => {
    const fn = functionFor(synthesized, 'record-vendor-stats');
    const queue = logicalIdOfType(synthesized, 'AWS::SQS::Queue', 'ScanDomainEarlyEndWatcherDeadLetterQueue');
    const schedule = scheduleOf(synthesized, 'record-vendor-stats');
    expect(schedule.ScheduleExpression).toBe('rate(1 day)');
    expect(schedule.ScheduleExpression).toBe(scheduleOf(synthesized, 'reconcile-scans').ScheduleExpression);
    expect(schedule.Target).toMatchObject({
      RetryPolicy: { MaximumRetryAttempts: 0 },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
    });
    const role = logicalIdOfType(synthesized, 'AWS::IAM::Role', 'SchedulerRole');
    expect(schedule.Target).toMatchObject({ RoleArn: { 'Fn::GetAtt': [role, 'Arn'] } });
    expect(scheduleOf(synthesized, 'reconcile-scans').Target).toMatchObject({
      RoleArn: { 'Fn::GetAtt': [role, 'Arn'] },
    });
    // No queue or Scheduler role of its own.
    const own = Object.entries(synthesized.json.Resources).filter(
      ([id, r]) =>
        id.startsWith('VendorStatistics') && ['AWS::SQS::Queue', 'AWS::IAM::Role'].includes(r.Type),
    );
    expect(own.map(([id]) => id)).toEqual([
      expect.stringMatching(/^VendorStatisticsJobRecordVendorStatsFunctionRole/),
    ]);
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn.logicalId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
    });
    // One small vendor answer: a fraction of reconciliation's 15 minutes and 1 GB.
    expect(fn.properties).toMatchObject({ Timeout: 120, MemorySize: 256 });
  });

  it('follows a configured reconciliation schedule, and takes statsFields and the status vocabulary from configuration', () => {
    const configured = synth({
      scan: {
        statusVocabulary: { pending: ['new'], running: ['busy'], succeeded: ['done'], failed: ['broken'] },
        reconciliation: { schedule: 'cron(30 4 * * ? *)', statsFields: { finished: 'totals.done' } },
      },
    });
    expect(scheduleOf(configured, 'record-vendor-stats').ScheduleExpression).toBe('cron(30 4 * * ? *)');
    expect(scheduleOf(configured, 'reconcile-scans').ScheduleExpression).toBe('cron(30 4 * * ? *)');
    const env = functionFor(configured, 'record-vendor-stats').environment;
    expect(parseStatsFields(env.VENDOR_STATS_FIELDS as string, 'VENDOR_STATS_FIELDS')).toEqual({
      finished: 'totals.done',
    });
    expect(JSON.parse(env.STATUS_VOCABULARY as string)).toMatchObject({
      succeeded: ['done'],
      failed: ['broken'],
    });
    // Unconfigured, neither is set: the job finds the counts by the client's own status words.
    const plain = functionFor(synthesized, 'record-vendor-stats').environment;
    expect(plain).not.toHaveProperty('VENDOR_STATS_FIELDS');
    expect(plain).not.toHaveProperty('STATUS_VOCABULARY');
    expect(plain.SCAN_API_URL).toBe('https://scan.vendor.example.net');
    expect(plain.RESULTS_BUCKET).toEqual(
      functionFor(synthesized, 'reconcile-scans').environment.RESULTS_BUCKET,
    );
  });

  it('grants its own folder of the results bucket and the scan key, nothing else', () => {
    const fn = functionFor(synthesized, 'record-vendor-stats');
    const grants = grantsOf(synthesized, fn.roleLogicalId);
    expect(actionsAllowed(grants).sort()).toEqual(
      [
        's3:GetObject',
        's3:PutObject',
        's3:ListBucket',
        'secretsmanager:GetSecretValue',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ].sort(),
    );
    const results = logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageResults');
    const folder = `<GetAtt:${results}.Arn>/operations/vendor-stats/*`;
    expect(resourcesAllowed(grants, 's3:GetObject')).toEqual([folder]);
    expect(resourcesAllowed(grants, 's3:PutObject')).toEqual([folder]);
    expectListsOnlyUnder(synthesized, fn.roleLogicalId, 'operations/vendor-stats/*');
    expect(resourcesAllowed(grants, 'secretsmanager:GetSecretValue')).toEqual([
      `<Ref:${logicalIdOfType(synthesized, 'AWS::SecretsManager::Secret', 'VendorSecretsOrgApiKey')}>`,
    ]);
    const queue = logicalIdOfType(synthesized, 'AWS::SQS::Queue', 'ScanDomainEarlyEndWatcherDeadLetterQueue');
    expect(resourcesAllowed(grants, 'sqs:SendMessage')).toEqual([`<GetAtt:${queue}.Arn>`]);
  });

  it('is not built when scan reconciliation is disabled', () => {
    const off = synth({ scan: { reconciliation: { enabled: false } } });
    expect(() => functionFor(off, 'record-vendor-stats')).toThrow(/found 0/);
    expect(Object.keys(off.json.Resources).filter((id) => id.startsWith('VendorStatistics'))).toEqual([]);
    expect(off.template.findOutputs('VendorStatsFunctionName')).toEqual({});
    expect(synthesized.template.findOutputs('VendorStatsFunctionName')).not.toEqual({});
  });
});
