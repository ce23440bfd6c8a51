import { Annotations, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ARCHIVE_LIMIT_NAMES, breachLimitsEnvironment } from '#lambdas/breach/limits';
import { ENV } from '#lambdas/platform/runtime/variables';
import type { ScanOutput } from '#lambdas/scan/contracts';
import { WATCHLIST_SUFFIXES } from '#lambdas/watchlist/watchlist';
import { maxKeyAgeDays, type PipelineConfig, VENDOR_URL_PLACEHOLDER } from './config/index.ts';
import { DeadLetterQueue } from './platform/dead-letter-queue.ts';
import { applyLogGroupLifetime } from './platform/log-group-lifetime.ts';
import { PipelineStorage } from './platform/pipeline-storage.ts';
import { ScheduledReconciliation } from './platform/scheduled-reconciliation.ts';
import { ScheduledRuns } from './platform/scheduled-runs.ts';
import { UploadIntake } from './platform/upload-intake.ts';
import { VendorSecrets } from './platform/vendor-secrets.ts';
import { BreachWorkflow } from './workflows/breach/breach-workflow.ts';
import { DomainListWorkflow } from './workflows/domain-list/domain-list-workflow.ts';
import { AlarmNotifications } from './workflows/operations/alarm-notifications.ts';
import { PipelineDashboard } from './workflows/operations/pipeline-dashboard.ts';
import { PipelineMetricAlarms } from './workflows/operations/pipeline-metric-alarms.ts';
import { PipelinePause } from './workflows/operations/pipeline-pause.ts';
import { RunNotifications } from './workflows/operations/run-notifications.ts';
import { KeyRotation } from './workflows/rotation/key-rotation.ts';
import { ScanReconciliation } from './workflows/scan/scan-reconciliation.ts';
import { ScanWorkflow } from './workflows/scan/scan-workflow.ts';
import { WatchlistWorkflow } from './workflows/watchlist/watchlist-workflow.ts';

export interface SecurityPipelineStackProps extends StackProps {
  /** Validated configuration (lib/config/ `parsePipelineConfig` / `loadPipelineConfig`). */
  readonly config: PipelineConfig;
  /**
   * The scan outputs: the fetch branches, the manifest's list and the NothingStored alarm follow
   * it. `withScanOutputs(rows)` (lambdas/scan/scan-outputs.ts) adds outputs for this stack only.
   * @default SCAN_OUTPUTS (report, logs, debug)
   */
  readonly scanOutputs?: readonly ScanOutput[];
}

/** Composes the pipeline's constructs; owns no resources of its own. */
export class SecurityPipelineStack extends Stack {
  public readonly alarmNotifications: AlarmNotifications;
  public readonly runNotifications: RunNotifications;
  public readonly storage: PipelineStorage;
  public readonly vendorSecrets: VendorSecrets;
  public readonly scanWorkflow: ScanWorkflow;
  public readonly domainListWorkflow: DomainListWorkflow;
  public readonly pause: PipelinePause;
  public readonly intake: UploadIntake;
  public readonly schedules: ScheduledRuns;
  public readonly breachWorkflow: BreachWorkflow;
  public readonly watchlistWorkflow: WatchlistWorkflow;
  public readonly watchlistIntake: UploadIntake;
  public readonly breachReconciliation: ScheduledReconciliation;
  /** Undefined when `scan.reconciliation.enabled` is false. */
  public readonly scanReconciliation: ScanReconciliation | undefined;
  public readonly watchlistSchedules: ScheduledRuns;
  public readonly metricAlarms: PipelineMetricAlarms;
  public readonly dashboard: PipelineDashboard;
  /** Undefined when `rotation.enabled` is false. */
  public readonly keyRotation: KeyRotation | undefined;

