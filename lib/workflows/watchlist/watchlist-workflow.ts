import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IStateMachine, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BREACH_VARIABLES } from '#lambdas/breach/contracts';
import { registeredHandler } from '#lambdas/registry';
import { WATCHLIST_VARIABLES } from '#lambdas/watchlist/variables';
import { WATCHLIST_LIMITS } from '#lambdas/watchlist/watchlist-format';
import { bindDeclared } from '../../platform/bindings.ts';
import {
  fanOutDefinition,
  grantChildExecutionMap,
  useResultWriterV2,
} from '../../platform/child-execution-map.ts';
import { acknowledge } from '../../platform/nag.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { PipelineStateMachine } from '../../platform/pipeline-state-machine.ts';

export interface WatchlistWorkflowProps {
  /** Where watchlists are uploaded (read by PrepareWatchlist). */
  readonly inputBucket: IBucket;
  /** Requests, items, rows, the Map results and summary.json go under `breach/watchlists/` here. */
  readonly resultsBucket: IBucket;
  /** The per-person machine each row runs as a child execution. */
  readonly breachStateMachine: IStateMachine;
  /** The child's own execution timeout. */
  readonly breachExecutionTimeout: Duration;
  /** People reported on at once (the Map's MaxConcurrency). */
  readonly maxConcurrency: number;
  /** Distinct addresses one report may cover (`BREACH_MAX_EMAILS`). */
  readonly maxEmails: number;
  /** Largest watchlist read (`WATCHLIST_MAX_BYTES`). @default WATCHLIST_LIMITS.maxBytes.default */
  readonly maxWatchlistBytes?: number;
  /** People per watchlist (`WATCHLIST_MAX_ROWS`). @default WATCHLIST_LIMITS.maxRows.default */
  readonly maxWatchlistRows?: number;
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays;
}

const STEP_TIMEOUT = Duration.minutes(5);
/**
 * PrepareWatchlist at the largest watchlist allowed (100,000 people): parsing, hashing and signing
 * 100,000 PUTs is about a minute of one vCPU, and the PUTs themselves, 32 at a time at S3's
 * 10-30 ms, about as long again (`npm run bench -- scale`). Lambda's longest timeout, and a whole
 * vCPU (1,769 MB: https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html), keep it
 * under half its limit.
 */
const PREPARE_TIMEOUT = Duration.minutes(15);
const PREPARE_MEMORY_MB = 1769;

/**
 * A watchlist run (`WatchlistRun`, Standard): PrepareWatchlist reads the list once and stores one
 * request per person; a Distributed Map runs every person as a child BreachReport, with bounded
 * concurrency and a name that makes a redriven item find its child again; WriteWatchlistSummary
 * accounts for every row. Also owns the identity key: the HMAC key that names people.
 */
export class WatchlistWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  public readonly logGroup: LogGroup;
  public readonly identityKey: Secret;
  public readonly prepareFunction: PipelineFunction;
  public readonly summaryFunction: PipelineFunction;

  constructor(scope: Construct, id: string, props: WatchlistWorkflowProps) {
    super(scope, id);
    useResultWriterV2(this);
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;

    this.identityKey = new Secret(this, 'IdentityKey', {
      description:
        'HMAC key that names people in the breach workflow (keys, execution names); not a credential',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      // Losing it renames every person: their earlier folders could no longer be matched.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.identityKey,
      'AwsSolutions-SMG4',
      'An HMAC key for pseudonymous names, not a credential: rotating it would rename every person and orphan their earlier records, and a leak reveals no address by itself.',
    );

    this.prepareFunction = new PipelineFunction(this, 'PrepareWatchlistFunction', {
      handler: registeredHandler('prepare-watchlist'),
      timeout: PREPARE_TIMEOUT,
      memorySize: PREPARE_MEMORY_MB,
      environment: {
        [BREACH_VARIABLES.maxEmails]: String(props.maxEmails),
        [WATCHLIST_VARIABLES.maxBytes]: String(props.maxWatchlistBytes ?? WATCHLIST_LIMITS.maxBytes.default),
        [WATCHLIST_VARIABLES.maxRows]: String(props.maxWatchlistRows ?? WATCHLIST_LIMITS.maxRows.default),
      },
      logRetention,
    });
    bindDeclared(this.prepareFunction, { ...props, secrets: { identityKey: this.identityKey } });

    this.summaryFunction = new PipelineFunction(this, 'WriteWatchlistSummaryFunction', {
      handler: registeredHandler('write-watchlist-summary'),
      timeout: STEP_TIMEOUT,
      // The summary reads every Map result (100,000 at the documented maximum) and holds the
      // summary it writes: `npm run bench -- scale` measured a peak RSS of 632 MiB (list) and 539 MiB
      // (watchlist) at 100,000, over half of 1024 MB; 2048 MB keeps it under a third.
      memorySize: 2048,
      logRetention,
    });
    bindDeclared(this.summaryFunction, {
      ...props,
      stateMachines: { breach: props.breachStateMachine },
    });

    const mapProps = {
      mapName: 'ReportOnEachPerson',
      resultsBucket: props.resultsBucket,
      keyPrefix: 'breach/',
      child: props.breachStateMachine,
    } as const;
    const definition = fanOutDefinition(this, {
      prepare: { state: 'PrepareWatchlist', fn: this.prepareFunction },
      map: {
        ...mapProps,
        taskName: 'ReportOnePerson',
        failureName: 'RecordPersonError',
        childTimeout: props.breachExecutionTimeout,
        maxConcurrency: props.maxConcurrency,
        itemFields: {
          row: 'number',
          requestId: 'string',
          person: 'object',
          request: 'object',
          executionName: 'string',
        },
        childInput: { requestId: '$.requestId', person: '$.person', request: '$.request' },
        failureFields: ['row'],
      },
      summary: { state: 'WriteWatchlistSummary', fn: this.summaryFunction },
      failName: 'WatchlistFailed',
      succeedName: 'WatchlistSucceeded',
    });

    const machine = new PipelineStateMachine(this, 'StateMachine', {
      comment:
        'WatchlistRun: a breach report for every person of one watchlist, and summary.json (docs/contracts.md)',
      definition,
      // A watchlist of any length at any concurrency: each child has its own timeout.
      timeout: 'unbounded',
      functions: [this.prepareFunction, this.summaryFunction],
      logRetention,
    });
    this.stateMachine = machine.stateMachine;
    this.logGroup = machine.logGroup;
    grantChildExecutionMap(this.stateMachine, mapProps);
  }
}
