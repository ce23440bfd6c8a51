/**
 * AWS's documented limits on what the settings turn into, refused at synth with the setting's name
 * rather than by CloudFormation at deploy: Secrets Manager's rotation schedule and window
 * (lib/config/rotation-rules.ts), mirror keys (lib/config/rotation-schema.ts), and the state
 * machines' log group names (lib/platform/state-machine-log-group-name.ts).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Pass } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { maxKeyAgeDays } from '../../lib/config/rotation-schema.ts';
import { PipelineStateMachine } from '../../lib/platform/pipeline-state-machine.ts';
import {
  STATE_MACHINE_LOG_PREFIX,
  stateMachineLogGroupNameProblem,
} from '../../lib/platform/state-machine-log-group-name.ts';
import { withCreationId } from '../kit/stack.ts';
import { type Synthesized, synth } from '../kit/synth.ts';
import { testOutdir } from '../kit/synth-outdir.ts';

const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:integrations/vendor-key-AbCdEf';
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

/** The problems a rotation section is refused with, as `setting problem` lines. */
function rotationProblems(rotation: Record<string, unknown>): string[] {
  try {
    parsePipelineConfig({ rotation }, 'test');
  } catch (error) {
    if (!(error instanceof PipelineConfigError)) throw error;
    return error.issues.map((issue) => `${issue.setting} ${issue.problem}`);
  }
  return [];
}

