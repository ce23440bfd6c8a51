import { Duration } from 'aws-cdk-lib';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStateMachine, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { DEFAULT_DOMAIN_LIST_SUFFIXES, LIST_SIZE_LIMIT } from '#lambdas/domain-list/domain-list';
import { ENV } from '#lambdas/platform/runtime/variables';
import { registeredHandler } from '#lambdas/registry';
import { allowSpecialUseEnvironment } from '../../config/environment.ts';
import { bindDeclared } from '../../platform/bindings.ts';
import {
  fanOutDefinition,
  grantChildExecutionMap,
  useResultWriterV2,
} from '../../platform/child-execution-map.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { PipelineStateMachine } from '../../platform/pipeline-state-machine.ts';

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
    useResultWriterV2(this);
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;

    this.prepareDomainListFunction = new PipelineFunction(this, 'PrepareDomainListFunction', {
      handler: registeredHandler('prepare-domain-list'),
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
      handler: registeredHandler('write-list-summary'),
      timeout: LIST_STEP_TIMEOUT,
      // The summary reads every Map result (100,000 at the documented maximum) and holds the
      // summary it writes: `npm run bench -- scale` measured a peak RSS of 632 MiB (list) and 539 MiB
      // (watchlist) at 100,000, over half of 1024 MB; 2048 MB keeps it under a third.
      memorySize: 2048,
      logRetention,
    });
    bindDeclared(this.writeListSummaryFunction, {
      ...props,
      stateMachines: { scan: props.scanStateMachine },
    });

    const mapProps = {
      mapName: 'ScanEachDomain',
      resultsBucket: props.resultsBucket,
      keyPrefix: 'lists/',
      child: props.scanStateMachine,
    } as const;
    const definition = fanOutDefinition(this, {
      prepare: { state: 'PrepareDomainList', fn: this.prepareDomainListFunction },
      map: {
        ...mapProps,
        taskName: 'ScanOneDomain',
        failureName: 'RecordDomainError',
        childTimeout: props.scanExecutionTimeout,
        maxConcurrency,
        itemFields: { domain: 'string', executionName: 'string', runId: 'string', line: 'number' },
        childInput: { domain: '$.domain', runId: '$.runId' },
        resultFields: { domain: '$.Input.domain' },
        failureFields: ['domain'],
      },
      summary: { state: 'WriteListSummary', fn: this.writeListSummaryFunction },
      failName: 'ListFailed',
      succeedName: 'ListSucceeded',
    });

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
    grantChildExecutionMap(this.stateMachine, mapProps);
  }
}
