import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsAllowed,
  functionFor,
  grantsOf,
  resourcesAllowed,
  type Synthesized,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;
beforeAll(() => {
  synthesized = synth();
});

const parameterId = () => {
  const ids = Object.entries(synthesized.json.Resources)
    .filter(([, r]) => r.Type === 'AWS::SSM::Parameter')
    .map(([id]) => id);
  expect(ids).toHaveLength(1);
  return ids[0] as string;
};
const idStartingWith = (type: string, prefix: string) =>
  Object.entries(synthesized.json.Resources).find(([id, r]) => r.Type === type && id.startsWith(prefix))?.[0];

describe('the pause switch', () => {
  it('is one parameter that can only say running or paused, and starts as running', () => {
    expect(synthesized.json.Resources[parameterId()]?.Properties).toMatchObject({
      Type: 'String',
      Value: 'running',
      AllowedPattern: '^(running|paused)$',
    });
    synthesized.template.hasOutput('PauseParameterName', { Value: { Ref: parameterId() } });
  });

  it.each(['start-domain-list', 'start-watchlist'])(
    'is read by %s, with GetParameter on it alone',
    (handler) => {
      const fn = functionFor(synthesized, handler);
      expect(fn.environment.PAUSE_PARAMETER_NAME).toEqual({ Ref: parameterId() });
      const grants = grantsOf(synthesized, fn.roleLogicalId);
      expect(actionsAllowed(grants).filter((a) => a.startsWith('ssm:'))).toEqual(['ssm:GetParameter']);
      expect(resourcesAllowed(grants, 'ssm:GetParameter')).toHaveLength(1);
      expect(resourcesAllowed(grants, 'ssm:GetParameter')[0]).toContain(parameterId());
    },
  );

  it('lets the resume function drain only the intake dead-letter queues and invoke only the intakes', () => {
    const fn = functionFor(synthesized, 'resume-paused-starts');
    const grants = grantsOf(synthesized, fn.roleLogicalId);
    const queues = ['IntakeDeadLetterQueue', 'WatchlistIntakeDeadLetterQueue'].map((p) =>
      idStartingWith('AWS::SQS::Queue', p),
    );
    const intakes = ['IntakeStartDomainListFunction', 'WatchlistIntakeStartWatchlistFunction'].map((p) =>
      idStartingWith('AWS::Lambda::Function', p),
    );
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage']) {
      expect(resourcesAllowed(grants, action).sort(), action).toEqual(
        queues.map((q) => `<GetAtt:${q}.Arn>`).sort(),
      );
    }
    expect(resourcesAllowed(grants, 'lambda:InvokeFunction').sort()).toEqual(
      intakes.map((f) => `<GetAtt:${f}.Arn>`).sort(),
    );
    expect(fn.environment.HELD_START_QUEUE_URLS).toBeDefined();
  });

  it('resumes on the parameter change event and every 15 minutes, with retries bounded and a DLQ', () => {
    const rule = Object.entries(synthesized.json.Resources).find(
      ([id, r]) => r.Type === 'AWS::Events::Rule' && id.startsWith('PauseChanged'),
    )?.[1]?.Properties as Record<string, unknown>;
    expect(rule.EventPattern).toEqual({
      source: ['aws.ssm'],
      'detail-type': ['Parameter Store Change'],
      detail: { name: [{ Ref: parameterId() }], operation: ['Update'] },
    });
    expect((rule.Targets as Record<string, unknown>[])[0]).toMatchObject({
      RetryPolicy: { MaximumRetryAttempts: 2 },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [expect.stringMatching(/^PauseDeadLetterQueue/), 'Arn'] } },
    });
    const schedule = Object.entries(synthesized.json.Resources).find(
      ([id, r]) => r.Type === 'AWS::Scheduler::Schedule' && id.startsWith('PauseSafetyNetSchedule'),
    )?.[1]?.Properties;
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(15 minutes)',
      Target: { RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 3600 } },
    });
  });
});
