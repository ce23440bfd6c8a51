import { Duration } from 'aws-cdk-lib';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  Choice,
  Condition,
  Fail,
  JsonPath,
  Parallel,
  Pass,
  Result,
  type StateMachine,
  Succeed,
  TaskInput,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { registeredHandler } from '#lambdas/registry';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import type { FailureName } from '#lambdas/scan/record-scan-failure';
import { SCAN_OUTPUTS } from '#lambdas/scan/scan-outputs';
import { DEFAULT_START_THROTTLE } from '#lambdas/scan/start-throttle';
import { SCAN_VARIABLES } from '#lambdas/scan/variables';
import {
  allowSpecialUseEnvironment,
  pollEnvironment,
  scanListFieldsEnvironment,
  statusVocabularyEnvironment,
} from '../../config/environment.ts';
import type { PollConfig, StatusVocabularyConfig } from '../../config/schema.ts';
import { bindDeclared } from '../../platform/bindings.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { lambdaTask, PipelineStateMachine, recordThenFail } from '../../platform/pipeline-state-machine.ts';
import { IDEMPOTENT_TASK_RETRY, LAMBDA_THROTTLE_ONLY_RETRY } from '../../platform/retry-policies.ts';
import type { VendorSecrets } from '../../platform/vendor-secrets.ts';
import { EarlyEndWatcher, grantWaitingRecords, releasableWait } from './early-end-watcher.ts';

