/**
 * cdk-nag rule `Pipeline-FixedNameLifetime`: a resource that outlives its stack has no fixed
 * physical name, because the next create of the same stack would fail with "already exists"
 * (after `cdk destroy`, or after a rolled-back first create with `Retain`).
 *
 * A resource outlives its stack when its DeletionPolicy is `Retain`, `RetainExceptOnCreate` or
 * `Snapshot` (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html),
 * and a Secrets Manager secret always does: a deleted secret keeps its name for its recovery
 * window of 7 to 30 days (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_DeleteSecret.html).
 * Its name passes when CloudFormation generates it (no name property) or when it carries the
 * stack ID, which is new on every create (state-machine-log-group-name.ts `stackCreationId`).
 */
import { type CfnResource, Stack } from 'aws-cdk-lib';
import type { NagRuleCompliance } from 'cdk-nag';
import { ruleCompliance } from './cdk-nag.ts';

/** The physical-name property of each resource type that takes one. */
export const PHYSICAL_NAME_PROPERTIES: Readonly<Record<string, string>> = {
  'AWS::Logs::LogGroup': 'logGroupName',
  'AWS::S3::Bucket': 'bucketName',
  'AWS::SQS::Queue': 'queueName',
  'AWS::SNS::Topic': 'topicName',
  'AWS::SecretsManager::Secret': 'name',
  'AWS::SSM::Parameter': 'name',
  'AWS::Scheduler::Schedule': 'name',
  'AWS::Scheduler::ScheduleGroup': 'name',
  'AWS::CloudWatch::Alarm': 'alarmName',
  'AWS::CloudWatch::Dashboard': 'dashboardName',
  'AWS::StepFunctions::StateMachine': 'stateMachineName',
  'AWS::Lambda::Function': 'functionName',
  'AWS::IAM::Role': 'roleName',
  'AWS::KMS::Alias': 'aliasName',
  'AWS::Events::Rule': 'name',
  'AWS::DynamoDB::Table': 'tableName',
};

const OUTLIVES_STACK = new Set(['Retain', 'RetainExceptOnCreate', 'Snapshot']);

/** The resolved physical name `node` is given, or undefined when CloudFormation generates one. */
export function physicalNameOf(node: CfnResource): unknown {
  const property = PHYSICAL_NAME_PROPERTIES[node.cfnResourceType];
  if (property === undefined) return undefined;
  return Stack.of(node).resolve((node as unknown as Record<string, unknown>)[property]);
}

/** Whether `node` is kept after its stack is deleted. */
export function outlivesStack(node: CfnResource): boolean {
  return (
    node.cfnResourceType === 'AWS::SecretsManager::Secret' ||
    OUTLIVES_STACK.has(String(node.cfnOptions.deletionPolicy ?? 'Delete'))
  );
}

export default Object.defineProperty(
  (node: CfnResource): NagRuleCompliance => {
    const name = physicalNameOf(node);
    if (name === undefined || !outlivesStack(node)) return ruleCompliance().NOT_APPLICABLE;
    return JSON.stringify(name).includes('"AWS::StackId"')
      ? ruleCompliance().COMPLIANT
      : ruleCompliance().NON_COMPLIANT;
  },
  'name',
  { value: 'FixedNameLifetime' },
);
