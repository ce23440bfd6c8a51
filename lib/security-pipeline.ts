import { Annotations, Duration } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { ARCHIVE_LIMIT_NAMES, breachLimitsEnvironment } from '#lambdas/breach/limits';
import { BREACH_VARIABLES } from '#lambdas/breach/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import {
  ORG_KEY_API,
  ORG_KEY_USED_FOR,
  registeredHandler,
  VENDOR_API_TITLES,
  type VendorApi,
} from '#lambdas/registry';
import { WATCHLIST_SUFFIXES } from '#lambdas/watchlist/watchlist-format';
import { checkBroughtResources } from './brought-resources.ts';
import { PipelineConfigError } from './config/errors.ts';
import { maxKeyAgeDays } from './config/rotation-schema.ts';
import { type PipelineConfig, VENDOR_URL_PLACEHOLDER } from './config/schema.ts';
import type { SecurityPipelineProps as ConstructProps } from './construct/props.ts';
import { pipelineConfigFromProps } from './construct/props-to-config.ts';
import { SecurityPipelineBase } from './construct/security-pipeline-base.ts';
import { DeadLetterQueue } from './platform/dead-letter-queue.ts';
import { setFunctionSettings } from './platform/function-settings.ts';
import { applyLogGroupLifetime } from './platform/log-group-lifetime.ts';
import { registerPipelineMetrics } from './platform/pipeline-metric.ts';
import { PipelineStorage } from './platform/pipeline-storage.ts';
import { ScheduledCatchUp } from './platform/scheduled-catch-up.ts';
import { schedulerRole } from './platform/scheduled-invoke.ts';
import { ScheduledRuns } from './platform/scheduled-runs.ts';
import { UploadIntake } from './platform/upload-intake.ts';
import { VendorSecrets } from './platform/vendor-secrets.ts';
import { BREACH_RECONCILIATION } from './workflows/breach/breach-reconciliation.ts';
import { BreachWorkflow } from './workflows/breach/breach-workflow.ts';
import { DOMAIN_LIST_RUNS, domainListSchedules } from './workflows/domain-list/domain-list-schedules.ts';
import { DomainListWorkflow } from './workflows/domain-list/domain-list-workflow.ts';
import { AlarmNotifications } from './workflows/operations/alarm-notifications.ts';
import { PipelineDashboard } from './workflows/operations/pipeline-dashboard.ts';
import { PipelineMetricAlarms } from './workflows/operations/pipeline-metric-alarms.ts';
import { PipelinePause } from './workflows/operations/pipeline-pause.ts';
import { RunNotifications } from './workflows/operations/run-notifications.ts';
import { VendorStatistics } from './workflows/operations/vendor-statistics.ts';
import { KeyRotation } from './workflows/rotation/key-rotation.ts';
import { ScanReconciliation } from './workflows/scan/scan-reconciliation.ts';
import { ScanWorkflow } from './workflows/scan/scan-workflow.ts';
import { WATCHLIST_RUNS, watchlistSchedules } from './workflows/watchlist/watchlist-schedules.ts';
import { WatchlistWorkflow } from './workflows/watchlist/watchlist-workflow.ts';

/**
 * The construct's settings (`SecurityPipelineSettingsProps`: each documented with its default, in
 * CDK's types), the resources a team may bring (`SecurityPipelineResources`), and the scan outputs.
 */
export interface SecurityPipelineProps extends ConstructProps {}

