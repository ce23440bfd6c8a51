/**
 * The fan-out both list workflows share: a Distributed Map that reads its items from a JSON file in
 * the results bucket, starts one child execution per item under a deterministic name (a retried or
 * redriven item finds its child again instead of starting a second one), catches each child's
 * failure as a result, and writes the results back under the workflow's own prefix.
 */
import { Duration } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  DistributedMap,
  Fail,
  type IChainable,
  IntegrationPattern,
  type IStateMachine,
  JsonPath,
  Pass,
  ResultWriterV2,
  type ResultWriterV2Props,
  S3JsonItemReader,
  type StateMachine,
  Succeed,
  TaskInput,
  Timeout,
} from 'aws-cdk-lib/aws-stepfunctions';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2 } from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { grantBucketKey } from './customer-keys.ts';
import { acknowledgeWildcards, arnFinding, executionsFinding } from './nag.ts';
import type { PipelineFunction } from './pipeline-function.ts';
import { lambdaTask } from './pipeline-state-machine.ts';
import { IDEMPOTENT_TASK_RETRY, START_CHILD_EXECUTION_RETRY } from './retry-policies.ts';

/** Slack for the child's start and the .sync completion polling after the child's own timeout. */
const CHILD_WAIT_MARGIN = Duration.minutes(15);

/**
 * Results the Distributed Map writes, confined to one prefix of the results bucket. The stock
 * ResultWriterV2 grants s3:PutObject/GetObject on the whole bucket (`<bucket>/*`).
 */
class PrefixResultWriter extends ResultWriterV2 {
  constructor(
    props: ResultWriterV2Props,
    private readonly resultsBucket: IBucket,
    private readonly keyPrefix: string,
  ) {
    super(props);
  }

  public override providePolicyStatements(): PolicyStatement[] {
    return [
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
        resources: [this.resultsBucket.arnForObjects(`${this.keyPrefix}*`)],
      }),
    ];
  }
}

export interface ChildExecutionMapProps {
  /** The Map state's name; the child task is `<taskName>`, its failure record `<failureName>`. */
  readonly mapName: string;
  readonly taskName: string;
  readonly failureName: string;
  /** The machine each item runs as a child execution. */
  readonly child: IStateMachine;
  /** The child's own execution timeout. */
  readonly childTimeout: Duration;
  readonly resultsBucket: IBucket;
  /** The workflow's prefix in the results bucket (`lists/`, `breach/`): items, results. */
  readonly keyPrefix: string;
  /** Items run at once (MaxConcurrency). */
  readonly maxConcurrency: number;
  /** Fields of each item passed on to the task (`$$.Map.Item.Value.<field>`); `executionName` is required. */
  readonly itemFields: Readonly<Record<string, 'string' | 'number' | 'object'>>;
  /** The child's input, from the item's fields (`$.<field>`). */
  readonly childInput: Readonly<Record<string, string>>;
  /** Item fields kept next to the failure when a child fails, so the summary can find its row. */
  readonly failureFields: readonly string[];
  /** Fields added to each child's result, from its DescribeExecution (`$.Input.domain`). @default {} */
  readonly resultFields?: Readonly<Record<string, string>>;
}

/**
 * The Distributed Map state. The state machine that holds it must then call
 * {@link grantChildExecutionMap}: the ItemReader takes its bucket from the state, so CDK grants
 * nothing for it.
 */
export function childExecutionMap(scope: Construct, props: ChildExecutionMapProps): DistributedMap {
  if (scope.node.tryGetContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2) !== true) {
    throw new Error(`${scope.node.path}: call useResultWriterV2(this) first in the constructor`);
  }
  const runChild = new StepFunctionsStartExecution(scope, props.taskName, {
    stateMachine: props.child,
    // .sync:2: wait for the child and get its Input/Output as JSON, not strings.
    integrationPattern: IntegrationPattern.RUN_JOB,
    associateWithParent: true,
    name: JsonPath.stringAt('$.executionName'),
    input: TaskInput.fromObject(
      Object.fromEntries(
        Object.entries(props.childInput).map(([key, path]) => [key, JsonPath.objectAt(path)]),
      ),
    ),
    resultSelector: {
      ...Object.fromEntries(
        Object.entries(props.resultFields ?? {}).map(([key, path]) => [key, JsonPath.stringAt(path)]),
      ),
      executionName: JsonPath.stringAt('$.Name'),
      output: JsonPath.objectAt('$.Output'),
    },
    taskTimeout: Timeout.duration(props.childTimeout.plus(CHILD_WAIT_MARGIN)),
  });
  runChild.addRetry(START_CHILD_EXECUTION_RETRY);
  // A failed child is a result, not a failed item: the summary reads the child's cause.
  const recordFailure = new Pass(scope, props.failureName, {
    parameters: {
      ...Object.fromEntries(props.failureFields.map((field) => [field, JsonPath.objectAt(`$.${field}`)])),
      executionName: JsonPath.stringAt('$.executionName'),
      caught: JsonPath.objectAt('$.caught'),
    },
  });
  runChild.addCatch(recordFailure, { errors: ['States.ALL'], resultPath: '$.caught' });

  const map = new DistributedMap(scope, props.mapName, {
    itemReader: new S3JsonItemReader({
      bucketNamePath: JsonPath.stringAt('$.resultsBucket'),
      key: JsonPath.stringAt('$.itemsKey'),
    }),
    itemSelector: Object.fromEntries(
      Object.entries(props.itemFields).map(([field, kind]) => {
        const path = `$$.Map.Item.Value.${field}`;
        return [
          field,
          kind === 'number'
            ? JsonPath.numberAt(path)
            : kind === 'object'
              ? JsonPath.objectAt(path)
              : JsonPath.stringAt(path),
        ];
      }),
    ),
    maxConcurrency: props.maxConcurrency,
    // Every item catches its own failure; a Map-level problem must still reach the summary.
    toleratedFailurePercentage: 100,
    resultWriterV2: new PrefixResultWriter(
      { bucket: props.resultsBucket, prefix: JsonPath.stringAt('$.resultsPrefix') },
      props.resultsBucket,
      props.keyPrefix,
    ),
    resultPath: '$.mapResult',
    label: props.mapName,
  });
  map.itemProcessor(runChild);
  return map;
}

