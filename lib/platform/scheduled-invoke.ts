/**
 * How a pipeline function is run on a schedule, once: an EventBridge Scheduler schedule with its
 * own role, or the role a pipeline's scheduled jobs share (this account only), and no retry
 * anywhere that could repeat a run on its own. Neither
 * Scheduler nor Lambda's asynchronous invocation retries; whatever fails or is not delivered lands
 * in the dead-letter queue, and the next scheduled run catches up.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Schedule, ScheduleExpression, ScheduleTargetInput, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { Construct } from 'constructs';
import type { DeadLetterQueue } from './dead-letter-queue.ts';
import { acknowledge, acknowledgeWildcards, arnFinding } from './nag.ts';
import type { PipelineFunction } from './pipeline-function.ts';

/**
 * Where an asynchronous invocation of `fn` goes when it fails for good: `queue`, as an on-failure
 * destination, after `retryAttempts` retries by Lambda (0 unless every repeat is harmless).
 */
export function sendAsyncFailuresTo(
  fn: PipelineFunction,
  queue: DeadLetterQueue,
  options: { retryAttempts: number; maxEventAge: Duration },
): void {
  fn.configureAsyncInvoke({ ...options, onFailure: new SqsDestination(queue) });
  acknowledge(
    fn,
    'Serverless-LambdaDLQ',
    "Asynchronous failures go to an on-failure destination (the dead-letter queue), which supersedes a function DLQ: it also carries the error and the function's response.",
  );
}

/** Lambda never retries an asynchronous invocation of `fn`; a failed one goes to `queue`. */
export function noAsyncRetries(fn: PipelineFunction, queue: DeadLetterQueue): void {
  sendAsyncFailuresTo(fn, queue, { retryAttempts: 0, maxEventAge: Duration.hours(1) });
}

export interface ScheduledInvokeProps {
  readonly fn: PipelineFunction;
  /** An EventBridge Scheduler expression, validated by the configuration. */
  readonly expression: string;
  /** How far the schedule may shift a run to spread load. @default none: each run at its time */
  readonly flexibleWindow?: Duration;
  /** The event the function gets. @default Scheduler's own (its `<aws.scheduler.*>` fields) */
  readonly input?: Readonly<Record<string, unknown>>;
  /** How long a run not yet delivered stays worth delivering (at least a minute). @default 1 hour */
  readonly maxEventAge?: Duration;
  readonly deadLetterQueue: DeadLetterQueue;
  /** What the schedule does, for the console. */
  readonly description: string;
  /**
   * A role several schedules share ({@link schedulerRole}): each target adds the invoke of its own
   * function and the send to its own queue. @default a role of this schedule's own
   */
  readonly role?: Role;
}

/**
 * A role EventBridge Scheduler assumes, for schedules of this account only (the confused-deputy
 * guard). One role per pipeline for its scheduled jobs keeps a stack of several pipelines within
 * CloudFormation's 500 resources: a role of its own is two resources per schedule.
 */
export function schedulerRole(scope: Construct, id: string, description: string): Role {
  return new Role(scope, id, {
    description: `Assumed by EventBridge Scheduler to ${description}`,
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
    }),
  });
}

/** Invokes `fn` on `expression`, never more than once per fire (see the module comment). */
export function invokeOnSchedule(scope: Construct, id: string, props: ScheduledInvokeProps): Schedule {
  noAsyncRetries(props.fn, props.deadLetterQueue);
  const role = props.role ?? schedulerRole(scope, `${id}Role`, props.description);
  const schedule = new Schedule(scope, id, {
    description: `Security pipeline: ${props.description}`,
    schedule: ScheduleExpression.expression(props.expression),
    timeWindow:
      props.flexibleWindow === undefined ? TimeWindow.off() : TimeWindow.flexible(props.flexibleWindow),
    target: new LambdaInvoke(props.fn, {
      role,
      deadLetterQueue: props.deadLetterQueue,
      // Delivery only: a failed delivery goes to the queue, never a second run on its own.
      retryAttempts: 0,
      maxEventAge: props.maxEventAge ?? Duration.hours(1),
      ...(props.input === undefined ? {} : { input: ScheduleTargetInput.fromObject(props.input) }),
    }),
  });
  acknowledgeWildcards(
    role,
    [arnFinding(props.fn, ':*')],
    `The Scheduler's LambdaInvoke target grants lambda:InvokeFunction on <function ARN>:* (any version or alias) of ${props.fn.handlerFile} only.`,
  );
  return schedule;
}
