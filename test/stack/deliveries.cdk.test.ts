/**
 * Every delivery an AWS service makes into a resource of this stack (alarms to SNS, rules to their
 * targets and dead-letter queues, schedules through their roles, Secrets Manager to the rotation
 * function, Lambda destinations, S3 to EventBridge and its access logs, logs) is found by walking
 * the synthesized template and simulated with real IAM evaluation (@cloud-copilot/iam-simulate)
 * against the resource, key, trust and identity policies, with the condition keys AWS sends.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { TemplateResolver } from '../../local/services/iam/template-resolver.ts';
import { type Synthesized, synth } from '../kit/synth.ts';
import { type Delivery, evaluateDeliveries, type Verdicts, walkDeliveries } from './delivery-walk.ts';

type Json = Record<string, unknown>;
type Resources = Record<string, { Type: string; Properties?: Json }>;

let synthesized: Synthesized;
let resolver: TemplateResolver;
let deliveries: Delivery[];
let verdicts: Verdicts;
beforeAll(async () => {
  // Both emails set, so the subscriptions are walked too.
  synthesized = synth({ notifications: { email: 'oncall@example.com', runsEmail: 'team@example.com' } });
  resolver = new TemplateResolver(synthesized.json);
  deliveries = walkDeliveries(resolver);
  verdicts = await evaluateDeliveries(resolver, deliveries);
});

const idsOfType = (resources: Resources, type: string) =>
  Object.entries(resources)
    .filter(([, r]) => r.Type === type)
    .map(([id]) => id);

/** The template with `change` applied to a deep copy of its resources. */
function variant(change: (resources: Resources) => void): TemplateResolver {
  const json = structuredClone(synthesized.json) as { Resources: Resources };
  change(json.Resources);
  return new TemplateResolver(json);
}

describe('deliveries found by walking the template', () => {
  it('covers every kind of delivery the stack configures', () => {
    const kinds = new Set(deliveries.map((d) => `${d.service} ${resolver.resource(d.from).Type}`));
    expect([...kinds].sort()).toEqual([
      'cloudwatch.amazonaws.com AWS::CloudWatch::Alarm',
      'events.amazonaws.com AWS::Events::Rule',
      'lambda.amazonaws.com AWS::Lambda::EventInvokeConfig',
      'lambda.amazonaws.com AWS::Lambda::Function',
      'logging.s3.amazonaws.com AWS::S3::Bucket',
      's3.amazonaws.com AWS::Events::Rule',
      's3.amazonaws.com AWS::S3::Bucket',
      'scheduler.amazonaws.com AWS::Scheduler::Schedule',
      'secretsmanager.amazonaws.com AWS::SecretsManager::RotationSchedule',
      'sns.amazonaws.com AWS::SNS::Subscription',
      'states.amazonaws.com AWS::StepFunctions::StateMachine',
    ]);
  });

  it('finds one notification path per alarm, and a target and dead-letter path per rule and schedule', () => {
    const resources = synthesized.json.Resources as Resources;
    const from = (type: string) => deliveries.filter((d) => resolver.resource(d.from).Type === type);
    expect(new Set(from('AWS::CloudWatch::Alarm').map((d) => d.from)).size).toBe(
      idsOfType(resources, 'AWS::CloudWatch::Alarm').length,
    );
    for (const type of ['AWS::Events::Rule', 'AWS::Scheduler::Schedule']) {
      const paths = from(type)
        .filter((d) => d.service !== 's3.amazonaws.com')
        .map((d) => d.path);
      for (const id of idsOfType(resources, type)) {
        expect(
          paths.filter((p) => p.includes(` ${id} `) && p.endsWith('DeadLetterConfig')),
          id,
        ).toHaveLength(1);
        expect(
          paths.filter((p) => p.includes(` ${id} `) && !p.endsWith('DeadLetterConfig')),
          id,
        ).toHaveLength(1);
      }
    }
    expect(from('AWS::Lambda::EventInvokeConfig')).toHaveLength(
      idsOfType(resources, 'AWS::Lambda::EventInvokeConfig').length,
    );
  });

  it('fails on a resource type it has no model for, and on a delivery inside a type it cannot model', () => {
    const stream = variant((r) => {
      r.Stream = { Type: 'AWS::Kinesis::Stream' };
    });
    expect(() => walkDeliveries(stream)).toThrow('no delivery model for AWS::Kinesis::Stream (Stream)');
    const alarmId = idsOfType(synthesized.json.Resources as Resources, 'AWS::CloudWatch::Alarm')[0] as string;
    const ec2Action = variant((r) => {
      (r[alarmId]?.Properties as Json).AlarmActions = ['arn:aws:automate:us-east-1:ec2:stop'];
    });
    expect(() => walkDeliveries(ec2Action)).toThrow('no model of an alarm action that is not an SNS topic');
    const https = variant((r) => {
      r.Hook = {
        Type: 'AWS::SNS::Subscription',
        Properties: { Protocol: 'https', TopicArn: 'arn:aws:sns:us-east-1:123456789012:t' },
      };
    });
    expect(() => walkDeliveries(https)).toThrow('no model of the https protocol');
  });
});

