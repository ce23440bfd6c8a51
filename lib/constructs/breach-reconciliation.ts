import { Duration, Stack } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Schedule, ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { ENV } from '#core/runtime/variables';
import { bindDeclared } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { acknowledgeWildcards, arnFinding } from './nag.ts';
import { PipelineFunction } from './pipeline-function.ts';
import type { VendorSecrets } from './vendor-secrets.ts';

export interface BreachReconciliationProps {
  readonly resultsBucket: IBucket;
  readonly vendorSecrets: VendorSecrets;
  /** Base URL of the vendor's breach-report API (`BREACH_API_URL`). */
  readonly breachApiUrl: string;
  /** An EventBridge Scheduler expression, validated by the configuration. */
  readonly scheduleExpression: string;
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays;
}

/**
 * Scheduled breach reconciliation: a function that archives every report the vendor lists
 * (`GET /view_breaches`) without a verified archive in S3, on an EventBridge Scheduler schedule.
 * A run that fails is not repeated by Lambda or Scheduler: it lands in the dead-letter queue, and
 * the next scheduled run (idempotent) catches up.
 */
export class BreachReconciliation extends Construct {
  public readonly function: PipelineFunction;
  public readonly schedule: Schedule;
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: BreachReconciliationProps) {
    super(scope, id);
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: 'breach reconciliation runs that failed or could not be delivered',
    });
    this.function = new PipelineFunction(this, 'ReconcileFunction', {
      handlerFile: 'reconcile-breach-reports',
      // One report after another, each streamed and verified: the whole backlog in one run.
      timeout: Duration.minutes(15),
      memorySize: 1024,
      environment: { [ENV.breachApiUrl]: props.breachApiUrl },
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(this.function, { resultsBucket: props.resultsBucket, vendorSecrets: props.vendorSecrets });
    this.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.hours(1),
      onFailure: new SqsDestination(this.deadLetterQueue),
    });

    const role = new Role(this, 'SchedulerRole', {
      description: 'Assumed by EventBridge Scheduler to start breach reconciliation',
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    });
    this.schedule = new Schedule(this, 'Schedule', {
      description: 'Security pipeline: archive breach reports the workflow never archived',
      schedule: ScheduleExpression.expression(props.scheduleExpression),
      timeWindow: TimeWindow.flexible(Duration.minutes(30)),
      target: new LambdaInvoke(this.function, {
        role,
        deadLetterQueue: this.deadLetterQueue,
        // Delivery only: a failed delivery goes to the queue, never a second run on its own.
        retryAttempts: 0,
        maxEventAge: Duration.hours(1),
      }),
    });
    acknowledgeWildcards(
      role,
      [arnFinding(this.function, ':*')],
      "The Scheduler's LambdaInvoke target grants lambda:InvokeFunction on <function ARN>:* (any version or alias) of the reconciliation function only.",
    );
  }
}
