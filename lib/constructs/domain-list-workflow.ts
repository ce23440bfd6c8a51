import { Duration } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  DistributedMap,
  Fail,
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
import { Construct } from 'constructs';
import { DEFAULT_DOMAIN_LIST_SUFFIXES } from '#core/domain-list';
import { ENV } from '#core/runtime/variables';
import { LIST_SIZE_LIMIT } from '#core/workflows/list/list';
import { allowSpecialUseEnvironment } from '../config/index.ts';
import { bindDeclared } from './bindings.ts';
import { acknowledgeWildcards, arnFinding, executionsFinding } from './nag.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { lambdaTask, PipelineStateMachine } from './pipeline-state-machine.ts';
import { IDEMPOTENT_TASK_RETRY, START_CHILD_EXECUTION_RETRY } from './retry-policies.ts';

export interface DomainListWorkflowProps {
  /** Where uploaded domain lists live (read by PrepareDomainList). */
  readonly inputBucket: IBucket;
  /** items.json, rejects.json, the Map results and summary.json go under `lists/` here. */
  readonly resultsBucket: IBucket;
  /** The per-domain `ScanDomain` machine each list item runs as a child execution. */
  readonly scanStateMachine: IStateMachine;
  /**
   * How long one child execution may run (its own timeout); the ScanOneDomain task waits a bit longer.
   */
  readonly scanExecutionTimeout: Duration;
  /**
   * Domains scanned at the same time (Distributed Map MaxConcurrency, 1..10000).
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * Lower-case key suffixes accepted as domain lists (`INTAKE_SUFFIXES`).
   * @default DEFAULT_DOMAIN_LIST_SUFFIXES
   */
  readonly suffixes?: readonly string[];
  /**
   * Largest list object PrepareDomainList reads (`DOMAIN_LIST_MAX_BYTES`); larger ones are refused
   * with a summary.
   * @default LIST_SIZE_LIMIT.default (20 MiB)
   */
  readonly maxListBytes?: number;
  /**
   * Special-use suffixes the list parser accepts anyway (`ALLOW_SPECIAL_USE_DOMAINS`).
   * @default []
   */
  readonly allowSpecialUseDomains?: readonly string[];
  /**
   * Retention of the functions' and the state machine's logs.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
}

const LIST_STEP_TIMEOUT = Duration.minutes(5);
/** Slack for the child's start and the .sync completion polling after the child's own timeout. */
const CHILD_WAIT_MARGIN = Duration.minutes(15);

/**
 * Results the Distributed Map writes, confined to the results bucket's `lists/` prefix. The stock
 * ResultWriterV2 grants s3:PutObject/GetObject on the whole bucket (`<bucket>/*`); the map only
 * ever writes under the run's `lists/.../<runId>/` prefix.
 */
class ListsPrefixResultWriter extends ResultWriterV2 {
  private readonly resultsBucket: IBucket;

  constructor(props: ResultWriterV2Props & { readonly bucket: IBucket }) {
    super(props);
    this.resultsBucket = props.bucket;
  }

  public override providePolicyStatements(): PolicyStatement[] {
    return [
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
        resources: [this.resultsBucket.arnForObjects('lists/*')],
      }),
    ];
  }
}

/**
 * The domain-list run (`DomainListScan`, Standard): parse the list once, scan every domain as a
 * child `ScanDomain` execution through a Distributed Map (so a list of thousands of domains never
 * hits one execution's history limit), then account for every input line in summary.json.
 */
