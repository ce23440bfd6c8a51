import { Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Schedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { bindDeclared, type DeclaredResources } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { invokeOnSchedule } from './scheduled-invoke.ts';
import type { VendorSecrets } from './vendor-secrets.ts';

export interface ScheduledReconciliationProps {
  /** `reconcile-breach-reports` or `reconcile-scans`: what it reconciles. */
  readonly handlerFile: 'reconcile-breach-reports' | 'reconcile-scans';
  /** Which workflow's archive it reconciles, for the queue's and the schedule's descriptions. */
  readonly workflow: 'breach' | 'scan';
  readonly resultsBucket: IBucket;
  readonly vendorSecrets: VendorSecrets;
  /** What else its handler declares it reads (lambdas/registry.ts), e.g. the report naming key. */
  readonly declared?: Omit<DeclaredResources, 'resultsBucket' | 'vendorSecrets'>;
  /** The vendor API's URL and the workflow's settings, as the workflow's own functions get them. */
  readonly environment: Readonly<Record<string, string>>;
  /** An EventBridge Scheduler expression, validated by the configuration. */
  readonly scheduleExpression: string;
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays;
}

/**
 * A scheduled reconciliation: a function that archives what the vendor lists and the archive lacks
 * (breach reports, scans), on an EventBridge Scheduler schedule. A run that fails is not repeated
 * by Lambda or Scheduler: it lands in the dead-letter queue, and the next scheduled run
 * (idempotent) catches up. The function gets exactly what its handler declares.
 */
export class ScheduledReconciliation extends Construct {
  public readonly function: PipelineFunction;
  public readonly schedule: Schedule;
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: ScheduledReconciliationProps) {
    super(scope, id);
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: `${props.workflow} reconciliation runs that failed or could not be delivered`,
    });
    this.function = new PipelineFunction(this, 'ReconcileFunction', {
      handlerFile: props.handlerFile,
      // One item after another, each streamed and verified: the whole backlog in one run (scan
      // reconciliation also stops starting new archives near the end, and the next run goes on).
      timeout: Duration.minutes(15),
      memorySize: 1024,
      environment: { ...props.environment },
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(this.function, {
      ...props.declared,
      resultsBucket: props.resultsBucket,
      vendorSecrets: props.vendorSecrets,
    });
    this.schedule = invokeOnSchedule(this, 'Schedule', {
      fn: this.function,
      expression: props.scheduleExpression,
      flexibleWindow: Duration.minutes(30),
      deadLetterQueue: this.deadLetterQueue,
      description: `archive ${props.workflow === 'breach' ? 'breach reports' : 'scans'} the workflow never archived`,
    });
  }
}
