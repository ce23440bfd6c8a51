import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import {
  Choice,
  Condition,
  Fail,
  JsonPath,
  Pass,
  Result,
  type StateMachine,
  Succeed,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  ARCHIVE_LIMIT_NAMES,
  type BreachLimits,
  breachLimitsEnvironment,
  DEFAULT_BREACH_LIMITS,
} from '#lambdas/breach/limits';
import type { BreachFailureName } from '#lambdas/breach/record-breach-failure';
import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { DEFAULT_THROTTLE_WAIT } from '#lambdas/platform/runs/throttle-wait';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { registeredHandler } from '#lambdas/registry';
import { bindDeclared } from '../../platform/bindings.ts';
import { acknowledge } from '../../platform/nag.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { lambdaTask, PipelineStateMachine, recordThenFail } from '../../platform/pipeline-state-machine.ts';
import { IDEMPOTENT_TASK_RETRY, LAMBDA_THROTTLE_ONLY_RETRY } from '../../platform/retry-policies.ts';
import type { VendorSecrets } from '../../platform/vendor-secrets.ts';

export interface BreachWorkflowProps {
  /** Recon records, archives, manifests and failure records go under `breach/` here. */
  readonly resultsBucket: IBucket;
  /** The vendor key; the breach API's secret is bound to the steps that call the vendor. */
  readonly vendorSecrets: VendorSecrets;
  /** Base URL of the vendor's breach-report API (`BREACH_API_URL`). */
  readonly breachApiUrl: string;
  /** Distinct addresses one report may cover (`BREACH_MAX_EMAILS`). */
  readonly maxEmails: number;
  /**
   * The input bounds (`BREACH_MAX_*`): Recon gets the payload bound, ArchiveReport the download
   * and ZIP bounds.
   * @default DEFAULT_BREACH_LIMITS
   */
  readonly limits?: BreachLimits;
  /**
   * Retention of the functions' and the state machine's logs.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
}

/** A recon answers within the vendor client's 60 s retry budget; 80 s leaves room for its last request. */
const VENDOR_CALL_TIMEOUT = Duration.seconds(80);
const S3_WRITE_TIMEOUT = Duration.seconds(50);
/** Streams a ZIP of any size, then reads it again to check every entry's CRC. */
const ARCHIVE_TIMEOUT = Duration.minutes(15);
/**
 * Backstop only: recon and archive with every retry take well under an hour, plus the waits of a
 * throttled recon (bounded by their budget); a run still going after that is stuck, and its
 * failure is better than a year-long Standard execution.
 */
const EXECUTION_TIMEOUT = Duration.hours(2).plus(Duration.seconds(DEFAULT_THROTTLE_WAIT.maxTotalWaitSeconds));

/**
 * The per-person breach report (`BreachReport`, Standard): Recon, then either archive the report's
 * ZIP and write the run's manifest, or, for `no_results`, succeed with recon.json as the record.
 * Every failure is labelled, written to failure.json and ends in a Fail state. The input names a
 * request object in S3 and the person's keyed hash: no email ever enters the execution history.
 */
export class BreachWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  /** The execution timeout (a backstop): a watchlist run waits this long for one person. */
  public readonly executionTimeout: Duration = EXECUTION_TIMEOUT;
  public readonly logGroup: LogGroup;
  public readonly reconFunction: PipelineFunction;
  public readonly archiveFunction: PipelineFunction;
  public readonly manifestFunction: PipelineFunction;
  public readonly recordFailureFunction: PipelineFunction;
  /**
   * The HMAC key that names report folders (`breach/reports/report-<hmac>/`): a report name may
   * hold an address, and an unkeyed hash of it can be guessed back. Its own key, not the identity
   * key that names people, so the functions that archive reports cannot name people.
   */
  public readonly reportNamingKey: Secret;

