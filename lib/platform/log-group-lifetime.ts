/**
 * How long the stack's log groups outlive it, one rule for all of them (the state machines' and
 * the functions'):
 *
 * - `retain` (production): `RetainExceptOnCreate`. A deleted stack leaves its logs for the audit,
 *   but a first create that fails and rolls back removes what it made, so the retry does not meet
 *   them. https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-attribute-deletionpolicy.html
 * - `destroy` (test stacks): deleted with the stack.
 *
 * Retained groups never block a later create of the same stack: every fixed name carries the
 * stack's creation id (state-machine-log-group-name.ts), and the functions' groups follow their
 * generated function names. `Pipeline-FixedNameLifetime` (rules/) holds the stack to that.
 */
import { AspectPriority, Aspects, type IAspect, RemovalPolicy } from 'aws-cdk-lib';
import { CfnLogGroup } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import type { DataRemovalPolicy } from '../config/schema.ts';

class LogGroupLifetime implements IAspect {
  constructor(private readonly policy: RemovalPolicy) {}

  visit(node: IConstruct): void {
    if (node instanceof CfnLogGroup) node.applyRemovalPolicy(this.policy);
  }
}

/**
 * Applies the lifetime of `removalPolicy` to every log group under `scope` (the pipeline), present or
 * added later; a team's own log groups elsewhere in its stack keep theirs.
 */
export function applyLogGroupLifetime(scope: IConstruct, removalPolicy: DataRemovalPolicy): void {
  const policy =
    removalPolicy === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
  Aspects.of(scope).add(new LogGroupLifetime(policy), { priority: AspectPriority.MUTATING });
}
