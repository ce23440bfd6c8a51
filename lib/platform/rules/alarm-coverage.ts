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

/** One alarm's metric and one of its dimensions, as the rule compares them. */
interface AlarmDimension {
  readonly metricName: string;
  readonly name: string | undefined;
  /** The dimension's value as JSON text (a Ref or GetAtt names the resource's logical ID). */
  readonly valueText: string;
}

/**
 * The stacks' alarms during one walk of a construct tree by the pack (see {@link withAlarmIndex}).
 * Read once per stack instead of once per resource checked: walking every construct and resolving
 * every alarm's dimensions for each function, state machine and queue was a tenth of a synthesis
 * with the checks on.
 */
let alarmsByStack: WeakMap<Stack, readonly AlarmDimension[]> | undefined;

/**
 * Runs `walk` (a pack's walk of a construct tree, which adds no alarm) with each stack's alarms
 * read at most once. Outside it the rule reads them afresh for every resource.
 */
export function withAlarmIndex<T>(walk: () => T): T {
  const outer = alarmsByStack;
  alarmsByStack = new WeakMap();
  try {
    return walk();
  } finally {
    alarmsByStack = outer;
  }
}

function alarmsOf(stack: Stack): readonly AlarmDimension[] {
  const kept = alarmsByStack?.get(stack);
  if (kept !== undefined) return kept;
  const alarms: AlarmDimension[] = [];
  for (const construct of stack.node.findAll()) {
    if (!(construct instanceof CfnAlarm) || construct.metricName === undefined) continue;
    const dimensions = stack.resolve(construct.dimensions) as
      | { name?: string; value?: unknown }[]
      | undefined;
    for (const d of dimensions ?? []) {
      alarms.push({
        metricName: construct.metricName,
        name: d.name,
        valueText: JSON.stringify(d.value ?? null),
      });
    }
  }
  alarmsByStack?.set(stack, alarms);
  return alarms;
}

/** The metric names alarmed on with `dimension` naming the resource whose logical ID is `logicalId`. */
function alarmedMetrics(stack: Stack, dimension: string, logicalId: string): Set<string> {
  return new Set(
    alarmsOf(stack)
      .filter((d) => d.name === dimension && d.valueText.includes(`"${logicalId}"`))
      .map((d) => d.metricName),
  );
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
