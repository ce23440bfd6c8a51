/** The pipeline's own cdk-nag pack: the rules in this folder, run beside AwsSolutions and Serverless. */
import type { CfnResource } from 'aws-cdk-lib';
import { NagMessageLevel, NagPack, type NagPackProps } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import AlarmCoverage from './alarm-coverage.ts';
import EventPatternWildcards, { MAX_WILDCARDS_PER_FIELD } from './event-pattern-wildcards.ts';
import FixedNameLifetime from './fixed-name-lifetime.ts';

export class PipelineChecks extends NagPack {
  readonly name = 'Pipeline';

  constructor(scope?: IConstruct, props?: NagPackProps) {
    super(scope, props);
    this.packName = 'Pipeline';
  }

  protected checkResource(node: CfnResource): void {
    this.applyRule({
      info: 'The resource lacks a standard alarm (function: Errors and Throttles; state machine: ExecutionsFailed, ExecutionsTimedOut, ExecutionsAborted; queue: ApproximateNumberOfMessagesVisible).',
      explanation:
        'A failure nobody is told about is found by a user. PipelineFunction, PipelineStateMachine and DeadLetterQueue create these alarms themselves (lib/platform/standard-alarms.ts); a resource built another way must add them.',
      level: NagMessageLevel.ERROR,
      rule: AlarmCoverage,
      node,
    });
    this.applyRule({
      info: `The EventBridge rule's pattern holds more than ${MAX_WILDCARDS_PER_FIELD} wildcard matchers in one field.`,
      explanation:
        'EventBridge refuses a rule whose wildcard matching is too complex ("Rule is too complex", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html), and the refusal comes only at deploy. Match with prefix, suffix or equals-ignore-case, and check the rest in the target.',
      level: NagMessageLevel.ERROR,
      rule: EventPatternWildcards,
      node,
    });
    this.applyRule({
      info: 'The resource has a fixed physical name and outlives its stack (a retained DeletionPolicy, or a secret in its recovery window).',
      explanation:
        'The next create of the same stack (after cdk destroy, or a rolled-back first create) would fail with "already exists". Let CloudFormation generate the name, or put the stack ID in it (stackCreationId in lib/platform/state-machine-log-group-name.ts).',
      level: NagMessageLevel.ERROR,
      rule: FixedNameLifetime,
      node,
    });
  }
}
