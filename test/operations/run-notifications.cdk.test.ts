import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { Match } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIST_RUN_FINISHED } from '#lambdas/domain-list/contracts';
import { RUN_EVENT_SOURCE, type RunEventName } from '#lambdas/platform/runs/run-events';
import { eventBridgeRunEvents } from '#lambdas/platform/runtime/event-bridge';
import { WATCHLIST_RUN_FINISHED } from '#lambdas/watchlist/contracts';
import { matchesEventPattern } from '../kit/event-pattern.ts';
import { functionFor, grantsOf, resourcesAllowed, type Synthesized, synth } from '../kit/synth.ts';

let synthesized: Synthesized;
beforeAll(() => {
  synthesized = synth({ notifications: { runsEmail: 'team@example.com' } });
});

const runRule = () => {
  const found = Object.entries(synthesized.json.Resources).filter(
    ([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('RunNotifications'),
  );
  expect(found).toHaveLength(1);
  return found[0]?.[1]?.Properties as Record<string, unknown>;
};

describe('RunNotifications', () => {
  it('routes every run-finished event to the runs topic, with a DLQ and bounded retries', () => {
    const rule = runRule();
    expect(rule.EventPattern).toEqual({
      source: [RUN_EVENT_SOURCE],
      'detail-type': ['DomainListRunFinished', 'WatchlistRunFinished'],
    });
    const [target] = rule.Targets as Record<string, unknown>[];
    expect(target).toMatchObject({
      Arn: { Ref: expect.stringMatching(/^RunNotificationsTopic/) },
      DeadLetterConfig: {
        Arn: { 'Fn::GetAtt': [expect.stringMatching(/^RunNotificationsDeadLetterQueue/), 'Arn'] },
      },
      RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 21600 },
    });
  });

  it("matches the event each summary function puts, under its workflow's name, and no other", async () => {
    // Prepare: the publisher the summary handlers build, over a client that keeps what it is sent.
    const eventBridge = mockClient(EventBridgeClient);
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
    const client = new EventBridgeClient({ region: 'us-east-1' });
    const put = async (name: RunEventName) => {
      eventBridge.resetHistory();
      await eventBridgeRunEvents(client, name.detailType).runFinished({
        kind: name.kind,
        runId: 'run-1',
        trigger: 'upload',
        counts: { succeeded: 1 },
        summary: 's3://results/runs/run-1/summary.json',
        finishedAt: '2026-01-01T00:00:00.000Z',
        refused: null,
      });
      const [entry] = eventBridge.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries ?? [];
      // As EventBridge delivers it to the rule: the entry's fields under their event names.
      return {
        source: entry?.Source,
        'detail-type': entry?.DetailType,
        detail: JSON.parse(entry?.Detail ?? '{}'),
      };
    };

    try {
      // Act
      const events = [await put(LIST_RUN_FINISHED), await put(WATCHLIST_RUN_FINISHED)];
      const stranger = await put({ kind: 'other', detailType: 'OtherRunFinished' });

      // Assess
      const pattern = runRule().EventPattern as Record<string, never>;
      expect(events.map((event) => [event['detail-type'], event.detail.kind])).toEqual([
        ['DomainListRunFinished', 'domain-list'],
        ['WatchlistRunFinished', 'watchlist'],
      ]);
      expect(events.map((event) => matchesEventPattern(pattern, event))).toEqual([true, true]);
      expect(matchesEventPattern(pattern, stranger)).toBe(false);
    } finally {
      eventBridge.restore();
    }
  });

  it('says the counts and where the summary is, and nothing else of the run', () => {
    const [target] = runRule().Targets as {
      InputTransformer: { InputPathsMap: Record<string, string>; InputTemplate: string };
    }[];
    const paths = Object.values(target?.InputTransformer.InputPathsMap ?? {}).sort();
    expect(paths).toEqual(
      [
        '$.detail-type',
        '$.detail.counts',
        '$.detail.finishedAt',
        '$.detail.kind',
        '$.detail.refused',
        '$.detail.runId',
        '$.detail.summary',
        '$.detail.trigger',
      ].sort(),
    );
  });

  it('lets EventBridge publish to the runs topic for this rule of this account only', () => {
    const ruleId = Object.entries(synthesized.json.Resources).find(
      ([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('RunNotifications'),
    )?.[0];
    const policies = Object.values(synthesized.json.Resources).filter(
      (r) =>
        r.Type === 'AWS::SNS::TopicPolicy' &&
        JSON.stringify(r.Properties?.Topics).includes('RunNotificationsTopic'),
    );
    expect(policies).toHaveLength(1);
    const document = policies[0]?.Properties?.PolicyDocument as { Statement: Record<string, unknown>[] };
    const allows = document.Statement.filter((s) => s.Effect === 'Allow');
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sns:Publish',
        Condition: {
          ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [ruleId, 'Arn'] } },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      }),
    ]);
  });

  it('lets only the two summary functions and the rotation function put events, on the default bus', () => {
    for (const [id, resource] of Object.entries(synthesized.json.Resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const text = JSON.stringify(resource.Properties);
      if (!text.includes('events:PutEvents')) continue;
      expect(id).toMatch(
        /^(DomainListScanWriteListSummary|WatchlistRunWriteWatchlistSummary|KeyRotationRotateFunction)/,
      );
    }
    for (const handler of ['write-list-summary', 'write-watchlist-summary']) {
      const grants = grantsOf(synthesized, functionFor(synthesized, handler).roleLogicalId);
      expect(resourcesAllowed(grants, 'events:PutEvents'), handler).toEqual([
        'arn:<Ref:AWS::Partition>:events:<Ref:AWS::Region>:<Ref:AWS::AccountId>:event-bus/default',
      ]);
    }
  });

  it('subscribes the configured address to the runs topic only', () => {
    synthesized.template.hasResourceProperties('AWS::SNS::Subscription', {
      Endpoint: 'team@example.com',
      TopicArn: { Ref: Match.stringLikeRegexp('^RunNotificationsTopic') },
    });
    synthesized.template.resourceCountIs('AWS::SNS::Subscription', 1);
  });
});
