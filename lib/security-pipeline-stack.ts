import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { VENDOR_APIS } from '#lambdas/registry';
import type { PipelineConfig } from './config/schema.ts';
import { pipelinePropsFromConfig } from './construct/config-to-props.ts';
import { SecurityPipeline } from './security-pipeline.ts';

export interface SecurityPipelineStackProps extends StackProps {
  /** Validated configuration (lib/config/ `parsePipelineConfig` / `loadPipelineConfig`). */
  readonly config: PipelineConfig;
}

/**
 * The deployable app's stack: one SecurityPipeline, every resource created by it, and the outputs
 * an operator reads after `cdk deploy`.
 */
export class SecurityPipelineStack extends Stack {
  public readonly pipeline: SecurityPipeline;

  constructor(scope: Construct, id: string, props: SecurityPipelineStackProps) {
    super(scope, id, {
      description:
        'Security vendor pipeline: domain scans and breach reports orchestrated by Step Functions, results in S3',
      ...props,
    });
    const { config } = props;
    // 'Default' is left out of logical IDs (as CDK does for an L2's own resource), so the
    // resources keep the logical IDs they had when the stack created them itself, and an
    // existing deployment updates in place instead of replacing its buckets and secret.
    // The configuration file maps onto the construct's props; validated by the app already, it
    // gives the same configuration when the construct parses it again
    // (test/config/construct-props.test.ts).
    const pipeline = new SecurityPipeline(this, 'Default', {
      ...pipelinePropsFromConfig(config),
    });
    this.pipeline = pipeline;

    new CfnOutput(this, 'DashboardName', {
      description: 'The pipeline dashboard (CloudWatch console, Dashboards)',
      value: pipeline.dashboard.dashboard.dashboardName,
    });
    new CfnOutput(this, 'PauseParameterName', {
      description:
        'Set to "paused" to stop every upload and schedule from starting runs; "running" resumes them',
      value: pipeline.pause.parameter.parameterName,
    });
    new CfnOutput(this, 'RunTopicArn', {
      description: 'One message per finished domain list or watchlist run: counts and the summary location',
      value: pipeline.runNotifications.topic.topicArn,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'Every alarm notifies this topic (subscribe with aws sns subscribe)',
      value: pipeline.alarmNotifications.topic.topicArn,
    });
    new CfnOutput(this, 'InputBucketName', {
      description: `Upload domain lists here under ${config.intake.prefix}`,
      value: pipeline.storage.inputBucket.bucketName,
    });
    new CfnOutput(this, 'ResultsBucketName', {
      description: 'Scan outputs (scans/), list summaries (lists/) and breach reports (breach/)',
      value: pipeline.storage.resultsBucket.bucketName,
    });
    new CfnOutput(this, 'ScanStateMachineArn', {
      description: 'ScanDomain: start with {"domain": "example.com"} to scan one domain',
      value: pipeline.scanWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'DomainListStateMachineArn', {
      description:
        'DomainListScan: start with {"source": {"type": "adhoc", "requestId": "...", "domains": [...]}}',
      value: pipeline.domainListWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'BreachStateMachineArn', {
      description:
        'BreachReport: one person; start it through a watchlist upload (docs/runbooks/breach-reports.md)',
      value: pipeline.breachWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'WatchlistStateMachineArn', {
      description: `WatchlistRun: started by uploads to ${config.breach.watchlistPrefix} (.csv, .json)`,
      value: pipeline.watchlistWorkflow.stateMachine.stateMachineArn,
    });
    new CfnOutput(this, 'BreachReconcileFunctionName', {
      description: 'Archives every report the vendor lists that is not archived yet (aws lambda invoke)',
      value: pipeline.breachReconciliation.function.functionName,
    });
    if (pipeline.scanReconciliation !== undefined) {
      new CfnOutput(this, 'ScanReconcileFunctionName', {
        description:
          'Archives every finished scan the vendor lists that has no manifest yet (aws lambda invoke)',
        value: pipeline.scanReconciliation.reconciliation.function.functionName,
      });
    }
    if (pipeline.vendorStatistics !== undefined) {
      new CfnOutput(this, 'VendorStatsFunctionName', {
        description:
          "Records the vendor's own scan statistics and keeps the day's snapshot (aws lambda invoke)",
        value: pipeline.vendorStatistics.job.function.functionName,
      });
    }
    if (pipeline.vendorSecrets.mode === 'single') {
      new CfnOutput(this, 'VendorApiKeySecretArn', {
        description: 'Put the vendor org API key here (aws secretsmanager put-secret-value)',
        value: pipeline.vendorSecrets.secretFor('scan').secretArn,
      });
    } else {
      for (const api of VENDOR_APIS) {
        new CfnOutput(this, `${api[0]?.toUpperCase()}${api.slice(1)}ApiKeySecretArn`, {
          description: `Put the vendor ${api} API key here (aws secretsmanager put-secret-value)`,
          value: pipeline.vendorSecrets.secretFor(api).secretArn,
        });
      }
    }
    if (pipeline.keyRotation !== undefined) {
      new CfnOutput(this, 'RotationFunctionName', {
        description:
          'Rotates the vendor org key (Secrets Manager invokes it; see docs/runbooks/key-rotation.md)',
        value: pipeline.keyRotation.rotationFunction.functionName,
      });
    }
  }
}
