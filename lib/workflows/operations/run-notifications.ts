/**
 * When a domain list or a watchlist finishes, its summary handler puts a run-finished event on the
 * default bus (lambdas/platform/runs/run-events.ts). This rule turns each into a short notification on the
 * runs topic: kind, run id, what started it, the counts and where summary.json is. Never a domain's
 * findings, a name or an email: the event carries none.
 */
import { Duration } from 'aws-cdk-lib';
import {
  EventField,
  type IRule,
  type IRuleTarget,
  Rule,
  type RuleTargetConfig,
  RuleTargetInput,
} from 'aws-cdk-lib/aws-events';
import {
  addToDeadLetterQueueResourcePolicy,
  bindBaseTargetConfig,
  type SnsTopicProps,
} from 'aws-cdk-lib/aws-events-targets';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { LIST_RUN_FINISHED } from '#lambdas/domain-list/contracts';
import { RUN_EVENT_SOURCE } from '#lambdas/platform/runs/run-events';
import { WATCHLIST_RUN_FINISHED } from '#lambdas/watchlist/contracts';
import { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { encryptedTopic } from './alarm-notifications.ts';

export interface RunNotificationsProps {
  /** The key of the alarm topic, shared: one key policy to review. */
  readonly key: Key;
  /** Subscribed to the runs topic. @default none */
  readonly email?: string;
}

export class RunNotifications extends Construct {
  public readonly topic: Topic;
  public readonly rule: Rule;
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: RunNotificationsProps) {
    super(scope, id);
    this.rule = new Rule(this, 'RunFinished', {
      description: 'A domain list or watchlist run finished: tell the runs topic',
      eventPattern: {
        source: [RUN_EVENT_SOURCE],
        detailType: [LIST_RUN_FINISHED.detailType, WATCHLIST_RUN_FINISHED.detailType],
      },
    });
    // EventBridge publishes to the encrypted topic as itself, on behalf of this rule only.
    this.topic = encryptedTopic(this, 'Topic', {
      key: props.key,
      publisher: {
        service: 'events.amazonaws.com',
        sourceArn: this.rule.ruleArn,
        keyRequestsCarrySource: false,
      },
      displayName: 'Security pipeline runs',
      ...(props.email === undefined ? {} : { email: props.email }),
    });
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: 'run-finished notifications EventBridge could not deliver to the runs topic',
    });
    this.rule.addTarget(
      new ScopedTopicTarget(this.topic, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 8,
        maxEventAge: Duration.hours(6),
        message: RuleTargetInput.fromText(
          `${EventField.fromPath('$.detail-type')}: ${EventField.fromPath('$.detail.kind')} run ${EventField.fromPath('$.detail.runId')} (${EventField.fromPath('$.detail.trigger')}) finished at ${EventField.fromPath('$.detail.finishedAt')}. Counts: ${EventField.fromPath('$.detail.counts')}. Refused: ${EventField.fromPath('$.detail.refused')}. Summary: ${EventField.fromPath('$.detail.summary')}`,
        ),
      }),
    );
  }
}

/**
 * The SnsTopic target without its grant: SnsTopic lets events.amazonaws.com publish with no
 * aws:SourceArn condition (any rule, of any account, could use this topic). The topic's own policy
 * (encryptedTopic) allows this rule only.
 */
class ScopedTopicTarget implements IRuleTarget {
  constructor(
    private readonly topic: Topic,
    private readonly props: SnsTopicProps & { deadLetterQueue: DeadLetterQueue },
  ) {}

  bind(rule: IRule): RuleTargetConfig {
    addToDeadLetterQueueResourcePolicy(rule, this.props.deadLetterQueue);
    return {
      ...bindBaseTargetConfig(this.props),
      arn: this.topic.topicArn,
      input: this.props.message,
      targetResource: this.topic,
    };
  }
}