  constructor(scope: Construct, id: string, props: SecurityPipelineStackProps) {
    super(scope, id, {
      description:
        'Security vendor pipeline: domain scans and breach reports orchestrated by Step Functions, results in S3',
      ...props,
    });
    const { config } = props;
    // CloudWatch's retention values are the RetentionDays enum values (checked in lib/config/schema.ts).
    const logRetention = config.logRetentionDays as RetentionDays;
    applyLogGroupLifetime(this, config.removalPolicy);

    if (config.vendor.scanApiUrl === VENDOR_URL_PLACEHOLDER) {
      Annotations.of(this).addWarningV2(
        'security-pipeline:vendorUrlPlaceholder',
        `pipeline.vendor.scanApiUrl is the placeholder ${VENDOR_URL_PLACEHOLDER}: set the vendor's URL (cdk.json context "pipeline" or -c pipelineConfigFile=...) before deploying`,
      );
    }

    // First, so the reader finds it first: every alarm below (and any added later) notifies it.
    this.alarmNotifications = new AlarmNotifications(
      this,
      'Alarms',
      config.notifications.email === undefined ? {} : { email: config.notifications.email },
    );
    this.runNotifications = new RunNotifications(this, 'RunNotifications', {
      key: this.alarmNotifications.key,
      ...(config.notifications.runsEmail === undefined ? {} : { email: config.notifications.runsEmail }),
    });
    this.storage = new PipelineStorage(this, 'Storage', {
      removalPolicy: config.removalPolicy,
      accessLogExpirationDays: config.logRetentionDays,
    });
    this.vendorSecrets = new VendorSecrets(this, 'VendorSecrets', { mode: config.vendor.keys });

    this.scanWorkflow = new ScanWorkflow(this, 'ScanDomain', {
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
      ...(props.scanOutputs ? { outputs: props.scanOutputs } : {}),
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
      listStateMachine: this.domainListWorkflow.stateMachine,
      prefix: config.intake.prefix,
      suffixes: config.intake.suffixes,
      maxEventAge: Duration.hours(6),
      logRetention,
    });

    this.schedules = new ScheduledRuns(this, 'Schedules', {
      startFunction: this.intake.startFunction,
      inputBucket: this.storage.inputBucket,
      schedules: config.schedules,
      domainLists: config.domainLists,
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
      listStateMachine: this.watchlistWorkflow.stateMachine,
      prefix: config.breach.watchlistPrefix,
      suffixes: WATCHLIST_SUFFIXES,
      handlerFile: 'start-watchlist',
      kind: 'watchlist',
      maxEventAge: Duration.hours(6),
      logRetention,
    });
    // Each breach schedule names its watchlist object; the schedules' own names key the lists.
    this.watchlistSchedules = new ScheduledRuns(this, 'WatchlistSchedules', {
      startFunction: this.watchlistIntake.startFunction,
      inputBucket: this.storage.inputBucket,
      schedules: config.breach.schedules.map(({ watchlistKey: _key, ...schedule }) => ({
        ...schedule,
        domainList: schedule.name,
      })),
      domainLists: Object.fromEntries(
        config.breach.schedules.map((s) => [s.name, { objectKey: s.watchlistKey }]),
      ),
      runs: 'breach reports for watchlist',
    });
    this.breachReconciliation = new ScheduledReconciliation(this, 'BreachReconciliation', {
      handlerFile: 'reconcile-breach-reports',
      workflow: 'breach',
      resultsBucket: this.storage.resultsBucket,
      vendorSecrets: this.vendorSecrets,
      declared: { breachReportNamingKey: this.breachWorkflow.reportNamingKey },
      environment: {
        [ENV.breachApiUrl]: config.vendor.breachApiUrl,
        ...breachLimitsEnvironment(config.breach, ARCHIVE_LIMIT_NAMES),
        [ENV.breachReconcileMaxArchives]: String(config.breach.reconcileMaxArchivesPerRun),
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
        })
      : undefined;

    this.pause.resume(
      [this.intake, this.watchlistIntake].map((intake) => ({
        queue: intake.deadLetterQueue,
        fn: intake.startFunction,
      })),
      logRetention,
    );
    this.keyRotation = this.rotateOrgKey(config, logRetention);
    this.metricAlarms = new PipelineMetricAlarms(this, 'MetricAlarms', {
      ...config.alarms,
      // Quiet days only matter when schedules should have produced scans.
      schedulesEnabled: config.schedules.some((schedule) => schedule.enabled),
      ...(props.scanOutputs ? { scanOutputs: props.scanOutputs } : {}),
    });
    // Last: it shows every alarm and dead-letter queue created above.
    this.dashboard = new PipelineDashboard(this, 'Dashboard', {
      alarms: this.node.findAll().filter((c): c is Alarm => c instanceof Alarm),
      deadLetterQueues: this.node.findAll().filter((c): c is DeadLetterQueue => c instanceof DeadLetterQueue),
    });

    new CfnOutput(this, 'DashboardName', {
      description: 'The pipeline dashboard (CloudWatch console, Dashboards)',
      value: this.dashboard.dashboard.dashboardName,
    });
    new CfnOutput(this, 'PauseParameterName', {
      description:
        'Set to "paused" to stop every upload and schedule from starting runs; "running" resumes them',
      value: this.pause.parameter.parameterName,
    });
    new CfnOutput(this, 'RunTopicArn', {
      description: 'One message per finished domain list or watchlist run: counts and the summary location',
      value: this.runNotifications.topic.topicArn,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'Every alarm notifies this topic (subscribe with aws sns subscribe)',
      value: this.alarmNotifications.topic.topicArn,
    });
    new CfnOutput(this, 'InputBucketName', {
      description: `Upload domain lists here under ${config.intake.prefix}`,
      value: this.storage.inputBucket.bucketName,
    });
    new CfnOutput(this, 'ResultsBucketName', {
      description: 'Scan outputs (scans/), list summaries (lists/) and breach reports (breach/)',
      value: this.storage.resultsBucket.bucketName,
    });
    new CfnOutput(this, 'ScanStateMachineArn', {
      description: 'ScanDomain: start with {"domain": "example.com"} to scan one domain',
      value: this.scanWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'DomainListStateMachineArn', {
      description:
        'DomainListScan: start with {"source": {"type": "adhoc", "requestId": "...", "domains": [...]}}',
      value: this.domainListWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'BreachStateMachineArn', {
      description:
        'BreachReport: one person; start it through a watchlist upload (docs/runbooks/breach-reports.md)',
      value: this.breachWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'WatchlistStateMachineArn', {
      description: `WatchlistRun: started by uploads to ${config.breach.watchlistPrefix} (.csv, .json)`,
      value: this.watchlistWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'BreachReconcileFunctionName', {
      description: 'Archives every report the vendor lists that is not archived yet (aws lambda invoke)',
      value: this.breachReconciliation.function.functionName,
    });
    if (this.scanReconciliation !== undefined) {
      new CfnOutput(this, 'ScanReconcileFunctionName', {
        description:
          'Archives every finished scan the vendor lists that has no manifest yet (aws lambda invoke)',
        value: this.scanReconciliation.reconciliation.function.functionName,
      });
    }
    if (this.vendorSecrets.mode === 'single') {
      new CfnOutput(this, 'VendorApiKeySecretArn', {
        description: 'Put the vendor org API key here (aws secretsmanager put-secret-value)',
        value: this.vendorSecrets.secretFor('scan').secretArn,
      });
    } else {
      for (const api of ['scan', 'keys', 'breach'] as const) {
        new CfnOutput(this, `${api[0]?.toUpperCase()}${api.slice(1)}ApiKeySecretArn`, {
          description: `Put the vendor ${api} API key here (aws secretsmanager put-secret-value)`,
          value: this.vendorSecrets.secretFor(api).secretArn,
        });
      }
    }
  }

  /**
   * Native rotation of the org key (the key-management API's key: in single mode the one secret).
   * Every other secret says why it is not rotated here.
   */
  private rotateOrgKey(config: PipelineConfig, logRetention: RetentionDays): KeyRotation | undefined {
    const rotated = config.rotation.enabled ? this.vendorSecrets.secretFor('keys') : undefined;
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
    new CfnOutput(this, 'RotationFunctionName', {
      description:
        'Rotates the vendor org key (Secrets Manager invokes it; see docs/runbooks/key-rotation.md)',
      value: rotation.rotationFunction.functionName,
    });
    return rotation;
  }
}
