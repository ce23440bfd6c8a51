import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Schedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { ENV } from '#core/runtime/variables';
import { bindDeclared } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { invokeOnSchedule } from './scheduled-invoke.ts';
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
    this.schedule = invokeOnSchedule(this, 'Schedule', {
      fn: this.function,
      expression: props.scheduleExpression,
      flexibleWindow: Duration.minutes(30),
      deadLetterQueue: this.deadLetterQueue,
      description: 'archive breach reports the workflow never archived',
    });
  }
}
