/**
 * `SecurityPipeline` as jsii compiles it for Python, Java, .NET and Go. The props and the metric
 * dimension enums are the TypeScript package's own files (lib/construct/), staged beside this one
 * by scripts/jsii-build.ts; the construct here holds the TypeScript package's implementation
 * (dist/index.cjs, bundled into this package at `implementation/`) as its child and hands its
 * members, grants and metrics through. Nothing of the implementation is in this package's API.
 */

import type { Metric, MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type BreachArchiveOrigin, type BreachReportOutcome, ScanFailureReason } from './metric-dimensions';
import type { SecurityPipelineProps } from './props';

export * from './breach-props';
export * from './metric-dimensions';
export * from './props';
export * from './resource-props';
export * from './scan-props';
export * from './schedule-props';

/** What this facade calls on the bundled implementation. */
interface Implementation {
  readonly inputBucket: IBucket;
  readonly resultsBucket: IBucket;
  readonly alarmTopic: ITopic;
  readonly vendorKeySecret: ISecret;
  readonly scanStateMachine: IStateMachine;
  readonly domainListStateMachine: IStateMachine;
  readonly breachStateMachine: IStateMachine;
  readonly watchlistStateMachine: IStateMachine;
  grantStartScan(grantee: IGrantable): Grant;
  grantStartDomainListScan(grantee: IGrantable): Grant;
  grantStartBreachReport(grantee: IGrantable): Grant;
  grantReadResults(grantee: IGrantable): Grant[];
  grantReadBreachReports(grantee: IGrantable): Grant;
  metricScansStarted(options?: MetricOptions): Metric;
  metricScansSucceeded(options?: MetricOptions): Metric;
  metricScansFailed(reason?: ScanFailureReason, options?: MetricOptions): Metric;
  metricScansTimedOut(options?: MetricOptions): Metric;
  metricScanDuration(options?: MetricOptions): Metric;
  metricBreachReports(outcome: BreachReportOutcome, options?: MetricOptions): Metric;
  metricBreachReportsArchived(origin: BreachArchiveOrigin, options?: MetricOptions): Metric;
  metricKeyRotations(options?: MetricOptions): Metric;
  metricApiKeyAge(options?: MetricOptions): Metric;
}

// The implementation is CommonJS, loaded when the first construct is made.
declare function require(id: string): {
  SecurityPipeline: new (scope: Construct, id: string, props: SecurityPipelineProps) => Implementation;
};

/**
 * The whole security pipeline in one construct: the scan, domain-list, breach, watchlist and
 * rotation workflows, their intake, schedules, reconciliation, alarms and dashboard. Bring your own
 * buckets, alarm topic or key secret through its props; everything else it creates.
 */
export class SecurityPipeline extends Construct {
  /** Where domain lists and watchlists are uploaded. */
  public readonly inputBucket: IBucket;
  /** Scan outputs (scans/), list summaries (lists/) and breach reports (breach/). */
  public readonly resultsBucket: IBucket;
  /** Every alarm of the pipeline notifies it. */
  public readonly alarmTopic: ITopic;
  /** The org key's secret. */
  public readonly vendorKeySecret: ISecret;
  /** ScanDomain: start with `{"domain": "example.com"}` to scan one domain. */
  public readonly scanStateMachine: IStateMachine;
  /** DomainListScan: one run per uploaded or scheduled domain list. */
  public readonly domainListStateMachine: IStateMachine;
  /** BreachReport: one person's breach report. */
  public readonly breachStateMachine: IStateMachine;
  /** WatchlistRun: one run per uploaded watchlist. */
  public readonly watchlistStateMachine: IStateMachine;
  private readonly implementation: Implementation;

