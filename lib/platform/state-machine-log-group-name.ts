/**
 * The name of a state machine's execution log group, and AWS's rules for it, checked at synth.
 *
 * - `/aws/vendedlogs/states/`: Step Functions must add every other log group to the account's
 *   CloudWatch Logs resource policy, which is capped at 5,120 characters; names under
 *   `/aws/vendedlogs/` need no entry. https://docs.aws.amazon.com/step-functions/latest/dg/bp-cwl.html
 * - The pipeline's name in it (the stack's name, and the pipeline's path in the stack unless it is the
 *   stack's `Default` one: pipeline-metric.ts): two stacks of the pipeline in one account and Region,
 *   or two pipelines in one stack, must not collide (a log group name is unique per account and
 *   Region).
 * - The stack's creation in it (the first group of the stack ID's UUID, resolved at deploy): the
 *   group outlives its stack (RetainExceptOnCreate, log-group-lifetime.ts), so a fixed name would
 *   make the next create of the same stack fail with "already exists" after `cdk destroy`.
 *   https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/pseudo-parameter-reference.html
 * - A log group name is 1-512 of `a-z A-Z 0-9 _ - / . #`.
 *   https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html
 * - Step Functions takes the log group's ARN (ending in `:*`) of at most 256 characters.
 *   https://docs.aws.amazon.com/step-functions/latest/apireference/API_CloudWatchLogsLogGroup.html
 */
import { Aws, Fn, Stack, Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { pipelineNameOf } from './pipeline-metric.ts';

export const STATE_MACHINE_LOG_PREFIX = '/aws/vendedlogs/states/';
const MAX_LOG_GROUP_NAME = 512;
const LOG_GROUP_NAME_CHARS = /^[\w\-/.#]+$/;
const MAX_LOG_GROUP_ARN = 256;
/** The longest partition, Region and account, for a stack deployed to an environment not known at synth. */
const WORST_CASE = { partition: 'aws-us-gov', region: 'ap-southeast-5', account: '123456789012' };

/** `-` and the 8 hex characters of the stack ID's first UUID group: a new value on every create. */
const CREATION_SUFFIX_CHARS = 9;

/** The first group of the stack ID's UUID (`arn:…:stack/<name>/<uuid>`), new on every create. */
export function stackCreationId(): string {
  return Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))));
}

/** Names given out per stack, with the path of the construct that took each. */
const taken = new WeakMap<Stack, Map<string, string>>();

/** The parts of `arn:<partition>:logs:<region>:<account>:log-group:<name>:*` other than the name. */
function arnOverhead(stack: Stack): number {
  const known = (value: string, worst: string) => (Token.isUnresolved(value) ? worst : value);
  const partition = known(stack.partition, WORST_CASE.partition);
  const region = known(stack.region, WORST_CASE.region);
  const account = known(stack.account, WORST_CASE.account);
  return `arn:${partition}:logs:${region}:${account}:log-group::*`.length;
}

/** What AWS would refuse in `name` as a state machine's log group, or undefined. */
export function stateMachineLogGroupNameProblem(name: string, arnOverheadChars: number): string | undefined {
  if (!LOG_GROUP_NAME_CHARS.test(name)) {
    return "may only contain letters, digits and '_', '-', '/', '.', '#' (CloudWatch Logs)";
  }
  const length = name.length + CREATION_SUFFIX_CHARS;
  if (length > MAX_LOG_GROUP_NAME) {
    return `is ${length} characters with its creation id; CloudWatch Logs allows ${MAX_LOG_GROUP_NAME}`;
  }
  const arnLength = length + arnOverheadChars;
  if (arnLength > MAX_LOG_GROUP_ARN) {
    return `makes a ${arnLength}-character log group ARN; Step Functions allows ${MAX_LOG_GROUP_ARN} (shorten the stack name or the workflow's construct id by ${arnLength - MAX_LOG_GROUP_ARN} characters)`;
  }
  return undefined;
}

/**
 * `/aws/vendedlogs/states/<pipeline name>-<machine>-<creation id>` (outside a pipeline, the stack's
 * name), or a synth error naming the stack and the machine when AWS would refuse it.
 */
export function stateMachineLogGroupName(scope: IConstruct, machine: string): string {
  const stack = Stack.of(scope);
  const stackName = stack.stackName;
  if (Token.isUnresolved(stackName)) {
    throw new Error(
      `${scope.node.path}: the execution log group is named after the stack, and this stack's name is not known at synth (a nested stack?)`,
    );
  }
  const name = `${STATE_MACHINE_LOG_PREFIX}${pipelineNameOf(scope) ?? stackName}-${machine}`;
  const problem = stateMachineLogGroupNameProblem(name, arnOverhead(stack));
  if (problem) {
    throw new Error(
      `${scope.node.path}: execution log group name ${JSON.stringify(name)} (stack '${stackName}', state machine '${machine}') ${problem}`,
    );
  }
  const names = taken.get(stack) ?? new Map<string, string>();
  taken.set(stack, names);
  const holder = names.get(name);
  if (holder !== undefined) {
    throw new Error(
      `${scope.node.path}: execution log group name ${JSON.stringify(name)} is already taken by ${holder}: give the workflow construct, or the pipeline holding it, a different id`,
    );
  }
  names.set(name, scope.node.path);
  return `${name}-${stackCreationId()}`;
}
