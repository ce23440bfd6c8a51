import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROTATION_EVENT } from '#lambdas/rotation/deps';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import {
  ROTATION_CALL_RESERVE_SECONDS,
  ROTATION_FUNCTION_TIMEOUT_SECONDS,
} from '../../lib/config/rotation-schema.ts';
import {
  actionsAllowed,
  functionFor,
  grantsOf,
  resourcesAllowed,
  type Synthesized,
  synth,
} from '../kit/synth.ts';

const MIRROR = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:integrations/vendor-key-AbCdEf';
/** A mirror under a customer managed key, in the newer `mirrorSecrets` form. */
const CMK_MIRROR = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:partner/vendor-key-GhIjKl';
const CMK = 'arn:aws:kms:eu-central-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
let synthesized: Synthesized;
beforeAll(() => {
  synthesized = synth({
    rotation: { mirrorSecretArns: [MIRROR], mirrorSecrets: [{ secretArn: CMK_MIRROR, kmsKeyArn: CMK }] },
  });
});

const secretRef = () => {
  const ids = Object.entries(synthesized.json.Resources)
    .filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret')
    .map(([id]) => id)
    .filter((id) => id.startsWith('VendorSecrets'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
};

describe('KeyRotation: the schedule', () => {
  it('rotates the org key on the configured schedule and window, never on deploy', () => {
    synthesized.template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 1);
    synthesized.template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      SecretId: { Ref: secretRef() },
      RotateImmediatelyOnUpdate: false,
      RotationRules: { ScheduleExpression: 'rate(30 days)', Duration: '4h' },
      RotationLambdaARN: { 'Fn::GetAtt': [functionFor(synthesized, 'rotate-api-key').logicalId, 'Arn'] },
    });
  });

  it('takes the schedule, the window and the new-key path from configuration', () => {
    const custom = synth({
      rotation: { schedule: 'rate(7 days)', windowHours: 2, newKeyFieldPath: 'data.key' },
    });
    custom.template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      RotationRules: { ScheduleExpression: 'rate(7 days)', Duration: '2h' },
    });
    expect(functionFor(custom, 'rotate-api-key').environment).toMatchObject({
      NEW_KEY_FIELD_PATH: 'data.key',
    });
    custom.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApiKeyAgeDays',
      Threshold: 10,
    });
  });

  it('attaches no rotation and no rotation function when rotation.enabled is false', () => {
    const off = synth({ rotation: { enabled: false } });
    off.template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
    expect(() => functionFor(off, 'rotate-api-key')).toThrow(/found 0/);
    // Why the secret has no schedule is recorded for cdk-nag (test/stack/nag.cdk.test.ts).
  });

  it('refuses a schedule Secrets Manager does not take, naming the setting', () => {
    expect(() => parsePipelineConfig({ rotation: { schedule: 'rate(5 minutes)' } }, 'test')).toThrow(
      /pipeline\.rotation\.schedule/,
    );
    expect(() => parsePipelineConfig({ rotation: { schedule: 'cron(0 4 1 * ? *)' } }, 'test')).toThrow(
      /pipeline\.rotation\.maxKeyAgeDays is required with a cron schedule/,
    );
    expect(() => parsePipelineConfig({ rotation: { mirrorSecretArns: ['my-secret'] } }, 'test')).toThrow(
      /pipeline\.rotation\.mirrorSecretArns\[0\] must be a Secrets Manager secret ARN/,
    );
    // Secrets Manager's window rules: test/stack/aws-constraints.cdk.test.ts.
  });

  it('synthesizes an hourly rotation with a whole-day key-age threshold, not a CDK error', () => {
    const hourly = synth({ rotation: { schedule: 'rate(6 hours)', windowHours: 2 } });
    hourly.template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      RotationRules: { ScheduleExpression: 'rate(6 hours)', Duration: '2h' },
    });
    hourly.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApiKeyAgeDays',
      Threshold: 4,
    });
  });
});

