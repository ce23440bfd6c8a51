import { Duration, Stack, TimeZone } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import {
  ContextAttribute,
  Schedule,
  ScheduleExpression,
  ScheduleTargetInput,
  TimeWindow,
} from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import type { ScheduleConfig } from '../config/schema.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { acknowledgeWildcards, arnFinding } from './nag.ts';

/** When and how a schedule fires: the schedule fields every workflow's schedules share (lib/config/schedule-fields.ts). */
export type ScheduleTiming = Pick<
  ScheduleConfig,
  | 'name'
  | 'expression'
  | 'timeZone'
  | 'enabled'
  | 'flexibleWindowMinutes'
  | 'maxRetryAttempts'
  | 'maxEventAgeSeconds'
>;

/** One schedule, with what its run works on as the workflow resolved it. */
export interface ScheduledRun extends ScheduleTiming {
  /** What the run works on, added to the input's `source` after its type, schedule name and time. */
  readonly input: Readonly<Record<string, unknown>>;
  /** Names that input in the schedule's description. */
  readonly inputLabel: string;
}

export interface ScheduledRunsProps {
  /**
   * The workflow's intake function, which starts the run under a name derived from schedule name
   * and scheduled time; StartExecution as a Scheduler target cannot name executions.
   */
  readonly startFunction: IFunction;
  /** Validated schedules (lib/config/), each with its input resolved by the workflow. */
  readonly schedules: readonly ScheduledRun[];
  /** What a fire starts, for descriptions and the dead-letter queue's purpose. */
  readonly runs: string;
}

/**
 * One EventBridge Scheduler schedule per configured schedule, each starting a run of a workflow's
 * state machine through its intake function. The input carries `<aws.scheduler.scheduled-time>`: the list run's identity is
 * the fire time, so every fire is its own run and a retried delivery of the same fire is not.
 */
export class ScheduledRuns extends Construct {
  /** By schedule name. */
  public readonly schedules: ReadonlyMap<string, Schedule>;
  /** Fires that could not start a run after all retries; undefined when no schedule is configured. */
  public readonly deadLetterQueue?: DeadLetterQueue;
  /** Assumed by Scheduler: lambda:InvokeFunction on the intake function only (plus the DLQ). */
  public readonly role?: Role;

  constructor(scope: Construct, id: string, props: ScheduledRunsProps) {
    super(scope, id);
    const schedules = new Map<string, Schedule>();
    this.schedules = schedules;
    if (props.schedules.length === 0) return;

    const { runs } = props;
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
            ...schedule.input,
          },
        }),
      });
      schedules.set(
        schedule.name,
        new Schedule(this, schedule.name, {
          description: `Security pipeline: ${runs} (${schedule.inputLabel}) on ${schedule.expression}`,
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
}
