import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { acknowledge } from './nag.ts';
import { queueDepthAlarm } from './standard-alarms.ts';

export interface DeadLetterQueueProps {
  /** What lands here, for the queue's purpose in the console and in cdk-nag's reason. */
  readonly purpose: string;
  /** The runbook section of its depth alarm. @default docs/runbooks/alarms.md */
  readonly runbook?: string;
}

/**
 * An SQS queue that receives events an event source could not deliver: SSL-only, SQS-managed
 * encryption (no key policy to maintain for EventBridge and Scheduler), kept for the 14-day maximum
 * so an operator has time to inspect and redrive.
 */
export class DeadLetterQueue extends Queue {
  /** Fires on the first message (lib/platform/standard-alarms.ts). */
  public readonly depthAlarm: Alarm;

  constructor(scope: Construct, id: string, props: DeadLetterQueueProps) {
    if (props.purpose.trim() === '')
      throw new Error(`DeadLetterQueue ${id}: purpose must describe what lands here`);
    super(scope, id, {
      enforceSSL: true,
      encryption: QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      this,
      'AwsSolutions-SQS3',
      `This queue is itself a dead-letter queue (${props.purpose}); a DLQ of a DLQ would only move the problem.`,
    );
    acknowledge(
      this,
      'Serverless-SQSRedrivePolicy',
      `This queue is itself a dead-letter queue (${props.purpose}): nothing consumes it to fail again, so it needs no redrive policy of its own.`,
    );
    this.depthAlarm = queueDepthAlarm(this, props.purpose, props.runbook);
  }
}