describe('KeyRotation: no blind retries', () => {
  it('never lets Lambda retry an age check on its own, and sends its failures to a queue', () => {
    synthesized.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionFor(synthesized, 'check-api-key-age').logicalId },
      MaximumRetryAttempts: 0,
      DestinationConfig: {
        OnFailure: {
          Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^KeyRotationDeadLetterQueue'), 'Arn'] },
        },
      },
    });
  });

  it('gives the rotation function no asynchronous-invoke configuration: Secrets Manager invokes it synchronously', () => {
    // https://docs.aws.amazon.com/lambda/latest/dg/with-secrets-manager.html: a retry or an
    // on-failure destination would never apply, and a doc saying failures land in a queue would lie.
    const rotation = functionFor(synthesized, 'rotate-api-key').logicalId;
    const configs = Object.values(synthesized.json.Resources).filter(
      (r) =>
        r.Type === 'AWS::Lambda::EventInvokeConfig' &&
        JSON.stringify(r.Properties?.FunctionName) === JSON.stringify({ Ref: rotation }),
    );
    expect(configs).toEqual([]);
  });

  it('runs the age check daily without Scheduler retries, failures to the same queue', () => {
    synthesized.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 day)',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [functionFor(synthesized, 'check-api-key-age').logicalId, 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: {
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^KeyRotationDeadLetterQueue'), 'Arn'] },
        },
      }),
    });
  });

  it('gives the rotation function the propagation window and a timeout that holds it and the rotate call', () => {
    const fn = functionFor(synthesized, 'rotate-api-key');
    expect(fn.environment.ROTATION_KEY_PROPAGATION_SECONDS).toBe('180');
    expect(fn.properties.Timeout).toBe(ROTATION_FUNCTION_TIMEOUT_SECONDS);
    expect(180 + ROTATION_CALL_RESERVE_SECONDS).toBeLessThanOrEqual(fn.properties.Timeout as number);
  });

  it('holds a claim longer than any step can run', () => {
    const fn = functionFor(synthesized, 'rotate-api-key');
    expect(Number(fn.environment.ROTATION_CLAIM_LEASE_SECONDS)).toBeGreaterThan(
      fn.properties.Timeout as number,
    );
  });
});