describe('Secrets Manager rotation rules, refused at synth naming the setting', () => {
  it.each([
    // RotationRulesType: "must not extend into ... the next UTC day".
    [
      'a window past midnight UTC',
      { schedule: 'cron(0 22 * * ? *)', windowHours: 6, maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.windowHours must not reach into the next UTC day: .* at 22:00 UTC, so at most 2 \(got 6\)$/,
    ],
    // ... "or the next rotation window": an hourly rate.
    [
      'a window longer than an hourly rate',
      { schedule: 'rate(4 hours)', windowHours: 6 },
      /^pipeline\.rotation\.windowHours must not reach into the next rotation window: rate\(4 hours\) opens one every 4 hours, so at most 4 \(got 6\)$/,
    ],
    // ... and two windows of one cron day.
    [
      'a window overlapping the next cron window',
      { schedule: 'cron(0 4,10 * * ? *)', windowHours: 8, maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.windowHours must not reach into the next rotation window: .* at 04:00 and 10:00 UTC, so at most 6 \(got 8\)$/,
    ],
    // Hour increments reset each day: 4/12 is 04:00 and 16:00.
    [
      'an hour increment whose last window passes midnight',
      { schedule: 'cron(0 4/12 * * ? *)', windowHours: 10, maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.windowHours must not reach into the next UTC day: .* at 16:00 UTC, so at most 8 \(got 10\)$/,
    ],
    [
      'a cron minute other than 0',
      { schedule: 'cron(30 4 * * ? *)', maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.schedule cron minutes must be 0/,
    ],
    [
      'a cron year other than *',
      { schedule: 'cron(0 4 * * ? 2027)', maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.schedule cron year must be \*/,
    ],
    [
      'a W day-of-month',
      { schedule: 'cron(0 4 15W * ? *)', maxKeyAgeDays: 40 },
      /^pipeline\.rotation\.schedule cron day-of-month may not use W/,
    ],
    [
      'a cron out of range',
      { schedule: 'cron(0 25 * * ? *)', maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.schedule cron hours field '25'/,
    ],
    [
      'a cron every two hours',
      { schedule: 'cron(0 */2 * * ? *)', maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.schedule must not rotate more often than every 4 hours: .* 2 hours apart$/,
    ],
    [
      'a daily cron two hours apart across midnight',
      { schedule: 'cron(0 0,22 * * ? *)', windowHours: 1, maxKeyAgeDays: 2 },
      /^pipeline\.rotation\.schedule must not rotate more often than every 4 hours: .* 2 hours apart$/,
    ],
    [
      'rate(3 hours)',
      { schedule: 'rate(3 hours)' },
      /^pipeline\.rotation\.schedule must rotate every 4 to 23 hours/,
    ],
    [
      'rate(1000 days)',
      { schedule: 'rate(1000 days)', maxKeyAgeDays: 1100 },
      /^pipeline\.rotation\.schedule must rotate every 1 to 999 days$/,
    ],
    // Lambda's timeout: the rotation function's first attempt must hold the whole window.
    [
      'a key propagation window the rotation function cannot hold',
      { keyPropagationSeconds: 481 },
      /^pipeline\.rotation\.keyPropagationSeconds must be whole seconds from 0 to 480: the rotation function's 600 s timeout must hold the whole window and 120 s for the rotate call and storing its answer \(got 481\)$/,
    ],
    [
      'a fractional key propagation window',
      { keyPropagationSeconds: 1.5 },
      /^pipeline\.rotation\.keyPropagationSeconds must be whole seconds from 0 to 480/,
    ],
    [
      'a window of 0 hours',
      { windowHours: 0 },
      /^pipeline\.rotation\.windowHours must be between 1 and 24 \(got 0\)$/,
    ],
    [
      'a cron without maxKeyAgeDays',
      { schedule: 'cron(0 4 1 * ? *)' },
      /^pipeline\.rotation\.maxKeyAgeDays is required with a cron schedule/,
    ],
    [
      'a fractional maxKeyAgeDays',
      { maxKeyAgeDays: 31.5 },
      /^pipeline\.rotation\.maxKeyAgeDays must be a whole number \(got 31\.5\)$/,
    ],
    [
      'a maxKeyAgeDays the rate reaches',
      { schedule: 'rate(30 days)', maxKeyAgeDays: 30 },
      /^pipeline\.rotation\.maxKeyAgeDays must be more than the 30 days between rotations/,
    ],
    [
      'a mirror key given as an alias',
      {
        mirrorSecrets: [{ secretArn: SECRET, kmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:alias/mirror' }],
      },
      /^pipeline\.rotation\.mirrorSecrets\[0\]\.kmsKeyArn must be a KMS key ARN/,
    ],
    [
      'a mirror key in another Region',
      { mirrorSecrets: [{ secretArn: SECRET, kmsKeyArn: KEY.replace('eu-west-1', 'us-east-1') }] },
      /^pipeline\.rotation\.mirrorSecrets\[0\]\.kmsKeyArn must be in the secret's Region eu-west-1 \(got a key in us-east-1\)$/,
    ],
    [
      'a mirror that is not a secret ARN',
      { mirrorSecrets: ['my-secret'] },
      /^pipeline\.rotation\.mirrorSecrets\[0\] must be a Secrets Manager secret ARN/,
    ],
    [
      'a mirror listed twice',
      { mirrorSecrets: [{ secretArn: SECRET, kmsKeyArn: KEY }], mirrorSecretArns: [SECRET] },
      /^pipeline\.rotation\.mirrorSecrets lists ".*" more than once/,
    ],
  ])('refuses %s', (_name, rotation, expected) => {
    const problems = rotationProblems(rotation);
    expect(
      problems.some((line) => expected.test(line)),
      problems.join('\n'),
    ).toBe(true);
  });

  it.each([
    ['an hourly rate with a window as long as its period', { schedule: 'rate(4 hours)', windowHours: 4 }, 4],
    ['an hourly rate without maxKeyAgeDays', { schedule: 'rate(19 hours)' }, 4],
    [
      'a window that closes at midnight',
      { schedule: 'cron(0 20 * * ? *)', windowHours: 4, maxKeyAgeDays: 2 },
      2,
    ],
    [
      'an hour increment whose last window closes at midnight',
      { schedule: 'cron(0 4/12 * * ? *)', windowHours: 8, maxKeyAgeDays: 2 },
      2,
    ],
    ['a daily rate with a whole-day window', { schedule: 'rate(1 day)', windowHours: 24 }, 4],
    [
      'the first Sunday of the month all day',
      { schedule: 'cron(0 0 ? * SUN#1 *)', windowHours: 24, maxKeyAgeDays: 40 },
      40,
    ],
    ['rate(999 days)', { schedule: 'rate(999 days)' }, 1002],
  ])('accepts %s (key-age alarm after %#)', (_name, rotation, ageDays) => {
    expect(rotationProblems(rotation)).toEqual([]);
    const config = parsePipelineConfig({ rotation }, 'test');
    expect(maxKeyAgeDays(config.rotation)).toBe(ageDays);
    expect(Number.isInteger(maxKeyAgeDays(config.rotation))).toBe(true);
  });

  it('reads mirrors in both forms, with their keys', () => {
    const other = SECRET.replace('vendor-key', 'other-key');
    const config = parsePipelineConfig(
      { rotation: { mirrorSecrets: [{ secretArn: SECRET, kmsKeyArn: KEY }], mirrorSecretArns: [other] } },
      'test',
    );
    expect(config.rotation.mirrorSecrets).toEqual([
      { secretArn: SECRET, kmsKeyArn: KEY },
      { secretArn: other },
    ]);
  });
});

describe('state machine log group names', () => {
  const name = `${STATE_MACHINE_LOG_PREFIX}SecurityPipeline-ScanDomain`;
  // `arn:aws-us-gov:logs:ap-southeast-5:123456789012:log-group::*`
  const worstCaseArn = 60;

  it.each([
    ['a vended name', name, worstCaseArn, undefined],
    ['a space', `${name} 2`, worstCaseArn, /may only contain letters, digits and '_', '-', '\/', '\.', '#'/],
    [
      '513 characters',
      `${STATE_MACHINE_LOG_PREFIX}${'a'.repeat(481)}`,
      0,
      /is 513 characters with its creation id; CloudWatch Logs allows 512/,
    ],
    [
      'an ARN past 256 characters',
      `${STATE_MACHINE_LOG_PREFIX}${'a'.repeat(171)}`,
      worstCaseArn,
      /makes a 263-character log group ARN; Step Functions allows 256 \(shorten the stack name or the workflow's construct id by 7 characters\)/,
    ],
    [
      'an ARN of exactly 256 characters',
      `${STATE_MACHINE_LOG_PREFIX}${'a'.repeat(164)}`,
      worstCaseArn,
      undefined,
    ],
  ])('%s', (_case, logGroupName, overhead, expected) => {
    const problem = stateMachineLogGroupNameProblem(logGroupName, overhead);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  /** A stack with one PipelineStateMachine owned by a construct named `workflow`. */
  function machineIn(scope: Construct, workflow: string): PipelineStateMachine {
    return new PipelineStateMachine(new Construct(scope, workflow), 'StateMachine', {
      definition: new Pass(scope, `${workflow}Start`),
      comment: 'test',
      timeout: 'unbounded',
      functions: [],
    });
  }

  it("names the log group after the stack's name (not its construct id) and the workflow", () => {
    const stack = new Stack(new App({ outdir: testOutdir() }), 'Dev', { stackName: 'security-pipeline-dev' });
    const machine = machineIn(stack, 'ScanDomain');
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: withCreationId('/aws/vendedlogs/states/security-pipeline-dev-ScanDomain'),
    });
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: {
        Destinations: [
          {
            CloudWatchLogsLogGroup: {
              LogGroupArn: {
                'Fn::GetAtt': [stack.getLogicalId(machine.logGroup.node.defaultChild as never), 'Arn'],
              },
            },
          },
        ],
      },
    });
  });

  it('fails synth, naming stack and workflow, when the log group ARN would pass 256 characters', () => {
    const stack = new Stack(new App({ outdir: testOutdir() }), 'Long', {
      stackName: `p${'-x'.repeat(63)}`,
      env: { account: '123456789012', region: 'eu-west-1' },
    });
    expect(() => machineIn(stack, `Workflow${'W'.repeat(72)}`)).toThrow(
      /Long\/WorkflowW+\/StateMachine: execution log group name "\/aws\/vendedlogs\/states\/p(-x)+-WorkflowW+" \(stack 'p(-x)+', state machine 'WorkflowW+'\) makes a 295-character log group ARN; Step Functions allows 256 \(shorten the stack name or the workflow's construct id by 39 characters\)/,
    );
  });

  it('fails synth when two workflows of one stack would share a log group', () => {
    const stack = new Stack(new App({ outdir: testOutdir() }), 'Twice');
    machineIn(stack, 'ScanDomain');
    expect(() => machineIn(new Construct(stack, 'Other'), 'ScanDomain')).toThrow(
      /"\/aws\/vendedlogs\/states\/Twice-ScanDomain" is already taken by Twice\/ScanDomain\/StateMachine/,
    );
  });

  describe('in the pipeline stack', () => {
    let synthesized: Synthesized;
    beforeAll(() => {
      synthesized = synth();
    });

    it('gives every state machine a vended log group named after the stack', () => {
      const names = Object.values(synthesized.json.Resources)
        .filter((resource) => resource.Type === 'AWS::Logs::LogGroup')
        .map((resource) => resource.Properties?.LogGroupName)
        .filter((logGroupName) => JSON.stringify(logGroupName ?? '').includes('/aws/vendedlogs/'));
      expect(names).toEqual(
        expect.arrayContaining(
          ['BreachReport', 'DomainListScan', 'ScanDomain', 'WatchlistRun'].map((workflow) =>
            withCreationId(`/aws/vendedlogs/states/SecurityPipeline-${workflow}`),
          ),
        ),
      );
      expect(names).toHaveLength(4);
      synthesized.template.resourcePropertiesCountIs(
        'AWS::StepFunctions::StateMachine',
        { LoggingConfiguration: Match.objectLike({ Level: 'ALL' }) },
        4,
      );
    });
  });
});
