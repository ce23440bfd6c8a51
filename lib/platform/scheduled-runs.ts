import { Duration, Stack, TimeZone } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  ContextAttribute,
  Schedule,
  ScheduleExpression,
  ScheduleTargetInput,
  TimeWindow,
} from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import type { DomainListDefinition, ScheduleConfig } from '../config/index.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { acknowledgeWildcards, arnFinding } from './nag.ts';

export interface ScheduledRunsProps {
  /** The list state machine each schedule starts. */
  /**
   * The intake function (`start-domain-list`), which starts the list run under a name derived from
   * schedule name and scheduled time; StartExecution as a Scheduler target cannot name executions.
   */
  readonly startFunction: IFunction;
  /** Where `objectKey` domain lists live. */
  readonly inputBucket: IBucket;
  /** Validated schedules (lib/config/). */
  readonly schedules: readonly ScheduleConfig[];
  /**
   * Named lists that schedules refer to by `domainList`.
   * @default {}
   */
  readonly domainLists?: Readonly<Record<string, DomainListDefinition>>;
  /**
   * What a fire starts, for descriptions and the dead-letter queue's purpose.
   * @default 'scan domain list'
   */
  readonly runs?: string;
}

/**
 * One EventBridge Scheduler schedule per configured schedule, each starting a run of the list
 * state machine. The input carries `<aws.scheduler.scheduled-time>`: the list run's identity is
 * the fire time, so every fire is its own run and a retried delivery of the same fire is not.
 */
export class ScheduledRuns extends Construct {
  /** By schedule name. */
  public readonly schedules: ReadonlyMap<string, Schedule>;
  /** Fires that could not start a run after all retries; undefined when no schedule is configured. */
  public readonly deadLetterQueue?: DeadLetterQueue;
  /** Assumed by Scheduler: states:StartExecution on the list machine only (plus the DLQ). */
  public readonly role?: Role;

  constructor(scope: Construct, id: string, props: ScheduledRunsProps) {
    super(scope, id);
    const domainLists = props.domainLists ?? {};
    const schedules = new Map<string, Schedule>();
    this.schedules = schedules;
    if (props.schedules.length === 0) return;

    const runs = props.runs ?? 'scan domain list';
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: `schedule fires that could not start a run (${runs})`,
    });
    this.role = new Role(this, 'Role', {
      description: `Assumed by EventBridge Scheduler to invoke the intake function (${runs})`,
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        // Confused-deputy guard: only schedules of this account may use the role.
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    });

    for (const schedule of props.schedules) {
      const target = new LambdaInvoke(props.startFunction, {
        role: this.role,
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: schedule.maxRetryAttempts,
        maxEventAge: Duration.seconds(schedule.maxEventAgeSeconds),
        input: ScheduleTargetInput.fromObject({
          source: {
            type: 'schedule',
            scheduleName: schedule.name,
            scheduledTime: ContextAttribute.scheduledTime,
            ...this.listSource(schedule, domainLists, props.inputBucket),
          },
        }),
      });
      schedules.set(
        schedule.name,
        new Schedule(this, schedule.name, {
          description: `Security pipeline: ${runs} (${schedule.domainList ?? 'inline domains'}) on ${schedule.expression}`,
          schedule: ScheduleExpression.expression(schedule.expression, TimeZone.of(schedule.timeZone)),
          target,
          enabled: schedule.enabled,
          timeWindow:
            schedule.flexibleWindowMinutes === 0
              ? TimeWindow.off()
              : TimeWindow.flexible(Duration.minutes(schedule.flexibleWindowMinutes)),
        }),
      );
    }
    acknowledgeWildcards(
      this.role,
      [arnFinding(props.startFunction, ':*')],
      "The Scheduler's LambdaInvoke target grants lambda:InvokeFunction on <function ARN>:* (any version or alias) of the intake function only.",
    );
  }

  private listSource(
    schedule: ScheduleConfig,
    domainLists: Readonly<Record<string, DomainListDefinition>>,
    inputBucket: IBucket,
  ): { bucket: string; key: string } | { domains: readonly string[] } {
    const list =
      schedule.domainList === undefined
        ? { domains: schedule.domains ?? [] }
        : domainLists[schedule.domainList];
    if (list === undefined)
      throw new Error(`schedule '${schedule.name}' refers to unknown domain list '${schedule.domainList}'`);
    return 'objectKey' in list
      ? { bucket: inputBucket.bucketName, key: list.objectKey }
      : { domains: list.domains };
  }
}