describe('KeyRotation: least privilege', () => {
  it('lets the rotation function version this secret only, write the mirrors, and publish on the default bus', () => {
    const grants = grantsOf(synthesized, functionFor(synthesized, 'rotate-api-key').roleLogicalId);
    const secret = secretRef();
    for (const action of ['DescribeSecret', 'GetSecretValue', 'PutSecretValue', 'UpdateSecretVersionStage']) {
      expect(resourcesAllowed(grants, `secretsmanager:${action}`), action).toContain(`<Ref:${secret}>`);
    }
    expect(resourcesAllowed(grants, 'secretsmanager:UpdateSecretVersionStage')).toEqual([`<Ref:${secret}>`]);
    expect(resourcesAllowed(grants, 'secretsmanager:PutSecretValue').sort()).toEqual(
      [MIRROR, CMK_MIRROR, `<Ref:${secret}>`].sort(),
    );
    expect(resourcesAllowed(grants, 'events:PutEvents')).toEqual([
      'arn:<Ref:AWS::Partition>:events:<Ref:AWS::Region>:<Ref:AWS::AccountId>:event-bus/default',
    ]);
    expect(
      actionsAllowed(grants)
        .filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:'))
        .sort(),
    ).toEqual(
      [
        'events:PutEvents',
        // The customer managed key of one mirror (next test).
        'kms:Decrypt',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ].sort(),
    );
    expect(functionFor(synthesized, 'rotate-api-key').environment).toMatchObject({
      ROTATION_MIRROR_SECRET_ARNS: `${CMK_MIRROR},${MIRROR}`,
    });
  });

  it("lets the rotation function use a mirror's customer managed key only through Secrets Manager in the mirror's Region", () => {
    const role = functionFor(synthesized, 'rotate-api-key').roleLogicalId;
    const kmsStatements = Object.values(synthesized.json.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties?.Roles).includes(role))
      .flatMap(
        (r) =>
          (r.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] } | undefined)?.Statement ??
          [],
      )
      .filter((statement) => JSON.stringify(statement.Action).includes('kms:'));
    expect(kmsStatements).toEqual([
      {
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'],
        Resource: CMK,
        Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.eu-central-1.amazonaws.com' } },
      },
    ]);
  });

  it('lets the age check only describe the secret', () => {
    const grants = grantsOf(synthesized, functionFor(synthesized, 'check-api-key-age').roleLogicalId);
    expect(
      actionsAllowed(grants).filter((a) => a.startsWith('secretsmanager:') || a.startsWith('events:')),
    ).toEqual(['secretsmanager:DescribeSecret']);
  });

  it('gives no other function a way to write or re-label a secret', () => {
    for (const [id, resource] of Object.entries(synthesized.json.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy' || id.startsWith('KeyRotationRotateFunction')) continue;
      const text = JSON.stringify(resource.Properties);
      expect(text, id).not.toMatch(/secretsmanager:(PutSecretValue|UpdateSecretVersionStage)/);
    }
  });

  it('lets Secrets Manager, and only it, invoke the rotation function', () => {
    synthesized.template.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [functionFor(synthesized, 'rotate-api-key').logicalId, 'Arn'] },
      Principal: 'secretsmanager.amazonaws.com',
      SourceArn: { Ref: secretRef() },
    });
    synthesized.template.resourcePropertiesCountIs(
      'AWS::Lambda::Permission',
      { Principal: 'secretsmanager.amazonaws.com' },
      1,
    );
  });

  it('keeps the key secret when the stack is deleted', () => {
    expect(synthesized.json.Resources[secretRef()]).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('puts no key and no key material in the template', () => {
    const text = JSON.stringify(synthesized.json);
    expect(text).not.toMatch(/"apiKey"\s*:/);
    expect(text).not.toMatch(/sk_(live|sim)_/);
  });
});

describe('KeyRotation: event and alarms', () => {
  it('publishes ApiKeyRotated from the rotation source', () => {
    expect(ROTATION_EVENT).toEqual({ source: 'security-pipeline.key-rotation', detailType: 'ApiKeyRotated' });
  });

  it.each([
    ['RotationResponseLost', 'RotationResponseLost'],
    ['RotateAnswerUnparsable', 'RotateAnswerUnparsable'],
    ['MirrorWriteFailed', 'MirrorWriteFailures'],
    ['RotationEventFailed', 'RotationEventFailures'],
  ])('alarms %s on the first %s metric', (alarm, metric) => {
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmDescription: Match.stringLikeRegexp(`key-rotation\\.md#${alarm.toLowerCase()}`),
      Namespace: 'SecurityPipeline',
      MetricName: metric,
      Dimensions: [
        { Name: 'service', Value: 'SecurityPipeline' },
        { Name: 'workflow', Value: 'rotation' },
      ],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on a failed rotation step and on the dead-letter queue', () => {
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: functionFor(synthesized, 'rotate-api-key').logicalId } },
      ],
    });
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      AlarmDescription: Match.stringLikeRegexp('rotationdeadletters'),
    });
  });

  it('alarms when the key is older than the period plus a margin, not merely because no age was measured yet', () => {
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApiKeyAgeDays',
      Statistic: 'Maximum',
      Period: 86_400,
      Threshold: 33,
      ComparisonOperator: 'GreaterThanThreshold',
      // A fresh stack has no age until the first daily check: that is not a stale key.
      TreatMissingData: 'notBreaching',
    });
  });

  it('notices the age check going silent after it has reported, by INSUFFICIENT_DATA', () => {
    synthesized.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApiKeyAgeDays',
      Statistic: 'SampleCount',
      Period: 2 * 86_400,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'missing',
      AlarmDescription: Match.stringLikeRegexp('#keyagenotmeasured$'),
      InsufficientDataActions: [Match.anyValue()],
    });
  });
});