/**
 * The whole security pipeline in one construct: the scan, domain-list, breach, watchlist and
 * rotation workflows, their intake, schedules, reconciliation, alarms and dashboard. Bring your own
 * buckets, alarm topic or key secret through its props; everything else it creates.
 *
 * Settings are validated here, each problem naming its prop (`props.poll.maxWait (in seconds) …`), as are
 * the rules each brought resource must meet (a bucket versioned, SSL-only, blocking public access
 * and encrypted, each named in its problem; an imported one gets a synth warning listing them): an
 * imported input bucket gets its EventBridge notifications turned on, and a bucket or secret
 * under a customer managed KMS key is granted to the roles that use it.
 *
 * Where it goes: a stack pinned to an account and Region or environment-agnostic; beside another
 * stack of the pipeline in the same account and Region (dev and prod); or beside another
 * SecurityPipeline in the same stack, under another id. Its metrics' `service` dimension and its
 * state machines' log group names carry its name (the stack's name, and its path in the stack unless
 * its id is `Default` directly under the stack), so neighbours share no alarm metric and no
 * physical name. Every function runs on `lambdaRuntime` (Node.js 24 unless set).
 */
export class SecurityPipeline extends SecurityPipelineBase {
  /** The validated settings, defaults applied. */
  public readonly config: PipelineConfig;
  /** Where domain lists (`intake.prefix`) and watchlists (`breach.watchlistPrefix`) are uploaded. */
  public readonly inputBucket: IBucket;
  /** Scan outputs (scans/), list summaries (lists/) and breach reports (breach/). */
  public readonly resultsBucket: IBucket;
  /** Every alarm of the pipeline notifies it. */
  public readonly alarmTopic: ITopic;
  /** The org key's secret (in per-api mode the key-management API's; `vendorSecrets` has all). */
  public readonly vendorKeySecret: ISecret;
  /** ScanDomain: start with `{"domain": "example.com"}` to scan one domain. */
  public readonly scanStateMachine: IStateMachine;
  /** DomainListScan: one run per uploaded or scheduled domain list. */
  public readonly domainListStateMachine: IStateMachine;
  /** BreachReport: one person's breach report. */
  public readonly breachStateMachine: IStateMachine;
  /** WatchlistRun: one run per uploaded watchlist. */
  public readonly watchlistStateMachine: IStateMachine;
  public readonly alarmNotifications: AlarmNotifications;
  public readonly runNotifications: RunNotifications;
  public readonly storage: PipelineStorage;
  public readonly vendorSecrets: VendorSecrets<VendorApi>;
  public readonly scanWorkflow: ScanWorkflow;
  public readonly domainListWorkflow: DomainListWorkflow;
  public readonly pause: PipelinePause;
  public readonly intake: UploadIntake;
  public readonly schedules: ScheduledRuns;
  public readonly breachWorkflow: BreachWorkflow;
  public readonly watchlistWorkflow: WatchlistWorkflow;
  public readonly watchlistIntake: UploadIntake;
  public readonly breachReconciliation: ScheduledCatchUp;
  /** Undefined when `scan.reconciliation.enabled` is false. */
  public readonly scanReconciliation: ScanReconciliation | undefined;
  /** The vendor statistics job, on the reconciliation's schedule; undefined when that is off. */
  public readonly vendorStatistics: VendorStatistics | undefined;
  public readonly watchlistSchedules: ScheduledRuns;
  public readonly metricAlarms: PipelineMetricAlarms;
  public readonly dashboard: PipelineDashboard;
  /** Undefined when `rotation.enabled` is false. */
  public readonly keyRotation: KeyRotation | undefined;