  constructor(scope: Construct, id: string, props: SecurityPipelineProps = {}) {
    super(scope, id);
    const { SecurityPipeline: Pipeline } = require('../implementation/index.cjs');
    // 'Default' keeps the resources' logical IDs those of the TypeScript construct at this path.
    this.implementation = new Pipeline(this, 'Default', props);
    this.inputBucket = this.implementation.inputBucket;
    this.resultsBucket = this.implementation.resultsBucket;
    this.alarmTopic = this.implementation.alarmTopic;
    this.vendorKeySecret = this.implementation.vendorKeySecret;
    this.scanStateMachine = this.implementation.scanStateMachine;
    this.domainListStateMachine = this.implementation.domainListStateMachine;
    this.breachStateMachine = this.implementation.breachStateMachine;
    this.watchlistStateMachine = this.implementation.watchlistStateMachine;
  }

  /** Lets `grantee` start ScanDomain (one domain's scan) executions. */
  public grantStartScan(grantee: IGrantable): Grant {
    return this.implementation.grantStartScan(grantee);
  }

  /** Lets `grantee` start DomainListScan (an ad hoc list's run) executions. */
  public grantStartDomainListScan(grantee: IGrantable): Grant {
    return this.implementation.grantStartDomainListScan(grantee);
  }

  /** Lets `grantee` start BreachReport (one person's breach report) executions. */
  public grantStartBreachReport(grantee: IGrantable): Grant {
    return this.implementation.grantStartBreachReport(grantee);
  }

  /** Lets `grantee` read scan outputs (`scans/`) and list summaries (`lists/`) in the results bucket. */
  public grantReadResults(grantee: IGrantable): Grant[] {
    return this.implementation.grantReadResults(grantee);
  }

  /** Lets `grantee` read breach reports and their records (`breach/`): personal data, grant with care. */
  public grantReadBreachReports(grantee: IGrantable): Grant {
    return this.implementation.grantReadBreachReports(grantee);
  }

  /** ScansStarted: scans the vendor accepted (Sum over 5 minutes unless `options` say otherwise). */
  public metricScansStarted(options?: MetricOptions): Metric {
    return this.implementation.metricScansStarted(options);
  }

  /** ScansSucceeded: scans whose outputs and manifest were stored (Sum over 5 minutes). */
  public metricScansSucceeded(options?: MetricOptions): Metric {
    return this.implementation.metricScansSucceeded(options);
  }

  /** ScansFailed of one `reason` (Sum over 5 minutes). */
  public metricScansFailed(reason?: ScanFailureReason, options?: MetricOptions): Metric {
    return this.implementation.metricScansFailed(reason ?? ScanFailureReason.SCAN_FAILED, options);
  }

  /** ScansTimedOut: scans still running at the poll deadline (Sum over 5 minutes). */
  public metricScansTimedOut(options?: MetricOptions): Metric {
    return this.implementation.metricScansTimedOut(options);
  }

  /** ScanDurationSeconds of succeeded scans (p95 over an hour). */
  public metricScanDuration(options?: MetricOptions): Metric {
    return this.implementation.metricScanDuration(options);
  }

  /** BreachReports: recons the vendor answered with `outcome` (Sum over 5 minutes). */
  public metricBreachReports(outcome: BreachReportOutcome, options?: MetricOptions): Metric {
    return this.implementation.metricBreachReports(outcome, options);
  }

  /** BreachReportsArchived: report ZIPs verified and archived by `origin` (Sum over 5 minutes). */
  public metricBreachReportsArchived(origin: BreachArchiveOrigin, options?: MetricOptions): Metric {
    return this.implementation.metricBreachReportsArchived(origin, options);
  }

  /** KeyRotations: org key rotations finished (Sum over a day). */
  public metricKeyRotations(options?: MetricOptions): Metric {
    return this.implementation.metricKeyRotations(options);
  }

  /** ApiKeyAgeDays: the org key's age, measured daily (Maximum over a day). */
  public metricApiKeyAge(options?: MetricOptions): Metric {
    return this.implementation.metricApiKeyAge(options);
  }
}