/**
 * ResultWriterV2 renders only when this feature flag is on. A construct with a child-execution map
 * sets it on itself, before its first child, so it does not depend on the app's cdk.json (the flag
 * is read from the construct tree, nearest first).
 */
export function useResultWriterV2(scope: Construct): void {
  scope.node.setContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
}

/** What the parent machine needs for the map: read items under the prefix; the cdk-nag reasons. */
export function grantChildExecutionMap(
  stateMachine: StateMachine,
  props: Pick<ChildExecutionMapProps, 'resultsBucket' | 'keyPrefix' | 'child' | 'mapName'>,
): void {
  stateMachine.addToRolePolicy(
    new PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [props.resultsBucket.arnForObjects(`${props.keyPrefix}*`)],
    }),
  );
  // The ResultWriter writes there too (PrefixResultWriter).
  grantBucketKey(stateMachine, props.resultsBucket, 'write');
  acknowledgeWildcards(
    stateMachine,
    [arnFinding(props.resultsBucket, `/${props.keyPrefix}*`)],
    `The ItemReader reads and the ResultWriter writes run-specific keys (${props.keyPrefix}<run>/...) under the ${props.keyPrefix} prefix of the results bucket.`,
  );
  acknowledgeWildcards(
    stateMachine,
    [
      executionsFinding(props.child, '*'),
      executionsFinding(stateMachine, ':*'),
      executionsFinding(stateMachine, `/${props.mapName}:*`),
    ],
    'Execution ARNs are only known at run time: .sync:2 describes/stops the child executions it starts, and the Distributed Map manages (and can redrive) its own child executions.',
  );
}

export interface FanOutDefinitionProps {
  /** The Task state that prepares the items, and its function. */
  readonly prepare: { readonly state: string; readonly fn: PipelineFunction };
  /** The Task state that writes the summary from the Map's results, and its function. */
  readonly summary: { readonly state: string; readonly fn: PipelineFunction };
  readonly map: ChildExecutionMapProps;
  /** The Fail state every step's Catch goes to, and the final Succeed state. */
  readonly failName: string;
  readonly succeedName: string;
}

/**
 * Prepare -> child-execution map -> summary -> Succeed: the definition of a fan-out workflow. Each
 * Lambda step retries what an idempotent task may; any error ends in one Fail state with the
 * caught error and cause. The Map only fails as a whole (its children's failures are results).
 */
export function fanOutDefinition(scope: Construct, props: FanOutDefinitionProps): IChainable {
  const failed = new Fail(scope, props.failName, {
    errorPath: JsonPath.stringAt('$.caught.Error'),
    causePath: JsonPath.stringAt('$.caught.Cause'),
  });
  const catchAll = { errors: ['States.ALL'], resultPath: '$.caught' };
  // Output replaces the state: the prepared run is what the Map and the summary read.
  const prepare = lambdaTask(scope, props.prepare.state, props.prepare.fn);
  prepare.addRetry(IDEMPOTENT_TASK_RETRY);
  prepare.addCatch(failed, catchAll);
  const map = childExecutionMap(scope, props.map);
  map.addCatch(failed, catchAll);
  const summary = lambdaTask(scope, props.summary.state, props.summary.fn);
  summary.addRetry(IDEMPOTENT_TASK_RETRY);
  summary.addCatch(failed, catchAll);
  return prepare.next(map).next(summary).next(new Succeed(scope, props.succeedName));
}
