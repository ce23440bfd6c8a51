import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  DefinitionBody,
  type Fail,
  type IChainable,
  JsonPath,
  LogLevel,
  Pass,
  type RetryProps,
  StateMachine,
  StateMachineType,
  type TaskInput,
  Timeout,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { acknowledge, acknowledgeWildcards, arnFinding } from './nag.ts';
import { emailMaskingPolicy, type PipelineFunction } from './pipeline-function.ts';
import { VENDOR_AUTH_RETRY } from './retry-policies.ts';
import { type StateMachineAlarmOptions, stateMachineAlarms } from './standard-alarms.ts';
import { stateMachineLogGroupName } from './state-machine-log-group-name.ts';

export interface PipelineStateMachineProps {
  /** The first state of the definition, chained. */
  readonly definition: IChainable;
  /** What the workflow does, shown in the console; name its contract in docs/contracts.md. */
  readonly comment: string;
  /**
   * A backstop for executions that never end; the workflow's own checks should end them first.
   * Only a workflow whose length grows with its input without bound (a list run of any size) may
   * leave it out, and must say why.
   */
  readonly timeout: Duration | 'unbounded';
  /** The workflow's Lambda functions: their invoke grants are acknowledged one by one for cdk-nag. */
  readonly functions: readonly PipelineFunction[];
  /**
   * Retention of the execution log group.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
  /** @default an alarm on the first failed execution */
  readonly alarms?: StateMachineAlarmOptions;
}

/**
 * A Standard state machine with the pipeline's defaults, so every workflow gets them without
 * restating them (as `PipelineFunction` does for functions):
 *
 * - logging of every event to its own log group, **without execution data**: state input and
 *   output carry scan status bodies, report names and hashed identities that have no place in logs;
 *   the group is `/aws/vendedlogs/states/<stack>-<workflow>` (state-machine-log-group-name.ts);
 * - X-Ray tracing;
 * - an execution timeout (a Standard execution otherwise lives for a year), unless the workflow
 *   declares itself unbounded;
 * - the cdk-nag acknowledgements every such machine needs, each naming exactly what it covers.
 */
export class PipelineStateMachine extends Construct {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;
  /** Its standard alarms (lib/platform/standard-alarms.ts). */
  public readonly alarms: { readonly failed: Alarm; readonly timedOut: Alarm; readonly aborted: Alarm };

  constructor(scope: Construct, id: string, props: PipelineStateMachineProps) {
    super(scope, id);
    // Named after the workflow construct that owns it (ScanDomain, DomainListScan...).
    const workflow = this.node.scope?.node.id ?? id;
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: stateMachineLogGroupName(this, workflow),
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      // Execution data is left out, but a failure's error and cause (a function's error message)
      // are not execution input or output: a machine whose functions read vendor answers or handle
      // people gets the same second net as those functions.
      ...(props.functions.some((fn) => fn.registered.logsMayCarryPersonalData)
        ? { dataProtectionPolicy: emailMaskingPolicy(`${this.node.scope?.node.id ?? id} execution logs`) }
        : {}),
    });
    this.stateMachine = new StateMachine(this, 'Resource', {
      comment: props.comment,
      definitionBody: DefinitionBody.fromChainable(props.definition),
      stateMachineType: StateMachineType.STANDARD,
      ...(props.timeout === 'unbounded' ? {} : { timeout: props.timeout }),
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
    });
    this.alarms = stateMachineAlarms(this, this.stateMachine, workflow, props.alarms);
    if (props.functions.length > 0) {
      acknowledgeWildcards(
        this.stateMachine,
        props.functions.map((fn) => arnFinding(fn, ':*')),
        "LambdaInvoke grants lambda:InvokeFunction on <function ARN>:* (any version or alias) of this workflow's own functions.",
      );
    }
    acknowledgeWildcards(
      this.stateMachine,
      ['Resource::*'],
      'Log delivery (logs:*LogDelivery*, logs:DescribeLogGroups...) and X-Ray (xray:PutTraceSegments...) support no resource-level permissions.',
    );
  }
}