  constructor(scope: Construct, id: string, props: SecurityPipelineProps = {}) {
    super(scope, id);
    // First: every function and metric below is named after this pipeline.
    registerPipelineMetrics(this);
    const { inputBucket, resultsBucket, alarmTopic, vendorKeySecret, vendorKeySecrets, ...settings } = props;
    const config = pipelineConfigFromProps(settings, `SecurityPipeline ${this.node.path} props`);
    this.config = config;
    setFunctionSettings(this, { runtime: config.lambdaRuntime, sourceMaps: config.lambdaSourceMaps });
    const problems = checkBroughtResources(
      this,
      { inputBucket, resultsBucket, alarmTopic, vendorKeySecret, vendorKeySecrets },
      { vendorKeys: config.vendor.keys, rotationEnabled: config.rotation.enabled },
    );
    if (problems.length > 0)
      throw new PipelineConfigError(`SecurityPipeline ${this.node.path} props`, problems);
    // CloudWatch's retention values are the RetentionDays enum values (checked in lib/config/schema.ts).
    const logRetention = config.logRetentionDays as RetentionDays;
    applyLogGroupLifetime(this, config.removalPolicy);

    if (config.vendor.scanApiUrl === VENDOR_URL_PLACEHOLDER) {
      Annotations.of(this).addWarningV2(
        'security-pipeline:vendorUrlPlaceholder',
        `vendor.scanApiUrl is the placeholder ${VENDOR_URL_PLACEHOLDER}: nothing deployed with it reaches the vendor: set vendor.scanApiUrl to the vendor's URL before deploying`,
      );
    }

    // First, so the reader finds it first: every alarm below (and any added later) notifies it.
    this.alarmNotifications = new AlarmNotifications(this, 'Alarms', {
      ...(config.notifications.email === undefined ? {} : { email: config.notifications.email }),
      ...(alarmTopic === undefined ? {} : { topic: alarmTopic }),
    });
    this.runNotifications = new RunNotifications(this, 'RunNotifications', {
      key: this.alarmNotifications.key,
      ...(config.notifications.runsEmail === undefined ? {} : { email: config.notifications.runsEmail }),
    });
    this.storage = new PipelineStorage(this, 'Storage', {
      removalPolicy: config.removalPolicy,
      accessLogExpirationDays: config.logRetentionDays,
      ...(inputBucket === undefined ? {} : { inputBucket }),
      ...(resultsBucket === undefined ? {} : { resultsBucket }),
    });
    this.vendorSecrets = new VendorSecrets<VendorApi>(this, 'VendorSecrets', {
      apis: VENDOR_API_TITLES,
      orgKeyUsedFor: ORG_KEY_USED_FOR,
      runbook: 'docs/runbooks/key-rotation.md',
      mode: config.vendor.keys,
      ...(vendorKeySecret === undefined ? {} : { orgKeySecret: vendorKeySecret }),
      ...(vendorKeySecrets === undefined ? {} : { apiKeySecrets: vendorKeySecrets }),
    });

    // One role for the pipeline's scheduled jobs: a role each is two resources per schedule, and a
    // stack of two pipelines must stay within CloudFormation's 500 resources.
    const jobsRole = schedulerRole(this, 'SchedulerRole', "invoke the pipeline's scheduled jobs");
    this.scanWorkflow = new ScanWorkflow(this, 'ScanDomain', {
      schedulerRole: jobsRole,
      resultsBucket: this.storage.resultsBucket,
      vendorSecrets: this.vendorSecrets,
      scanApiUrl: config.vendor.scanApiUrl,
      poll: config.poll,
      deleteAtVendorAfterManifest: config.scan.deleteAtVendorAfterManifest,
      logRetention,
      allowSpecialUseDomains: config.scan.allowSpecialUseDomains,
      ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
      listFields: config.scan.reconciliation.listFields,
      maxOutputBytes: config.scan.maxOutputBytes,
      maxDecodingRatio: config.scan.maxDecodingRatio,
    });

    this.domainListWorkflow = new DomainListWorkflow(this, 'DomainListScan', {
      inputBucket: this.storage.inputBucket,
      resultsBucket: this.storage.resultsBucket,
      scanStateMachine: this.scanWorkflow.stateMachine,
      scanExecutionTimeout: this.scanWorkflow.executionTimeout,
      maxConcurrency: config.scan.maxConcurrency,
      suffixes: config.intake.suffixes,
      maxListBytes: config.intake.maxListBytes,
      allowSpecialUseDomains: config.scan.allowSpecialUseDomains,
      logRetention,
    });

    this.pause = new PipelinePause(this, 'Pause');
    this.intake = new UploadIntake(this, 'Intake', {
      pause: this.pause,
      inputBucket: this.storage.inputBucket,
      stateMachines: { list: this.domainListWorkflow.stateMachine },
      handler: registeredHandler('start-domain-list'),
      functionId: 'StartDomainListFunction',
      kind: 'domain-list',
      prefix: config.intake.prefix,
      suffixes: config.intake.suffixes,
      maxEventAge: Duration.hours(6),
      logRetention,
    });

    this.schedules = new ScheduledRuns(this, 'Schedules', {
      startFunction: this.intake.startFunction,
      schedules: domainListSchedules(config.schedules, config.domainLists, this.storage.inputBucket),
      runs: DOMAIN_LIST_RUNS,
    });

    this.breachWorkflow = new BreachWorkflow(this, 'BreachReport', {
      resultsBucket: this.storage.resultsBucket,
      vendorSecrets: this.vendorSecrets,
      breachApiUrl: config.vendor.breachApiUrl,
      maxEmails: config.breach.maxEmails,
      limits: config.breach,
      logRetention,
    });
    this.watchlistWorkflow = new WatchlistWorkflow(this, 'WatchlistRun', {
      inputBucket: this.storage.inputBucket,
      resultsBucket: this.storage.resultsBucket,
      breachStateMachine: this.breachWorkflow.stateMachine,
      breachExecutionTimeout: this.breachWorkflow.executionTimeout,
      maxConcurrency: config.breach.maxConcurrency,
      maxEmails: config.breach.maxEmails,
      maxWatchlistBytes: config.breach.maxWatchlistBytes,
      maxWatchlistRows: config.breach.maxWatchlistRows,
      logRetention,
    });
    // The same intake as domain lists (execution named by the object's version, duplicates
    // ignored), for watchlist uploads under their own prefix.
    this.watchlistIntake = new UploadIntake(this, 'WatchlistIntake', {
      pause: this.pause,
      inputBucket: this.storage.inputBucket,
      stateMachines: { watchlist: this.watchlistWorkflow.stateMachine },
      prefix: config.breach.watchlistPrefix,
      suffixes: WATCHLIST_SUFFIXES,
      handler: registeredHandler('start-watchlist'),
      functionId: 'StartWatchlistFunction',
      kind: 'watchlist',
      maxEventAge: Duration.hours(6),
      logRetention,
    });
    // Each breach schedule names its watchlist object.
    this.watchlistSchedules = new ScheduledRuns(this, 'WatchlistSchedules', {
      startFunction: this.watchlistIntake.startFunction,
      schedules: watchlistSchedules(config.breach.schedules, this.storage.inputBucket),
      runs: WATCHLIST_RUNS,
    });
    this.breachReconciliation = new ScheduledCatchUp(this, 'BreachReconciliation', {
      ...BREACH_RECONCILIATION,
      schedulerRole: jobsRole,
      resultsBucket: this.storage.resultsBucket,
      vendorSecrets: this.vendorSecrets,
      declared: { secrets: { reportNamingKey: this.breachWorkflow.reportNamingKey } },
      environment: {
        [vendorApiVariables('breach').url]: config.vendor.breachApiUrl,
        ...breachLimitsEnvironment(config.breach, ARCHIVE_LIMIT_NAMES),
        [BREACH_VARIABLES.reconcileMaxArchives]: String(config.breach.reconcileMaxArchivesPerRun),
      },
      scheduleExpression: config.breach.reconcileSchedule,
      logRetention,
    });
    this.scanReconciliation = config.scan.reconciliation.enabled
      ? new ScanReconciliation(this, 'ScanReconciliation', {
          resultsBucket: this.storage.resultsBucket,
          vendorSecrets: this.vendorSecrets,
          scanWorkflow: this.scanWorkflow,
          reconciliation: config.scan.reconciliation,
          deadlineSeconds: config.poll.deadlineSeconds,
          deleteAtVendorAfterManifest: config.scan.deleteAtVendorAfterManifest,
          logRetention,
          schedulerRole: jobsRole,
          deadLetterQueue: this.scanWorkflow.earlyEndWatcher.deadLetterQueue,
        })
      : undefined;
    // On the reconciliation's schedule, sharing the scan jobs' queue: one more queue (and its alarm)
    // per pipeline for a daily read would not fit two pipelines in one stack either.
    this.vendorStatistics = this.scanReconciliation
      ? new VendorStatistics(this, 'VendorStatistics', {
          resultsBucket: this.storage.resultsBucket,
          vendorSecrets: this.vendorSecrets,
          scanApiUrl: config.vendor.scanApiUrl,
          ...(config.scan.statusVocabulary ? { statusVocabulary: config.scan.statusVocabulary } : {}),
          statsFields: config.scan.reconciliation.statsFields,
          scheduleExpression: config.scan.reconciliation.schedule,
          logRetention,
          schedulerRole: jobsRole,
          deadLetterQueue: this.scanWorkflow.earlyEndWatcher.deadLetterQueue,
        })
      : undefined;

    this.pause.resume(
      [this.intake, this.watchlistIntake].map((intake) => ({
        queue: intake.deadLetterQueue,
        fn: intake.startFunction,
      })),
      logRetention,
      jobsRole,
    );
    this.keyRotation = this.rotateOrgKey(config, logRetention);
    this.inputBucket = this.storage.inputBucket;
    this.resultsBucket = this.storage.resultsBucket;
    this.alarmTopic = this.alarmNotifications.topic;
    this.vendorKeySecret = this.vendorSecrets.secretFor(ORG_KEY_API);
    this.scanStateMachine = this.scanWorkflow.stateMachine;
    this.domainListStateMachine = this.domainListWorkflow.stateMachine;
    this.breachStateMachine = this.breachWorkflow.stateMachine;
    this.watchlistStateMachine = this.watchlistWorkflow.stateMachine;
    this.metricAlarms = new PipelineMetricAlarms(this, 'MetricAlarms', {
      ...config.alarms,
      // Quiet days only matter when schedules should have produced scans.
      schedulesEnabled: config.schedules.some((schedule) => schedule.enabled),
    });
    // Last: it shows every alarm and dead-letter queue created above.
    this.dashboard = new PipelineDashboard(this, 'Dashboard', {
      alarms: this.node.findAll().filter((c): c is Alarm => c instanceof Alarm),
      deadLetterQueues: this.node.findAll().filter((c): c is DeadLetterQueue => c instanceof DeadLetterQueue),
    });
  }