export interface ScanWorkflowProps {
  /** Scan outputs, manifests and failure records go under `scans/` here. */
  readonly resultsBucket: IBucket;
  /** The vendor key; the scanning API's secret is bound to the steps that call the vendor. */
  readonly vendorSecrets: VendorSecrets;
  /** Base URL of the vendor's scanning API (`SCAN_API_URL`). */
  readonly scanApiUrl: string;
  /** The adaptive poll loop (`POLL_*`, `SCAN_DEADLINE_SECONDS`); also sets the execution timeout. */
  readonly poll: PollConfig;
  /**
   * Overrides the vendor status words (`STATUS_VOCABULARY`).
   * @default - the handlers' built-in vocabulary
   */
  readonly statusVocabulary?: StatusVocabularyConfig;
  /**
   * Special-use suffixes StartScan accepts anyway (`ALLOW_SPECIAL_USE_DOMAINS`).
   * @default []
   */
  readonly allowSpecialUseDomains?: readonly string[];
  /**
   * Where the vendor's `GET /scans` keeps its list and fields (`SCAN_LIST_FIELDS`), for StartScan's
   * settling of a lost start: the same paths as `scan.reconciliation.listFields`.
   * @default - the common names
   */
  readonly listFields?: ListFields;
  /**
   * The byte cap of one output, after decoding (`SCAN_MAX_OUTPUT_BYTES`).
   * @default - the handlers' default, SCAN_OUTPUT_LIMIT.default (1 GiB)
   */
  readonly maxOutputBytes?: number;
  /**
   * How far a content-coded output may inflate, decoded over received bytes (`SCAN_MAX_DECODING_RATIO`).
   * @default - the handlers' default, SCAN_DECODING_LIMIT.default (100)
   */
  readonly maxDecodingRatio?: number;
  /**
   * The role the pipeline's scheduled jobs share, for the early-end watcher's tick.
   * @default a role of its own
   */
  readonly schedulerRole?: Role;
  /**
   * Adds `DeleteScanAtVendor` after `WriteManifest`; its failure never fails the scan.
   * @default false
   */
  readonly deleteAtVendorAfterManifest?: boolean;
  /**
   * Retention of the functions' and the state machine's logs.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
}

/**
 * Lambda timeouts. A vendor call retries 429/5xx inside the invocation for up to 60 s (the vendor
 * client's budget), so 80 s leaves room for its last request; S3-only steps need far less; a fetch
 * streams a possibly large output and gets Lambda's maximum.
 */
const VENDOR_CALL_TIMEOUT = Duration.seconds(80);
/**
 * StartScan settles a start whose answer was lost inside its invocation (lambdas/scan/start-scan.ts): its
 * start, two listings 2 s apart and possibly one more start. Settling inside the function (not as
 * states) keeps the ASL and the execution history as they were; it checks the time left and never
 * sends a start without 35 s for its answer. A timeout while it lists is harmless (ScanRejected,
 * no start in flight), so this bounds the common case, not the worst one.
 */
const START_SCAN_TIMEOUT = Duration.seconds(150);
const S3_WRITE_TIMEOUT = Duration.seconds(50);
const FETCH_TIMEOUT = Duration.minutes(15);
/** Backstop only: the Choice's deadline check ends the loop first. */
const EXECUTION_TIMEOUT_MARGIN = Duration.hours(2);

/**
 * The per-domain scan (`ScanDomain`, Standard): start the scan, poll with an adaptive wait until
 * it finishes or the deadline passes, stream each output of lambdas/scan/scan-outputs.ts (report,
 * logs, debug) into S3, write the manifest last.
 * State names, handler files and environment variables follow docs/contracts.md exactly: the
 * local runner binds handlers to states by name.
 */
export class ScanWorkflow extends Construct {
  public readonly stateMachine: StateMachine;
  /** The execution timeout: the poll deadline plus a margin (a backstop behind the Choice's check). */
  public readonly executionTimeout: Duration;
  public readonly logGroup: LogGroup;
  public readonly startScanFunction: PipelineFunction;
  public readonly pollScanStatusFunction: PipelineFunction;
  public readonly fetchScanOutputFunction: PipelineFunction;
  public readonly writeScanManifestFunction: PipelineFunction;
  public readonly recordScanFailureFunction: PipelineFunction;
  /** Releases the wait of a scan that ended long before its execution planned to poll again. */
  public readonly earlyEndWatcher: EarlyEndWatcher;
  /** Only when `deleteAtVendorAfterManifest` is set. */
  public readonly deleteScanFunction?: PipelineFunction;
  /**
   * What the vendor-calling steps read (SCAN_API_URL, the poll settings, STATUS_VOCABULARY,
   * ALLOW_SPECIAL_USE_DOMAINS): a function that runs these steps outside the machine (scan
   * reconciliation) gets the same.
   */
  public readonly vendorStepEnvironment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: ScanWorkflowProps) {
    super(scope, id);
    const { poll } = props;
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;
    // Steps that only write S3 get the poll settings (the shared settings validate them) but no
    // vendor URL; vendor-calling steps get the URL alongside their secret binding.
    const s3OnlySettings = {
      ...pollEnvironment(poll),
      ...statusVocabularyEnvironment(props.statusVocabulary),
      ...allowSpecialUseEnvironment(props.allowSpecialUseDomains),
    };
    const scanSettings = {
      [vendorApiVariables('scan').url]: props.scanApiUrl,
      ...s3OnlySettings,
      ...scanListFieldsEnvironment(props.listFields),
      ...(props.maxOutputBytes === undefined
        ? {}
        : { [SCAN_VARIABLES.maxOutputBytes]: String(props.maxOutputBytes) }),
      ...(props.maxDecodingRatio === undefined
        ? {}
        : { [SCAN_VARIABLES.maxDecodingRatio]: String(props.maxDecodingRatio) }),
    };
    this.vendorStepEnvironment = scanSettings;

    // --- Functions: each gets what its handler declares in lambdas/registry.ts -------------------------------
    this.startScanFunction = new PipelineFunction(this, 'StartScanFunction', {
      handler: registeredHandler('start-scan'),
      timeout: START_SCAN_TIMEOUT,
      environment: scanSettings,
      logRetention,
    });
    const declared = { resultsBucket: props.resultsBucket, vendorSecrets: props.vendorSecrets };
    bindDeclared(this.startScanFunction, declared);

    this.pollScanStatusFunction = new PipelineFunction(this, 'PollScanStatusFunction', {
      handler: registeredHandler('poll-scan-status'),
      timeout: VENDOR_CALL_TIMEOUT,
      environment: scanSettings,
      logRetention,
    });
    bindDeclared(this.pollScanStatusFunction, declared);

    this.fetchScanOutputFunction = new PipelineFunction(this, 'FetchScanOutputFunction', {
      handler: registeredHandler('fetch-scan-output'),
      timeout: FETCH_TIMEOUT,
      // Streaming with a multipart queue: memory buys parallel part uploads and network throughput.
      memorySize: 1024,
      environment: scanSettings,
      logRetention,
    });
    bindDeclared(this.fetchScanOutputFunction, declared);

    this.writeScanManifestFunction = new PipelineFunction(this, 'WriteScanManifestFunction', {
      handler: registeredHandler('write-scan-manifest'),
      timeout: S3_WRITE_TIMEOUT,
      environment: s3OnlySettings,
      logRetention,
    });
    bindDeclared(this.writeScanManifestFunction, declared);

    this.recordScanFailureFunction = new PipelineFunction(this, 'RecordScanFailureFunction', {
      handler: registeredHandler('record-scan-failure'),
      timeout: S3_WRITE_TIMEOUT,
      environment: s3OnlySettings,
      logRetention,
    });
    bindDeclared(this.recordScanFailureFunction, declared);

    if (props.deleteAtVendorAfterManifest) {
      this.deleteScanFunction = new PipelineFunction(this, 'DeleteScanFunction', {
        handler: registeredHandler('delete-scan'),
        timeout: VENDOR_CALL_TIMEOUT,
        environment: scanSettings,
        logRetention,
      });
      bindDeclared(this.deleteScanFunction, declared);
    }

    // --- Failure path: label, record, fail ---------------------------------------------------
    const failed = new Fail(this, 'Failed', {
      errorPath: JsonPath.stringAt('$.failure.error'),
      causePath: JsonPath.stringAt('$.failure.cause'),
    });
    const recordFailure = lambdaTask(this, 'RecordFailure', this.recordScanFailureFunction);
    recordThenFail(this, recordFailure, failed, {
      retry: IDEMPOTENT_TASK_RETRY,
      unrecordedState: 'FailureNotRecorded',
    });
    // The labels RecordFailure understands: one type, owned by the step that interprets them.
    const mark = (name: FailureName): Pass => {
      const pass = new Pass(this, `Mark${name}`, {
        result: Result.fromObject({ error: name }),
        resultPath: '$.failure',
      });
      pass.next(recordFailure);
      return pass;
    };

    // --- Happy path ----------------------------------------------------------------------------
    const startScan = lambdaTask(this, 'StartScan', this.startScanFunction, {
      // StartScan waits out a vendor 429 through WaitForStartSlot, at least the vendor's Retry-After.
      retry: LAMBDA_THROTTLE_ONLY_RETRY,
    });
    startScan.addCatch(mark('ScanRejected'), { errors: ['States.ALL'], resultPath: '$.caught' });
    // A start the vendor throttled: StartScan computed Retry-After plus jitter, waited here exactly.
    const waitForStartSlot = new Wait(this, 'WaitForStartSlot', {
      time: WaitTime.secondsPath('$.startThrottle.waitSeconds'),
    });
    waitForStartSlot.next(startScan);

    const pollStatus = lambdaTask(this, 'PollScanStatus', this.pollScanStatusFunction, {
      retry: IDEMPOTENT_TASK_RETRY,
    });
    pollStatus.addCatch(mark('PollFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    const waitForScan = releasableWait(this, {
      resultsBucket: props.resultsBucket,
      deadlineSeconds: poll.deadlineSeconds,
      next: pollStatus,
    });

    const fetchOutputs = new Parallel(this, 'FetchOutputs', { resultPath: '$.stored' });
    // One branch per row of the outputs table, in its order (the order of `$.stored`).
    for (const { stateName, name: output } of SCAN_OUTPUTS) {
      const fetch = lambdaTask(this, stateName, this.fetchScanOutputFunction, {
        // The ScanInProgress fields plus which output to stream (one handler serves every output).
        payload: TaskInput.fromObject({
          domain: JsonPath.stringAt('$.domain'),
          runId: JsonPath.stringAt('$.runId'),
          scanUuid: JsonPath.stringAt('$.scanUuid'),
          outputPrefix: JsonPath.stringAt('$.outputPrefix'),
          poll: JsonPath.objectAt('$.poll'),
          status: JsonPath.objectAt('$.status'),
          output,
        }),
        retry: IDEMPOTENT_TASK_RETRY,
      });
      fetchOutputs.branch(fetch);
    }
    fetchOutputs.addCatch(mark('OutputFetchFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    const writeManifest = lambdaTask(this, 'WriteManifest', this.writeScanManifestFunction);
    writeManifest.addRetry(IDEMPOTENT_TASK_RETRY);
    writeManifest.addCatch(mark('ManifestFailed'), { errors: ['States.ALL'], resultPath: '$.caught' });

    // The execution ends at the last Task (End: true): a Succeed state after it would be one more
    // billed transition in every scan. Only the clean-up's Catch needs one to end on.
    if (this.deleteScanFunction) {
      // The scan's outputs are safe in S3 by now: a failed clean-up must not fail the scan, and
      // the execution output stays the manifest's ScanOutcome.
      const deleteScan = lambdaTask(this, 'DeleteScanAtVendor', this.deleteScanFunction, {
        resultPath: JsonPath.DISCARD,
        retry: IDEMPOTENT_TASK_RETRY,
      });
      deleteScan.addCatch(new Succeed(this, 'ScanSucceeded'), {
        errors: ['States.ALL'],
        resultPath: JsonPath.DISCARD,
      });
      writeManifest.next(deleteScan);
    }

    const scanFinished = new Choice(this, 'ScanFinished?')
      .when(Condition.stringEquals('$.status.state', 'succeeded'), fetchOutputs)
      .when(Condition.stringEquals('$.status.state', 'failed'), mark('ScanFailed'))
      .when(Condition.booleanEquals('$.poll.deadlineExceeded', true), mark('ScanTimedOut'))
      .otherwise(waitForScan);

    const started = new Choice(this, 'StartThrottled?')
      .when(Condition.isPresent('$.startThrottle'), waitForStartSlot)
      .otherwise(waitForScan);
    const definition = startScan.next(started);
    pollStatus.next(scanFinished);
    fetchOutputs.next(writeManifest);

    // The poll deadline starts at the accepted start; throttled starts may wait up to their budget before it.
    this.executionTimeout = Duration.seconds(
      poll.deadlineSeconds + DEFAULT_START_THROTTLE.maxTotalWaitSeconds,
    ).plus(EXECUTION_TIMEOUT_MARGIN);
    const machine = new PipelineStateMachine(this, 'StateMachine', {
      // One execution per item: a failed one is a recorded outcome (failure.json); a burst is an incident.
      alarms: { failedThreshold: 5 },
      comment: 'ScanDomain: scan one domain at the vendor and store its outputs (docs/contracts.md)',
      definition,
      timeout: this.executionTimeout,
      functions: this.functions(),
      logRetention,
    });
    this.stateMachine = machine.stateMachine;
    this.logGroup = machine.logGroup;
    grantWaitingRecords(this.stateMachine, props.resultsBucket);
    this.earlyEndWatcher = new EarlyEndWatcher(this, 'EarlyEndWatcher', {
      pollFunction: this.pollScanStatusFunction,
      ...(props.schedulerRole === undefined ? {} : { schedulerRole: props.schedulerRole }),
    });
  }

  /** Every function of the workflow (the optional delete function included when present). */
  public functions(): PipelineFunction[] {
    return [
      this.startScanFunction,
      this.pollScanStatusFunction,
      this.fetchScanOutputFunction,
      this.writeScanManifestFunction,
      this.recordScanFailureFunction,
      ...(this.deleteScanFunction ? [this.deleteScanFunction] : []),
    ];
  }
}