export class DomainListWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;
  public readonly prepareDomainListFunction: PipelineFunction;
  public readonly writeListSummaryFunction: PipelineFunction;

  constructor(scope: Construct, id: string, props: DomainListWorkflowProps) {
    super(scope, id);
    // The configuration schema (lib/config/) has validated these; the defaults serve direct use.
    const maxConcurrency = props.maxConcurrency ?? 10;
    const suffixes = props.suffixes ?? DEFAULT_DOMAIN_LIST_SUFFIXES;
    // ResultWriterV2 renders only when this flag is on; set it here so the construct does not
    // depend on the app's cdk.json (the flag is read from the construct tree, nearest first).
    this.node.setContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;

    this.prepareDomainListFunction = new PipelineFunction(this, 'PrepareDomainListFunction', {
      handlerFile: 'prepare-domain-list',
      timeout: LIST_STEP_TIMEOUT,
      // A 100,000-line list is parsed and deduplicated in memory.
      memorySize: 1024,
      environment: {
        [ENV.intakeSuffixes]: suffixes.join(','),
        [LIST_SIZE_LIMIT.variable]: String(props.maxListBytes ?? LIST_SIZE_LIMIT.default),
        ...allowSpecialUseEnvironment(props.allowSpecialUseDomains),
      },
      logRetention,
    });
    bindDeclared(this.prepareDomainListFunction, props);

    this.writeListSummaryFunction = new PipelineFunction(this, 'WriteListSummaryFunction', {
      handlerFile: 'write-list-summary',
      timeout: LIST_STEP_TIMEOUT,
      memorySize: 1024,
      logRetention,
    });
    bindDeclared(this.writeListSummaryFunction, props);

    const listFailed = new Fail(this, 'ListFailed', {
      errorPath: JsonPath.stringAt('$.caught.Error'),
      causePath: JsonPath.stringAt('$.caught.Cause'),
    });

    // Output replaces the state: PreparedDomainList (plus source and startedAt) is what the Map and
    // WriteListSummary read.
    const prepare = lambdaTask(this, 'PrepareDomainList', this.prepareDomainListFunction);
    prepare.addRetry(IDEMPOTENT_TASK_RETRY);
    prepare.addCatch(listFailed, { errors: ['States.ALL'], resultPath: '$.caught' });

    const scanOneDomain = new StepFunctionsStartExecution(this, 'ScanOneDomain', {
      stateMachine: props.scanStateMachine,
      // .sync:2: wait for the child and get its Input/Output as JSON, not strings.
      integrationPattern: IntegrationPattern.RUN_JOB,
      associateWithParent: true,
      // Deterministic per (run, domain): a retried or redriven item finds its execution again
      // instead of starting a second scan.
      name: JsonPath.stringAt('$.executionName'),
      input: TaskInput.fromObject({
        domain: JsonPath.stringAt('$.domain'),
        runId: JsonPath.stringAt('$.runId'),
      }),
      resultSelector: {
        domain: JsonPath.stringAt('$.Input.domain'),
        executionName: JsonPath.stringAt('$.Name'),
        output: JsonPath.objectAt('$.Output'),
      },
      taskTimeout: Timeout.duration(props.scanExecutionTimeout.plus(CHILD_WAIT_MARGIN)),
    });
    scanOneDomain.addRetry(START_CHILD_EXECUTION_RETRY);
    // A failed scan is a result, not a failed item: the summary reads the child's cause (a JSON ScanOutcome).
    const recordDomainError = new Pass(this, 'RecordDomainError', {
      parameters: {
        domain: JsonPath.stringAt('$.domain'),
        executionName: JsonPath.stringAt('$.executionName'),
        caught: JsonPath.objectAt('$.caught'),
      },
    });
    scanOneDomain.addCatch(recordDomainError, { errors: ['States.ALL'], resultPath: '$.caught' });

    const scanEachDomain = new DistributedMap(this, 'ScanEachDomain', {
      itemReader: new S3JsonItemReader({
        bucketNamePath: JsonPath.stringAt('$.resultsBucket'),
        key: JsonPath.stringAt('$.itemsKey'),
      }),
      itemSelector: {
        domain: JsonPath.stringAt('$$.Map.Item.Value.domain'),
        executionName: JsonPath.stringAt('$$.Map.Item.Value.executionName'),
        runId: JsonPath.stringAt('$$.Map.Item.Value.runId'),
        line: JsonPath.numberAt('$$.Map.Item.Value.line'),
      },
      maxConcurrency,
      // Every item catches its own failure; a failed item (e.g. a Map-level problem) must still
      // leave the run to WriteListSummary, which reports it per domain.
      toleratedFailurePercentage: 100,
      resultWriterV2: new ListsPrefixResultWriter({
        bucket: props.resultsBucket,
        prefix: JsonPath.stringAt('$.resultsPrefix'),
      }),
      resultPath: '$.mapResult',
      label: 'ScanEachDomain',
    });
    scanEachDomain.itemProcessor(scanOneDomain);
    scanEachDomain.addCatch(listFailed, { errors: ['States.ALL'], resultPath: '$.caught' });

    const writeSummary = lambdaTask(this, 'WriteListSummary', this.writeListSummaryFunction);
    writeSummary.addRetry(IDEMPOTENT_TASK_RETRY);
    writeSummary.addCatch(listFailed, { errors: ['States.ALL'], resultPath: '$.caught' });

    const definition = prepare
      .next(scanEachDomain)
      .next(writeSummary)
      .next(new Succeed(this, 'ListSucceeded'));

    const machine = new PipelineStateMachine(this, 'StateMachine', {
      comment: 'DomainListScan: scan every domain of one list and write summary.json (docs/contracts.md)',
      definition,
      // A list of any length at any concurrency: each child ScanDomain has its own timeout, and the
      // Map waits for them, so no fixed bound fits every list.
      timeout: 'unbounded',
      functions: [this.prepareDomainListFunction, this.writeListSummaryFunction],
      logRetention,
    });
    this.stateMachine = machine.stateMachine;
    this.logGroup = machine.logGroup;
    // The ItemReader takes its bucket from the state (bucketNamePath), so CDK grants nothing for it:
    // items.json is always under lists/ in the results bucket.
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [props.resultsBucket.arnForObjects('lists/*')],
      }),
    );

    acknowledgeWildcards(
      this.stateMachine,
      [arnFinding(props.resultsBucket, '/lists/*')],
      'The ItemReader reads and the ResultWriter writes run-specific keys (lists/<list>/<runId>/...) under the lists/ prefix of the results bucket.',
    );
    acknowledgeWildcards(
      this.stateMachine,
      [
        executionsFinding(props.scanStateMachine, '*'),
        executionsFinding(this.stateMachine, ':*'),
        executionsFinding(this.stateMachine, '/ScanEachDomain:*'),
      ],
      'Execution ARNs are only known at run time: .sync:2 describes/stops the ScanDomain executions it starts, and the Distributed Map manages (and can redrive) its own child executions.',
    );
  }
}
