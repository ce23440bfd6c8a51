/**
 * The standard alarms every function, state machine and dead-letter queue of the pipeline gets,
 * written once here and created by PipelineFunction, PipelineStateMachine and DeadLetterQueue
 * themselves (as AWS Solutions Constructs do), so a new workflow is covered without asking.
 * `lib/platform/rules/alarm-coverage.ts` fails cdk-nag when anything slips through.
 *
 * Every alarm's description says what it means and names its runbook section; the stack sends
 * every alarm to the alarm topic (lib/workflows/operations/alarm-notifications.ts).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';

/** The runbook with a section per standard alarm. */
export const ALARMS_RUNBOOK = 'docs/runbooks/alarms.md';

export interface AlarmSpec {
  readonly metric: IMetric;
  /** Fires at this value or above. */
  readonly threshold: number;
  /** What it means, in one sentence. */
  readonly meaning: string;
  /** `docs/runbooks/<file>.md#<section>`. */
  readonly runbook: string;
  /** @default notBreaching: no data means nothing happened */
  readonly treatMissingData?: TreatMissingData;
}

/** One alarm at or above `threshold` over one period, described with its runbook. */
export function alarmOn(scope: Construct, id: string, spec: AlarmSpec): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: `${spec.meaning} Runbook: ${spec.runbook}`,
    metric: spec.metric,
    threshold: spec.threshold,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: spec.treatMissingData ?? TreatMissingData.NOT_BREACHING,
  });
}

/** Alarms whose INSUFFICIENT_DATA state is the signal (see {@link silenceAlarm}). */
const SILENCE_ALARMS = new WeakSet<Alarm>();

export interface SilenceAlarmSpec {
  /** A count summed over one period: the window in which at least one report is expected. */
  readonly metric: IMetric;
  /** What the silence means, in one sentence. */
  readonly meaning: string;
  /** `docs/runbooks/<file>.md#<section>`. */
  readonly runbook: string;
}

/**
 * An alarm on something that must keep reporting once it has: OK while `metric` has data in its
 * window, INSUFFICIENT_DATA once the whole window is empty (`treatMissingData: missing`). The metric
 * alone cannot tell "never reported" (a fresh stack) from "stopped reporting"; the alarm's state
 * can. A new alarm starts in INSUFFICIENT_DATA and stays there, quietly, until the first report
 * (actions run on a change of state); after that, silence is a change from OK, and AlarmNotifications
 * adds the INSUFFICIENT_DATA action to these alarms only. The metric never breaches the threshold, so
 * ALARM is not used.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html
 */
export function silenceAlarm(scope: Construct, id: string, spec: SilenceAlarmSpec): Alarm {
  const alarm = new Alarm(scope, id, {
    alarmDescription: `${spec.meaning} Signalled by INSUFFICIENT_DATA (not ALARM) once it had reported. Runbook: ${spec.runbook}`,
    metric: spec.metric,
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    treatMissingData: TreatMissingData.MISSING,
  });
  SILENCE_ALARMS.add(alarm);
  return alarm;
}

/** Whether `alarm` signals by INSUFFICIENT_DATA, so its notifications must include that state. */
export function isSilenceAlarm(alarm: Alarm): boolean {
  return SILENCE_ALARMS.has(alarm);
}

export interface FunctionAlarmOptions {
  /**
   * Errors in 5 minutes that fire the alarm. A task function's errors are retried or caught by
   * its state machine (whose own alarms report failed runs), so a few are expected. @default 5
   */
  readonly errorThreshold?: number;
  /** @default the standard section of docs/runbooks/alarms.md */
  readonly runbook?: string;
}

/** Errors and throttles of one function. */
export function functionAlarms(
  fn: IFunction & Construct,
  handlerFile: string,
  options: FunctionAlarmOptions = {},
): { errors: Alarm; throttles: Alarm } {
  const period = Duration.minutes(5);
  return {
    errors: alarmOn(fn, 'ErrorsAlarm', {
      metric: fn.metricErrors({ period, statistic: 'Sum' }),
      threshold: options.errorThreshold ?? 5,
      meaning: `${handlerFile} threw in invocations (errors retried or caught count too).`,
      runbook: options.runbook ?? `${ALARMS_RUNBOOK}#function-errors`,
    }),
    throttles: alarmOn(fn, 'ThrottlesAlarm', {
      metric: fn.metricThrottles({ period, statistic: 'Sum' }),
      threshold: 1,
      meaning: `${handlerFile} was throttled: the account's Lambda concurrency is exhausted.`,
      runbook: `${ALARMS_RUNBOOK}#function-throttles`,
    }),
  };
}

export interface StateMachineAlarmOptions {
  /**
   * Failed executions in an hour that fire the alarm. A per-item machine (one domain, one person)
   * ends failed for a recorded, per-item reason; only a burst is an incident. @default 1
   */
  readonly failedThreshold?: number;
}

/** Failed, timed-out and aborted executions of one state machine. */
export function stateMachineAlarms(
  scope: Construct,
  machine: IStateMachine,
  name: string,
  options: StateMachineAlarmOptions = {},
): { failed: Alarm; timedOut: Alarm; aborted: Alarm } {
  return {
    failed: alarmOn(scope, 'ExecutionsFailedAlarm', {
      metric: machine.metricFailed({ period: Duration.hours(1), statistic: 'Sum' }),
      threshold: options.failedThreshold ?? 1,
      meaning: `${name} executions failed (each wrote a failure record).`,
      runbook: `${ALARMS_RUNBOOK}#executions-failed`,
    }),
    timedOut: alarmOn(scope, 'ExecutionsTimedOutAlarm', {
      metric: machine.metricTimedOut({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      meaning: `${name} executions hit the machine's own timeout: no failure record was written.`,
      runbook: `${ALARMS_RUNBOOK}#executions-timed-out`,
    }),
    aborted: alarmOn(scope, 'ExecutionsAbortedAlarm', {
      metric: machine.metricAborted({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      meaning: `${name} executions were stopped by hand or by a deploy.`,
      runbook: `${ALARMS_RUNBOOK}#executions-aborted`,
    }),
  };
}

/** Any message in a dead-letter queue. */
export function queueDepthAlarm(queue: IQueue & Construct, purpose: string, runbook?: string): Alarm {
  return alarmOn(queue, 'DepthAlarm', {
    metric: queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(5),
      statistic: 'Maximum',
    }),
    threshold: 1,
    meaning: `Messages in a dead-letter queue: ${purpose}.`,
    runbook: runbook ?? `${ALARMS_RUNBOOK}#dead-letter-queue-depth`,
  });
}
