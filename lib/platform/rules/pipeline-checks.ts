/** The pipeline's own cdk-nag pack: the rules in this folder, run beside AwsSolutions and Serverless. */
import type { CfnResource } from 'aws-cdk-lib';
import { NagMessageLevel, NagPack, type NagPackProps } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import AlarmCoverage from './alarm-coverage.ts';

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
  }
}
