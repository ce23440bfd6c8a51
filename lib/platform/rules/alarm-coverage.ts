/**
 * cdk-nag rule `Pipeline-AlarmCoverage`: every Lambda function, Step Functions state machine and
 * SQS queue in the stack has the alarms an on-call engineer relies on. A resource without them
 * fails the synth, so a new workflow cannot ship silent.
 *
 * | resource | alarms on (CloudWatch metric names) |
 * |---|---|
 * | `AWS::Lambda::Function` | `Errors`, `Throttles` |
 * | `AWS::StepFunctions::StateMachine` | `ExecutionsFailed`, `ExecutionsTimedOut`, `ExecutionsAborted` |
 * | `AWS::SQS::Queue` (every queue here is a dead-letter queue) | `ApproximateNumberOfMessagesVisible` |
 *
 * An alarm counts when its dimension names the resource (`FunctionName`, `StateMachineArn`,
 * `QueueName`). Functions CDK itself adds for custom resources are not `CfnFunction`s and are out
 * of scope.
 */
import { type CfnResource, Stack } from 'aws-cdk-lib';
import { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { CfnQueue } from 'aws-cdk-lib/aws-sqs';
import { CfnStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { NagRuleCompliance } from 'cdk-nag';
import { ruleCompliance } from './cdk-nag.ts';

/** The metrics each kind of resource must alarm on, and the dimension that names it. */
export const REQUIRED_ALARMS = {
  function: { dimension: 'FunctionName', metrics: ['Errors', 'Throttles'] },
  stateMachine: {
    dimension: 'StateMachineArn',
    metrics: ['ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionsAborted'],
  },
  queue: { dimension: 'QueueName', metrics: ['ApproximateNumberOfMessagesVisible'] },
} as const;

function requirementFor(node: CfnResource) {
  if (node instanceof CfnFunction) return REQUIRED_ALARMS.function;
  if (node instanceof CfnStateMachine) return REQUIRED_ALARMS.stateMachine;
  if (node instanceof CfnQueue) return REQUIRED_ALARMS.queue;
  return undefined;
}

/** The metric names alarmed on with `dimension` naming the resource whose logical ID is `logicalId`. */
function alarmedMetrics(stack: Stack, dimension: string, logicalId: string): Set<string> {
  const metrics = new Set<string>();
  for (const construct of stack.node.findAll()) {
    if (!(construct instanceof CfnAlarm) || construct.metricName === undefined) continue;
    const dimensions = stack.resolve(construct.dimensions) as
      | { name?: string; value?: unknown }[]
      | undefined;
    const named = (dimensions ?? []).some(
      (d) => d.name === dimension && JSON.stringify(d.value ?? null).includes(`"${logicalId}"`),
    );
    if (named) metrics.add(construct.metricName);
  }
  return metrics;
}

export default Object.defineProperty(
  (node: CfnResource): NagRuleCompliance => {
    const requirement = requirementFor(node);
    if (requirement === undefined) return ruleCompliance().NOT_APPLICABLE;
    const stack = Stack.of(node);
    const alarmed = alarmedMetrics(stack, requirement.dimension, stack.resolve(node.logicalId) as string);
    return requirement.metrics.every((metric) => alarmed.has(metric))
      ? ruleCompliance().COMPLIANT
      : ruleCompliance().NON_COMPLIANT;
  },
  'name',
  { value: 'AlarmCoverage' },
);