describe('every delivery is allowed by the policies AWS evaluates', () => {
  it('allows each request each delivery needs', () => {
    expect(deliveries.reduce((n, d) => n + d.checks.length, 0)).toBeGreaterThan(200);
    expect(verdicts.denied).toEqual([]);
  });

  it('refuses the same request on behalf of another account, wherever AWS sends aws:SourceArn/aws:SourceAccount', () => {
    expect(deliveries.flatMap((d) => d.checks).filter((c) => c.foreignContext).length).toBeGreaterThan(100);
    expect(verdicts.unscoped).toEqual([]);
  });

  it('breaks none of the AWS rules checked without simulation', () => {
    expect(verdicts.problems).toEqual([]);
  });

  it('would catch a topic policy that holds only the SSL-only deny (a topic policy replaces SNS default policy)', async () => {
    const broken = variant((r) => {
      for (const id of idsOfType(r, 'AWS::SNS::TopicPolicy')) {
        const document = r[id]?.Properties?.PolicyDocument as { Statement: Json[] };
        document.Statement = document.Statement.filter((s) => s.Effect === 'Deny');
      }
    });
    const result = await evaluateDeliveries(broken, walkDeliveries(broken));
    const alarms = idsOfType(synthesized.json.Resources as Resources, 'AWS::CloudWatch::Alarm');
    expect(result.denied.filter((d) => d.includes('cloudwatch.amazonaws.com sns:Publish'))).toHaveLength(
      alarms.length,
    );
    expect(result.denied.filter((d) => d.includes('events.amazonaws.com sns:Publish'))).toHaveLength(1);
  });

  it('would catch a key statement for EventBridge conditioned on source keys its KMS requests never carry', async () => {
    const conditioned = variant((r) => {
      for (const id of idsOfType(r, 'AWS::KMS::Key')) {
        const policy = r[id]?.Properties?.KeyPolicy as { Statement: Json[] };
        for (const s of policy.Statement)
          if (JSON.stringify(s.Principal).includes('events.amazonaws.com'))
            s.Condition = { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } };
      }
    });
    const result = await evaluateDeliveries(conditioned, walkDeliveries(conditioned));
    expect(result.denied.some((d) => d.includes('events.amazonaws.com kms:GenerateDataKey'))).toBe(true);
  });

  it('would catch a topic under the AWS managed SNS key, which CloudWatch and EventBridge cannot use', () => {
    const managed = variant((r) => {
      for (const id of idsOfType(r, 'AWS::SNS::Topic'))
        (r[id]?.Properties as Json).KmsMasterKeyId = 'alias/aws/sns';
    });
    const problems = walkDeliveries(managed).flatMap((d) => d.problems);
    expect(
      problems.some(
        (p) => p.includes('AWS managed key alias/aws/sns') && p.includes('cloudwatch.amazonaws.com'),
      ),
    ).toBe(true);
    expect(problems.some((p) => p.includes('events.amazonaws.com'))).toBe(true);
  });

  it('would catch a rule on S3 events of a bucket that does not send them to EventBridge', () => {
    const silent = variant((r) => {
      for (const id of idsOfType(r, 'AWS::S3::Bucket')) {
        const properties = r[id]?.Properties;
        if (properties) delete properties.NotificationConfiguration;
      }
    });
    const problems = walkDeliveries(silent).flatMap((d) => d.problems);
    expect(problems.filter((p) => p.includes('does not send its events to EventBridge'))).toHaveLength(
      idsOfType(synthesized.json.Resources as Resources, 'AWS::Events::Rule').filter((id) =>
        // A schedule rule (the early-end tick) has no event pattern.
        JSON.stringify(synthesized.json.Resources[id]?.Properties?.EventPattern ?? {}).includes('aws.s3'),
      ).length,
    );
  });

  it('would catch a schedule role that Scheduler may assume for any account', async () => {
    const open = variant((r) => {
      for (const id of idsOfType(r, 'AWS::IAM::Role')) {
        const trust = r[id]?.Properties?.AssumeRolePolicyDocument as { Statement: Json[] };
        for (const s of trust.Statement)
          if (JSON.stringify(s.Principal).includes('scheduler')) delete s.Condition;
      }
    });
    const result = await evaluateDeliveries(open, walkDeliveries(open));
    expect(result.unscoped.some((u) => u.includes('scheduler.amazonaws.com sts:AssumeRole'))).toBe(true);
  });
});

describe('Lambda permissions', () => {
  const servicePermissions = () =>
    Object.entries(synthesized.json.Resources as Resources).filter(
      ([, r]) =>
        r.Type === 'AWS::Lambda::Permission' && String(r.Properties?.Principal).endsWith('.amazonaws.com'),
    );

  it('scope every service principal by aws:SourceArn or aws:SourceAccount', () => {
    expect(servicePermissions().length).toBeGreaterThan(0);
    for (const [id, r] of servicePermissions())
      expect(r.Properties?.SourceArn ?? r.Properties?.SourceAccount, id).toBeDefined();
  });

  it('each serve a delivery the walk found (no permission left over from a removed path)', () => {
    for (const [id, r] of servicePermissions()) {
      const fn = resolver.resolveString(r.Properties?.FunctionName, id);
      const used = deliveries.some(
        (d) =>
          d.service === r.Properties?.Principal &&
          d.checks.some((c) => c.action === r.Properties?.Action && c.resource === fn),
      );
      expect(used, `${id} (${String(r.Properties?.Principal)})`).toBe(true);
    }
  });
});