  /**
   * Native rotation of the org key (the key-management API's key: in single mode the one secret).
   * Every other secret says why it is not rotated here.
   */
  private rotateOrgKey(config: PipelineConfig, logRetention: RetentionDays): KeyRotation | undefined {
    const rotated = config.rotation.enabled ? this.vendorSecrets.secretFor(ORG_KEY_API) : undefined;
    for (const secret of this.vendorSecrets.secrets) {
      if (secret === rotated) continue;
      this.vendorSecrets.acknowledgeNotRotated(
        secret,
        rotated === undefined
          ? 'pipeline.rotation.enabled is false: the operator rotates this key by hand (docs/runbooks/key-rotation.md).'
          : "per-api mode: the vendor's rotate endpoint rotates the org key only; this API's own key is issued and replaced by the vendor (docs/runbooks/key-rotation.md).",
      );
    }
    if (rotated === undefined) return undefined;
    const rotation = new KeyRotation(this, 'KeyRotation', {
      secret: rotated,
      keysApiUrl: config.vendor.keysApiUrl,
      ...(config.vendor.orgUuid === undefined ? {} : { orgUuid: config.vendor.orgUuid }),
      scheduleExpression: config.rotation.schedule,
      window: Duration.hours(config.rotation.windowHours),
      ...(config.rotation.newKeyFieldPath === undefined
        ? {}
        : { newKeyFieldPath: config.rotation.newKeyFieldPath }),
      keyPropagation: Duration.seconds(config.rotation.keyPropagationSeconds),
      mirrors: config.rotation.mirrorSecrets,
      maxKeyAge: Duration.days(maxKeyAgeDays(config.rotation)),
      logRetention,
    });
    return rotation;
  }
}
