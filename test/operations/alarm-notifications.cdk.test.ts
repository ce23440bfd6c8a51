import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { type Synthesized, synth } from '../kit/synth.ts';

let synthesized: Synthesized;
beforeAll(() => {
  synthesized = synth({ notifications: { email: 'oncall@example.com' } });
});

const topicId = (s: Synthesized) => {
  const ids = Object.entries(s.json.Resources)
    .filter(([id, r]) => r.Type === 'AWS::SNS::Topic' && id.startsWith('Alarms'))
    .map(([id]) => id);
  expect(ids).toHaveLength(1);
  return ids[0] as string;
};

describe('AlarmNotifications', () => {
  it("encrypts the topic with its own rotating key, which CloudWatch may use for this account's alarms only", () => {
    const alarmsInThisAccount = {
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': ['', Match.arrayWith([':cloudwatch:', ':alarm:*'])],
        },
      },
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    };
    synthesized.template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^AlarmsKey'), 'Arn'] },
    });
    synthesized.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: alarmsInThisAccount,
          }),
        ]),
      },
    });
    // A topic policy replaces SNS's default one: without this Allow no alarm could notify
    // (test/stack/deliveries.cdk.test.ts simulates it).
    synthesized.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId(synthesized) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: alarmsInThisAccount,
          }),
        ]),
      },
    });
  });

  it('sends every alarm of the stack to the topic, on ALARM and on OK', () => {
    const topic = topicId(synthesized);
    const alarms = Object.entries(synthesized.json.Resources).filter(
      ([, r]) => r.Type === 'AWS::CloudWatch::Alarm',
    );
    expect(alarms.length).toBeGreaterThan(40);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions, id).toEqual([{ Ref: topic }]);
      expect(alarm.Properties?.OKActions, id).toEqual([{ Ref: topic }]);
      expect(alarm.Properties?.AlarmDescription, id).toMatch(/Runbook: docs\/runbooks\/[\w-]+\.md#[\w-]+$/);
      // Only an alarm whose signal is silence (missing data) also notifies on INSUFFICIENT_DATA.
      const silence = alarm.Properties?.TreatMissingData === 'missing';
      expect(alarm.Properties?.InsufficientDataActions, id).toEqual(silence ? [{ Ref: topic }] : undefined);
    }
  });

  it('links every alarm to a runbook section that exists', () => {
    const anchors = new Map<string, Set<string>>();
    const sectionsOf = (file: string) => {
      let found = anchors.get(file);
      if (found === undefined) {
        // GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
        found = new Set(
          readFileSync(join(REPO_ROOT, file), 'utf8')
            .split('\n')
            .filter((line) => line.startsWith('#'))
            .map((line) =>
              line
                .replace(/^#+\s*/, '')
                .toLowerCase()
                .replace(/[^\w\s-]/g, '')
                .trim()
                .replace(/\s/g, '-'),
            ),
        );
        anchors.set(file, found);
      }
      return found;
    };
    for (const [id, alarm] of Object.entries(synthesized.json.Resources)) {
      if (alarm.Type !== 'AWS::CloudWatch::Alarm') continue;
      const [, file, anchor] =
        /Runbook: (docs\/runbooks\/[\w-]+\.md)#([\w-]+)$/.exec(String(alarm.Properties?.AlarmDescription)) ??
        [];
      expect(file, id).toBeDefined();
      expect(existsSync(join(REPO_ROOT, file as string)), `${id}: ${file}`).toBe(true);
      expect([...sectionsOf(file as string)], `${id}: ${file}#${anchor}`).toContain(anchor);
    }
  });

  it('subscribes the configured address, and nobody by default', () => {
    synthesized.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: topicId(synthesized) },
    });
    synth().template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('refuses an address that is not one, naming the setting', () => {
    expect(() => parsePipelineConfig({ notifications: { email: 'oncall' } }, 'test')).toThrow(
      /pipeline\.notifications\.email/,
    );
  });
});