export interface LambdaTaskOptions {
  /** The task input; the whole state when omitted. */
  readonly payload?: TaskInput;
  /** Where the result goes; it replaces the state when omitted. */
  readonly resultPath?: string;
  /**
   * The task's own Retry rule (`retry-policies.ts`). A task whose handler calls the vendor
   * (`vendorApis` in its declaration) also gets VENDOR_AUTH_RETRY, after it.
   */
  readonly retry?: RetryProps;
}

/** Seconds a task waits beyond its function's own timeout, so a lost invocation never hangs a workflow. */
const TASK_TIMEOUT_MARGIN_SECONDS = 10;

/**
 * A Lambda task whose input and output are plain payloads (no Lambda envelope), which times out
 * just after its function would, and which retries only what it is given: each workflow names its
 * Retry rule (with jitter) from `retry-policies.ts`, instead of CDK's default service retry. A
 * task whose handler calls the vendor retries a refused key across a rotation window too
 * (VENDOR_AUTH_RETRY): the registry, not each workflow, says which tasks those are. The state must
 * be one that the function's handler declares (lambdas/registry.ts).
 */
export function lambdaTask(
  scope: Construct,
  stateName: string,
  fn: PipelineFunction,
  options: LambdaTaskOptions = {},
): LambdaInvoke {
  checkStateBinding(stateName, fn);
  acknowledge(
    fn,
    'Serverless-LambdaDLQ',
    "Invoked synchronously by a Step Functions task: the state machine's Retry and Catch handle every failure, so nothing could reach a function DLQ.",
  );
  const task = new LambdaInvoke(scope, stateName, {
    lambdaFunction: fn,
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
    taskTimeout: Timeout.duration(
      (fn.timeout ?? Duration.minutes(15)).plus(Duration.seconds(TASK_TIMEOUT_MARGIN_SECONDS)),
    ),
    ...(options.payload ? { payload: options.payload } : {}),
    ...(options.resultPath ? { resultPath: options.resultPath } : {}),
  });
  if (options.retry) task.addRetry(options.retry);
  if (fn.registered.declaration.vendorApis.length > 0) task.addRetry(VENDOR_AUTH_RETRY);
  return task;
}

/**
 * Refuses a Task state bound to a function whose handler does not declare it: the construct, the
 * local runner and the least-privilege test then all agree on which handler runs which state.
 */
function checkStateBinding(state: string, fn: PipelineFunction): void {
  const declared = fn.registered.declaration.states;
  if (!declared.includes(state)) {
    throw new Error(
      `Task state '${state}' invokes ${fn.handlerFile}, but lambdas/registry.ts declares it for ${declared.length > 0 ? declared.join(', ') : 'no Task state'}`,
    );
  }
}

/**
 * The end of a per-item failure path: `recorder` (a task that writes the failure record and puts
 * the Fail state's Error and Cause at `$.failure`), then `failed`. When the recorder itself still
 * fails after `retry`, its Catch goes to the same Fail state through a Pass named `unrecordedState`
 * that keeps the failure's own label (`$.failure.error`, set by the Mark* state) as the Error, and
 * says in the Cause that nothing was recorded and why: the execution must end as the item's failure,
 * never as the recorder's raw task error.
 */
export function recordThenFail(
  scope: Construct,
  recorder: LambdaInvoke,
  failed: Fail,
  options: { retry: RetryProps; unrecordedState: string },
): void {
  recorder.addRetry(options.retry);
  recorder.next(failed);
  const unrecorded = new Pass(scope, options.unrecordedState, {
    parameters: {
      error: JsonPath.stringAt('$.failure.error'),
      cause: JsonPath.format(
        `{} (not recorded: ${recorder.stateId} failed with {}; the original error is in this execution history)`,
        JsonPath.stringAt('$.failure.error'),
        JsonPath.stringAt('$.notRecorded.Error'),
      ),
    },
    resultPath: '$.failure',
  });
  unrecorded.next(failed);
  recorder.addCatch(unrecorded, { errors: ['States.ALL'], resultPath: '$.notRecorded' });
}
