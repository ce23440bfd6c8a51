/**
 * ScanDomain's releasable wait and the watcher that releases it (lambdas/scan/early-end-watch.ts):
 *
 * - `WaitForScan`, a callback task (the aws-sdk S3 putObject `.waitForTaskToken` integration, which
 *   Standard workflows support for every AWS SDK service): it writes the scan's waiting record (its
 *   key names the scan, its start and its planned wait; its body is the task token), then waits
 *   for SendTaskSuccess or its heartbeat timeout, the planned wait (no heartbeat is ever sent). An
 *   elapsed wait (`States.HeartbeatTimeout`) and a release both lead to PollScanStatus, the
 *   execution's own poll. A record S3 would not take (any other error) leads to a plain Wait of the
 *   same length: the scan then polls as planned, unreleasable.
 * - `EarlyEndWatcher`: an EventBridge Scheduler `rate(1 minute)` schedule that runs the watcher in
 *   the poll function, which declares what the watcher touches.
 *
 * Without the watcher (disabled schedule, failing ticks) nothing else changes: every wait lasts
 * as planned and the execution polls on its own schedule.
 */
import { Duration } from 'aws-cdk-lib';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Schedule } from 'aws-cdk-lib/aws-scheduler';
import {
  type IChainable,
  IntegrationPattern,
  type IStateMachine,
  JsonPath,
  Timeout,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { CallAwsService } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { EARLY_END_TICK, WAITING_PREFIX } from '#lambdas/scan/waiting-records';
import { grantBucketKey } from '../../platform/customer-keys.ts';
import { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { acknowledgeWildcards, arnFinding } from '../../platform/nag.ts';
import type { PipelineFunction } from '../../platform/pipeline-function.ts';
import { invokeOnSchedule } from '../../platform/scheduled-invoke.ts';

/** What Step Functions reports when a task's heartbeat timeout passes: here, the planned wait elapsed. */
export const WAIT_ELAPSED_ERROR = 'States.HeartbeatTimeout';
/** The watcher runs every minute, two passes 30 s apart. */
export const EARLY_END_WATCH_SCHEDULE = 'rate(1 minute)';
/** The wait task's own timeout beyond the poll deadline: a backstop behind its heartbeat timeout. */
const WAIT_TASK_TIMEOUT_MARGIN_SECONDS = 300;

/**
 * `WaitForScan`, followed by `next` however it ends. Grant the machine's role the record write
 * with {@link grantWaitingRecords} once the machine exists.
 */
export function releasableWait(
  scope: Construct,
  props: { readonly resultsBucket: IBucket; readonly deadlineSeconds: number; readonly next: IChainable },
): CallAwsService {
  const wait = new CallAwsService(scope, 'WaitForScan', {
    service: 's3',
    action: 'putObject',
    integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    parameters: {
      Bucket: props.resultsBucket.bucketName,
      Key: JsonPath.format(
        `${WAITING_PREFIX}{}/{}/wait-{}-{}`,
        JsonPath.stringAt('$.scanUuid'),
        JsonPath.stringAt('$.poll.startedAt'),
        JsonPath.stringAt('$.poll.attempt'),
        JsonPath.stringAt('$.poll.nextWaitSeconds'),
      ),
      Body: JsonPath.taskToken,
    },
    iamResources: [props.resultsBucket.arnForObjects(`${WAITING_PREFIX}*`)],
    iamAction: 's3:PutObject',
    heartbeatTimeout: Timeout.at('$.poll.nextWaitSeconds'),
    // A wait never outlasts the poll deadline (the poll step cuts it to what is left).
    taskTimeout: Timeout.duration(Duration.seconds(props.deadlineSeconds + WAIT_TASK_TIMEOUT_MARGIN_SECONDS)),
    // The watcher's output, { ageSeconds }: when it saw the scan end (PollScanStatus counts it).
    resultPath: '$.release',
  });
  wait.next(props.next);
  // Nothing is retried: an elapsed wait is the planned poll, and a record S3 would not take only
  // costs this wait its early release.
  wait.addCatch(props.next, { errors: [WAIT_ELAPSED_ERROR, 'States.Timeout'], resultPath: JsonPath.DISCARD });
  const unrecorded = new Wait(scope, 'WaitForScanUnrecorded', {
    time: WaitTime.secondsPath('$.poll.nextWaitSeconds'),
  });
  unrecorded.next(props.next);
  wait.addCatch(unrecorded, { errors: ['States.ALL'], resultPath: JsonPath.DISCARD });
  return wait;
}

/** The machine's role writes waiting records (the aws-sdk integration runs as the machine). */
export function grantWaitingRecords(stateMachine: IStateMachine & Construct, resultsBucket: IBucket): void {
  grantBucketKey(stateMachine, resultsBucket, 'write');
  const role = (stateMachine as { role?: Construct }).role ?? stateMachine;
  acknowledgeWildcards(
    role,
    [arnFinding(resultsBucket, `/${WAITING_PREFIX}*`)],
    `WaitForScan writes one waiting record per wait under ${WAITING_PREFIX} of the results bucket; its key names the scan, known at run time only.`,
  );
}

/**
 * The every-minute tick that runs the early-end watcher in the poll function (its entry runs the
 * watcher for this input, lambdas/scan/poll-scan-status.ts): an EventBridge Scheduler schedule
 * (no flexible window: a late tick would break the lag promise) on the role the pipeline's
 * scheduled jobs share, one delivery per tick (the next comes a minute later), and a dead-letter
 * queue for ticks that could not be delivered or failed, which the scan reconciliation and the
 * vendor statistics job share. Two resources beside the queue: the schedule and the poll
 * function's async invoke config. A stack of two pipelines must stay within CloudFormation's 500.
 */
export class EarlyEndWatcher extends Construct {
  public readonly schedule: Schedule;
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(
    scope: Construct,
    id: string,
    props: { readonly pollFunction: PipelineFunction; readonly schedulerRole?: Role },
  ) {
    super(scope, id);
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose:
        'early-end watcher ticks, scan reconciliation runs and vendor statistics runs that failed or could not be delivered (each names its function; the next tick or run catches up)',
    });
    // The poll function's state machine invocations are synchronous; only the tick is asynchronous.
    this.schedule = invokeOnSchedule(this, 'Schedule', {
      fn: props.pollFunction,
      expression: EARLY_END_WATCH_SCHEDULE,
      deadLetterQueue: this.deadLetterQueue,
      description: 'release the wait of scans that ended early',
      input: EARLY_END_TICK,
      // A tick a minute late is worth nothing: the next one is due.
      maxEventAge: Duration.minutes(1),
      ...(props.schedulerRole === undefined ? {} : { role: props.schedulerRole }),
    });
  }
}
