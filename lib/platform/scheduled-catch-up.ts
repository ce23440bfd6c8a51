import { Duration } from 'aws-cdk-lib';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Schedule } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { RegisteredHandler } from '#lambdas/platform/handler-declaration';
import { bindDeclared, type DeclaredResources } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { invokeOnSchedule } from './scheduled-invoke.ts';
import type { VendorSecrets } from './vendor-secrets.ts';

/** What a caller names its catch-up by: each becomes part of the template. */
export interface CatchUpNames {
  /** The function's handler, as lambdas/registry.ts resolves it, e.g. `registeredHandler('reconcile-scans')`. */
  readonly handler: RegisteredHandler;
  /** The function's construct id, e.g. `ReconcileFunction`: its logical id and name derive from it. */
  readonly functionId: string;
  /** What lands in the dead-letter queue, e.g. `scan reconciliation runs that failed or could not be delivered`. */
  readonly deadLetterPurpose: string;
  /** What a run does, for the schedule's description, e.g. `archive scans the workflow never archived`. */
  readonly scheduleDescription: string;
}

export interface ScheduledCatchUpProps extends CatchUpNames {
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
  /** A job that reads one small answer needs less than a catch-up. @default Duration.minutes(15) */
  readonly timeout?: Duration;
  /** @default 1024 */
  readonly memorySize?: number;
  /** The role the pipeline's schedules share (`schedulerRole`). @default a role of its own */
  readonly schedulerRole?: Role;
  /**
   * The queue of another job on the same schedule, when one queue serves both (each failure names
   * its function). @default a queue of its own
   */
  readonly deadLetterQueue?: DeadLetterQueue;
}

/**
 * A scheduled catch-up: a function that brings into the archive what a workflow missed (e.g. scan
 * and breach reconciliation: what the vendor lists and the archive lacks), or another job that
 * reads the vendor on a schedule (the vendor statistics), on an EventBridge Scheduler schedule. A run that fails is not repeated by Lambda or Scheduler: it lands in the
 * dead-letter queue, and the next scheduled run (idempotent) catches up. The function gets exactly
 * what its handler declares.
 */
export class ScheduledCatchUp extends Construct {
  public readonly function: PipelineFunction;
  public readonly schedule: Schedule;
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: ScheduledCatchUpProps) {
    super(scope, id);
    this.deadLetterQueue =
      props.deadLetterQueue ??
      new DeadLetterQueue(this, 'DeadLetterQueue', { purpose: props.deadLetterPurpose });
    this.function = new PipelineFunction(this, props.functionId, {
      handler: props.handler,
      // One item after another, each streamed and verified: the whole backlog in one run (scan
      // reconciliation also stops starting new archives near the end, and the next run goes on).
      timeout: props.timeout ?? Duration.minutes(15),
      memorySize: props.memorySize ?? 1024,
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
      description: props.scheduleDescription,
      ...(props.schedulerRole === undefined ? {} : { role: props.schedulerRole }),
    });
  }
}
