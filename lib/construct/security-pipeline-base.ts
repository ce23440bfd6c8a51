/**
 * What a team wires `SecurityPipeline` into its app with, as CDK's own constructs offer it (a
 * bucket's `grantRead`, a function's `metricErrors`): grants on the state machines and the results
 * bucket, and the pipeline's own metrics. A base class, so the construct's file stays about what
 * it builds.
 */

import type { Metric, MetricOptions } from 'aws-cdk-lib/aws-cloudwatch';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BREACH_PREFIX } from '#lambdas/breach/contracts';
import {
  type BreachArchiveOrigin,
  type BreachReportOutcome,
  ScanFailureReason,
} from './metric-dimensions.ts';
import { PIPELINE_METRICS } from './pipeline-metrics.ts';

/** Where the results bucket keeps scan outputs and list summaries. */
const RESULT_PREFIXES = ['scans/', 'lists/'] as const;

/** The grants and metrics of `SecurityPipeline`, over the members it creates. */
export abstract class SecurityPipelineBase extends Construct {
  /** Scan outputs (scans/), list summaries (lists/) and breach reports (breach/). */
  public abstract readonly resultsBucket: IBucket;
  /** ScanDomain: start with `{"domain": "example.com"}` to scan one domain. */
  public abstract readonly scanStateMachine: IStateMachine;
  /** DomainListScan: one run per uploaded or scheduled domain list. */
  public abstract readonly domainListStateMachine: IStateMachine;
  /** BreachReport: one person's breach report. */
  public abstract readonly breachStateMachine: IStateMachine;

  /** Lets `grantee` start ScanDomain (one domain's scan) executions. */
  public grantStartScan(grantee: IGrantable): Grant {
    return this.scanStateMachine.grantStartExecution(grantee);
  }

  /** Lets `grantee` start DomainListScan (an ad hoc list's run) executions. */
  public grantStartDomainListScan(grantee: IGrantable): Grant {
    return this.domainListStateMachine.grantStartExecution(grantee);
  }

  /** Lets `grantee` start BreachReport (one person's breach report) executions. */
  public grantStartBreachReport(grantee: IGrantable): Grant {
    return this.breachStateMachine.grantStartExecution(grantee);
  }

  /** Lets `grantee` read scan outputs (`scans/`) and list summaries (`lists/`) in the results bucket. */
  public grantReadResults(grantee: IGrantable): Grant[] {
    return RESULT_PREFIXES.map((prefix) => this.resultsBucket.grantRead(grantee, `${prefix}*`));
  }

  /** Lets `grantee` read breach reports and their records (`breach/`): personal data, grant with care. */
  public grantReadBreachReports(grantee: IGrantable): Grant {
    return this.resultsBucket.grantRead(grantee, `${BREACH_PREFIX}*`);
  }

  /** ScansStarted: scans the vendor accepted (Sum over 5 minutes unless `options` say otherwise). */
  public metricScansStarted(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.scansStarted(this, options);
  }

  /** ScansSucceeded: scans whose outputs and manifest were stored (Sum over 5 minutes). */
  public metricScansSucceeded(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.scansSucceeded(this, options);
  }

  /** ScansFailed of one `reason` (Sum over 5 minutes). */
  public metricScansFailed(
    reason: ScanFailureReason = ScanFailureReason.SCAN_FAILED,
    options?: MetricOptions,
  ): Metric {
    return PIPELINE_METRICS.scansFailed(this, reason, options);
  }

  /** ScansTimedOut: scans still running at the poll deadline (Sum over 5 minutes). */
  public metricScansTimedOut(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.scansTimedOut(this, options);
  }

  /** ScanDurationSeconds of succeeded scans (p95 over an hour). */
  public metricScanDuration(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.scanDuration(this, options);
  }

  /** BreachReports: recons the vendor answered with `outcome` (Sum over 5 minutes). */
  public metricBreachReports(outcome: BreachReportOutcome, options?: MetricOptions): Metric {
    return PIPELINE_METRICS.breachReports(this, outcome, options);
  }

  /** BreachReportsArchived: report ZIPs verified and archived by `origin` (Sum over 5 minutes). */
  public metricBreachReportsArchived(origin: BreachArchiveOrigin, options?: MetricOptions): Metric {
    return PIPELINE_METRICS.breachReportsArchived(this, origin, options);
  }

  /** KeyRotations: org key rotations finished (Sum over a day). */
  public metricKeyRotations(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.keyRotations(this, options);
  }

  /** ApiKeyAgeDays: the org key's age, measured daily (Maximum over a day). */
  public metricApiKeyAge(options?: MetricOptions): Metric {
    return PIPELINE_METRICS.apiKeyAge(this, options);
  }
}
