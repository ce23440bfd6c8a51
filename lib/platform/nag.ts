/**
 * cdk-nag 3 acknowledgements. cdk-nag 3 is a CDK policy-validation plugin: a rule is acknowledged
 * with `Validations.of(construct).acknowledge(...)` on the resource or one of its ancestors, and a
 * multi-finding rule (IAM5) one finding at a time, by its exact text, e.g.
 * `AwsSolutions-IAM5[Resource::<ResultsBucket1234.Arn>/scans/*]`. These helpers build those texts
 * from the constructs, so an acknowledgement covers exactly one wildcard and never a new one.
 */
import { CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { DISABLE_CREATION_STACK_TRACES } from 'aws-cdk-lib/cx-api';
import type { IConstruct } from 'constructs';

/** Acknowledges one rule (or one finding of a rule) on `scope` and everything below it. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (reason.trim().length < 20) throw new Error(`cdk-nag acknowledgement ${id} needs a real reason`);
  // aws-cdk-lib records where each acknowledgement was made with a rendered stack trace, even in an
  // app that turned creation stack traces off; under source-mapped traces that was 8 % of a checked
  // synthesis (a pipeline acknowledges a few hundred findings). Such an app captures none here,
  // unless in debug mode, where aws-cdk-lib itself captures creation stack traces again.
  const limit = Error.stackTraceLimit;
  if (scope.node.tryGetContext(DISABLE_CREATION_STACK_TRACES) && !debugMode()) Error.stackTraceLimit = 0;
  try {
    Validations.of(scope).acknowledge({ id, reason });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** `cdk --debug` (CDK_DEBUG), with the values aws-cdk-lib takes for on. */
function debugMode(): boolean {
  return ['1', 'on', 'true'].includes(process.env.CDK_DEBUG?.toLowerCase() ?? '');
}

/** Acknowledges `AwsSolutions-IAM5[<finding>]` for each finding. */
export function acknowledgeWildcards(scope: IConstruct, findings: readonly string[], reason: string): void {
  for (const finding of new Set(findings)) acknowledge(scope, `AwsSolutions-IAM5[${finding}]`, reason);
}

/**
 * How cdk-nag prints `Fn::GetAtt <resource>.Arn` followed by `suffix` in an IAM5 finding, e.g.
 * `Resource::<ScanDomainStartScanFunction1A2B3C4D.Arn>:*`.
 */
export function arnFinding(resource: IConstruct, suffix: string): string {
  const imported = importedArn(resource);
  if (imported !== undefined) return `Resource::${imported}${suffix}`;
  return `Resource::<${logicalIdOf(resource)}.Arn>${suffix}`;
}

/**
 * An imported bucket (`Bucket.fromBucketName`, brought to SecurityPipeline) has no logical ID:
 * cdk-nag prints its ARN as the template writes it, each `Ref` as `<Name>`, e.g.
 * `arn:<AWS::Partition>:s3:::team-bucket`.
 */
function importedArn(resource: IConstruct): string | undefined {
  if (resource instanceof CfnElement || resource.node.defaultChild instanceof CfnElement) return undefined;
  const arn = (resource as { bucketArn?: unknown }).bucketArn;
  return typeof arn === 'string' ? nagText(Stack.of(resource).resolve(arn)) : undefined;
}

function nagText(value: unknown): string {
  if (typeof value === 'string') return value;
  const intrinsic = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (intrinsic.Ref !== undefined) return `<${intrinsic.Ref}>`;
  if (intrinsic['Fn::Join'] !== undefined)
    return intrinsic['Fn::Join'][1].map(nagText).join(intrinsic['Fn::Join'][0]);
  return JSON.stringify(value);
}

/** The logical ID of a construct's CloudFormation resource (its default child for L2s). */
export function logicalIdOf(construct: IConstruct): string {
  const element = construct instanceof CfnElement ? construct : construct.node.defaultChild;
  if (!(element instanceof CfnElement)) {
    throw new Error(`${construct.node.path} has no CloudFormation resource to name in a cdk-nag finding`);
  }
  return Stack.of(element).resolve(element.logicalId) as string;
}

/**
 * How cdk-nag prints an execution-ARN wildcard of `stateMachine` (CDK splits the name out of the ARN).
 * The partition, Region and account are the stack's: placeholders such as `<AWS::Region>` in an
 * environment-agnostic stack, the literal values (`eu-west-1`, `111111111111`) in a pinned one.
 */
export function executionsFinding(stateMachine: IStateMachine, suffix: string): string {
  const stack = Stack.of(stateMachine);
  const name = JSON.stringify({
    'Fn::Select': [6, { 'Fn::Split': [':', { Ref: logicalIdOf(stateMachine) }] }],
  });
  const [partition, region, account] = [stack.partition, stack.region, stack.account].map((value) =>
    nagText(stack.resolve(value)),
  );
  return `Resource::arn:${partition}:states:${region}:${account}:execution:${name}${suffix}`;
}
