/**
 * PipelineStateMachine on a bare Stack: the logging, tracing, timeout and alarms every workflow
 * gets, and the log group name checks it refuses to synthesize past. The definition is one Pass
 * state; the functions are real handlers with bundling skipped (test/kit/stack.ts).
 */
import { Duration, NestedStack, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Pass } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type HandlerFile, registeredHandler } from '../../lambdas/registry.ts';
import { PipelineFunction } from '../../lib/platform/pipeline-function.ts';
import {
  PipelineStateMachine,
  type PipelineStateMachineProps,
} from '../../lib/platform/pipeline-state-machine.ts';
import { bareStack, FIRST_SYNTH_TIMEOUT_MS, withCreationId } from '../kit/stack.ts';

/** A workflow construct holding one PipelineStateMachine, as the workflows build theirs. */
function workflowIn(
  scope: Construct,
  workflowId: string,
  props: Partial<PipelineStateMachineProps> & { handlerFile?: HandlerFile } = {},
): PipelineStateMachine {
  const workflow = new Construct(scope, workflowId);
  const functions = props.handlerFile
    ? [
        new PipelineFunction(workflow, 'Fn', {
          handler: registeredHandler(props.handlerFile),
          timeout: Duration.seconds(30),
        }),
      ]
    : [];
  return new PipelineStateMachine(workflow, 'StateMachine', {
    definition: new Pass(workflow, 'Start'),
    comment: 'Scans one domain',
    timeout: Duration.hours(1),
    functions,
    ...props,
  });
}

function machineTemplate(
  props: Partial<PipelineStateMachineProps> & { handlerFile?: HandlerFile } = {},
): Template {
  const stack = bareStack('Pipeline');
  workflowIn(stack, 'ScanDomain', props);
  return Template.fromStack(stack);
}

function definitionOf(template: Template): Record<string, unknown> {
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  const body = machine?.Properties?.DefinitionString as string | { 'Fn::Join': [string, unknown[]] };
  const text = typeof body === 'string' ? body : body['Fn::Join'][1].join(body['Fn::Join'][0]);
  return JSON.parse(text) as Record<string, unknown>;
}

function refusal(build: (stack: Stack) => void): string {
  try {
    build(bareStack('Pipeline'));
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected PipelineStateMachine to refuse');
}

beforeAll(() => {
  machineTemplate();
}, FIRST_SYNTH_TIMEOUT_MS);

describe('PipelineStateMachine defaults', () => {
  it('is a Standard machine with X-Ray tracing and every event logged without execution data', () => {
    const template = machineTemplate();
    const [logGroupId] = Object.keys(template.findResources('AWS::Logs::LogGroup'));

    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ALL',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logGroupId, 'Arn'] } } }],
      },
    });
  });

  it('logs to /aws/vendedlogs/states/<stack>-<workflow>-<creation id>, kept three months', () => {
    machineTemplate().hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: withCreationId('/aws/vendedlogs/states/Pipeline-ScanDomain'),
      RetentionInDays: 90,
    });
    machineTemplate({ logRetention: RetentionDays.ONE_YEAR }).hasResourceProperties('AWS::Logs::LogGroup', {
      RetentionInDays: 365,
    });
  });

  it('writes the comment and the execution timeout into the definition', () => {
    const definition = definitionOf(machineTemplate());

    expect(definition).toMatchObject({ Comment: 'Scans one domain', TimeoutSeconds: 3600, StartAt: 'Start' });
  });

  it('leaves the execution timeout out only for a machine declared unbounded', () => {
    expect(definitionOf(machineTemplate({ timeout: 'unbounded' }))).not.toHaveProperty('TimeoutSeconds');
  });

  it('masks email addresses in its execution logs when one of its functions may log personal data', () => {
    machineTemplate({ handlerFile: 'start-scan' }).hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: withCreationId('/aws/vendedlogs/states/Pipeline-ScanDomain'),
      DataProtectionPolicy: Match.objectLike({ Name: 'mask-email-addresses' }),
    });
    machineTemplate({ handlerFile: 'write-scan-manifest' }).hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: withCreationId('/aws/vendedlogs/states/Pipeline-ScanDomain'),
      DataProtectionPolicy: Match.absent(),
    });
  });

  it('alarms on the first failed execution in an hour and on any timed-out or aborted one', () => {
    const template = machineTemplate();

    template.resourceCountIs('AWS::CloudWatch::Alarm', 3);
    const expected = [
      ['ExecutionsFailed', 3600, 'executions-failed'],
      ['ExecutionsTimedOut', 300, 'executions-timed-out'],
      ['ExecutionsAborted', 300, 'executions-aborted'],
    ] as const;
    for (const [metric, period, section] of expected) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/States',
        MetricName: metric,
        Period: period,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmDescription: Match.stringLikeRegexp(
          `^ScanDomain executions .* Runbook: docs/runbooks/alarms.md#${section}$`,
        ),
      });
    }
  });

  it('takes the failed-executions threshold from its props', () => {
    machineTemplate({ alarms: { failedThreshold: 10 } }).hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ExecutionsFailed',
      Threshold: 10,
    });
  });
});

describe('PipelineStateMachine log group name checks', () => {
  it('refuses a second machine whose workflow id gives the same log group name in one stack', () => {
    const message = refusal((stack) => {
      workflowIn(new Construct(stack, 'Scans'), 'ScanDomain');
      workflowIn(new Construct(stack, 'MoreScans'), 'ScanDomain');
    });

    expect(message).toBe(
      'Pipeline/MoreScans/ScanDomain/StateMachine: execution log group name "/aws/vendedlogs/states/Pipeline-ScanDomain" is already taken by Pipeline/Scans/ScanDomain/StateMachine: give the workflow construct, or the pipeline holding it, a different id',
    );
  });

  it('refuses a workflow id with characters CloudWatch Logs does not allow', () => {
    expect(refusal((stack) => workflowIn(stack, 'Scan Domain'))).toBe(
      `Pipeline/Scan Domain/StateMachine: execution log group name "/aws/vendedlogs/states/Pipeline-Scan Domain" (stack 'Pipeline', state machine 'Scan Domain') may only contain letters, digits and '_', '-', '/', '.', '#' (CloudWatch Logs)`,
    );
  });

  it('refuses a name whose log group ARN would be longer than Step Functions takes', () => {
    const id = 'W'.repeat(200);

    expect(refusal((stack) => workflowIn(stack, id))).toMatch(
      /^Pipeline\/W+\/StateMachine: execution log group name ".+" \(stack 'Pipeline', state machine 'W+'\) makes a \d+-character log group ARN; Step Functions allows 256 \(shorten the stack name or the workflow's construct id by \d+ characters\)$/,
    );
  });

  it('refuses a name longer than CloudWatch Logs allows', () => {
    const id = 'W'.repeat(600);

    expect(refusal((stack) => workflowIn(stack, id))).toMatch(
      /\(stack 'Pipeline', state machine 'W+'\) is 641 characters with its creation id; CloudWatch Logs allows 512$/,
    );
  });

  it('refuses a stack whose name is not known at synth (a nested stack)', () => {
    expect(refusal((stack) => workflowIn(new NestedStack(stack, 'Nested'), 'ScanDomain'))).toBe(
      "Pipeline/Nested/ScanDomain/StateMachine: the execution log group is named after the stack, and this stack's name is not known at synth (a nested stack?)",
    );
  });
});