  constructor(scope: Construct, id: string, props: BreachWorkflowProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;
    this.reportNamingKey = new Secret(this, 'ReportNamingKey', {
      description: 'HMAC key that names breach report folders; not a credential',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      // Losing it renames every report folder: reconciliation would archive every report again.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.reportNamingKey,
      'AwsSolutions-SMG4',
      'An HMAC key for pseudonymous folder names, not a credential: rotating it would rename every report folder and make reconciliation archive every report again; a leak reveals no address by itself.',
    );
    const declared = { resultsBucket: props.resultsBucket, vendorSecrets: props.vendorSecrets };
    const vendorSettings = { [vendorApiVariables('breach').url]: props.breachApiUrl };
    const limits = props.limits ?? DEFAULT_BREACH_LIMITS;

    this.reconFunction = new PipelineFunction(this, 'ReconFunction', {
      handler: registeredHandler('breach-recon'),
      timeout: VENDOR_CALL_TIMEOUT,
      environment: {
        ...vendorSettings,
        [BREACH_VARIABLES.maxEmails]: String(props.maxEmails),
        ...breachLimitsEnvironment(limits, ['maxInlineValueBytes']),
      },
      logRetention,
    });
    bindDeclared(this.reconFunction, declared);

    this.archiveFunction = new PipelineFunction(this, 'ArchiveFunction', {
      handler: registeredHandler('archive-breach-report'),
      timeout: ARCHIVE_TIMEOUT,
      // Streaming with a multipart queue: memory buys parallel part uploads and network throughput.
      memorySize: 1024,
      environment: { ...vendorSettings, ...breachLimitsEnvironment(limits, ARCHIVE_LIMIT_NAMES) },
      logRetention,
    });
    bindDeclared(this.archiveFunction, { ...declared, secrets: { reportNamingKey: this.reportNamingKey } });

    this.manifestFunction = new PipelineFunction(this, 'ManifestFunction', {
      handler: registeredHandler('write-breach-manifest'),
      timeout: S3_WRITE_TIMEOUT,
      logRetention,
    });
    bindDeclared(this.manifestFunction, declared);

    this.recordFailureFunction = new PipelineFunction(this, 'RecordFailureFunction', {
      handler: registeredHandler('record-breach-failure'),
      timeout: S3_WRITE_TIMEOUT,
      logRetention,
    });
    bindDeclared(this.recordFailureFunction, declared);

    // --- Failure path: label, record, fail -----------------------------------------------------
    const failed = new Fail(this, 'BreachReportFailed', {
      errorPath: JsonPath.stringAt('$.failure.error'),
      causePath: JsonPath.stringAt('$.failure.cause'),
    });
    const recordFailure = lambdaTask(this, 'RecordBreachFailure', this.recordFailureFunction);
    recordThenFail(this, recordFailure, failed, {
      retry: IDEMPOTENT_TASK_RETRY,
      unrecordedState: 'BreachFailureNotRecorded',
    });
    // One Pass per label: a state may be the target of several Catches, but has one name.
    const marks = new Map<BreachFailureName, Pass>();
    const mark = (name: BreachFailureName): Pass => {
      let pass = marks.get(name);
      if (pass === undefined) {
        pass = new Pass(this, `Mark${name}`, {
          result: Result.fromObject({ error: name }),
          resultPath: '$.failure',
        });
        pass.next(recordFailure);
        marks.set(name, pass);
      }
      return pass;
    };

    // --- Happy path ----------------------------------------------------------------------------
    // Not idempotent: only Lambda's own throttling is retried here. A vendor 429 (which proves no
    // report was made) is waited out through WaitForReconSlot, at least the vendor's Retry-After:
    // a Retry's jitter could come back sooner than the vendor asked.
    const recon = lambdaTask(this, 'Recon', this.reconFunction, { retry: LAMBDA_THROTTLE_ONLY_RETRY });
    const waitForReconSlot = new Wait(this, 'WaitForReconSlot', {
      time: WaitTime.secondsPath('$.reconThrottle.waitSeconds'),
    });
    waitForReconSlot.next(recon);
    recon.addCatch(mark('ReconFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    const archive = lambdaTask(this, 'ArchiveReport', this.archiveFunction, { retry: IDEMPOTENT_TASK_RETRY });
    archive.addCatch(mark('ArchiveFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    const manifest = lambdaTask(this, 'WriteBreachManifest', this.manifestFunction);
    manifest.addRetry(IDEMPOTENT_TASK_RETRY);
    manifest.addCatch(mark('ManifestFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    const outcome = new Choice(this, 'BreachesFound?')
      // A throttled request routes here too, so an answered one pays no extra Choice.
      .when(Condition.isPresent('$.reconThrottle'), waitForReconSlot)
      .when(Condition.stringEquals('$.recon.status', 'success'), archive)
      // recon.json, already written, is the whole record of a clean result: a normal success.
      .when(Condition.stringEquals('$.recon.status', 'no_results'), new Succeed(this, 'NoBreachesFound'))
      // Recon itself refuses any other status; this only guards a hand-edited redrive.
      .otherwise(mark('ReconFailed'));

    const definition = recon.next(outcome);
    archive.next(manifest);
    manifest.next(new Succeed(this, 'ReportArchived'));

    const machine = new PipelineStateMachine(this, 'StateMachine', {
      // One execution per item: a failed one is a recorded outcome (failure.json); a burst is an incident.
      alarms: { failedThreshold: 5 },
      comment:
        "BreachReport: one person's breach report, recon then verified ZIP archive (docs/contracts.md)",
      definition,
      timeout: EXECUTION_TIMEOUT,
      functions: this.functions(),
      logRetention,
    });
    this.stateMachine = machine.stateMachine;
    this.logGroup = machine.logGroup;
  }

  public functions(): PipelineFunction[] {
    return [this.reconFunction, this.archiveFunction, this.manifestFunction, this.recordFailureFunction];
  }
}
