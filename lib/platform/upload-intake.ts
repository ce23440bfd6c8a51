import { Duration } from 'aws-cdk-lib';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStringParameter } from 'aws-cdk-lib/aws-ssm';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { RegisteredHandler } from '#lambdas/platform/handler-declaration';
import { ENV } from '#lambdas/platform/runtime/variables';
import { bindDeclared } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { sendAsyncFailuresTo } from './scheduled-invoke.ts';

export interface UploadIntakeProps {
  /** The bucket the inputs are uploaded to; must have EventBridge notifications enabled. */
  readonly inputBucket: IBucket;
  /** The state machine an upload starts, by the workflow that owns it (its handler declares it). */
  readonly stateMachines: { readonly [workflow: string]: IStateMachine | undefined };
  /** While it says `paused`, nothing starts: events wait in the dead-letter queue for resume. */
  readonly pause: { readonly parameter: IStringParameter };
  /**
   * Key prefix of the workflow's inputs (non-empty, ends with '/').
   * @default 'incoming/'
   */
  readonly prefix?: string;
  /**
   * Lower-case key suffixes that count as the workflow's input (a domain list's or a watchlist's:
   * each workflow owns its suffixes, so this construct names none).
   */
  readonly suffixes: readonly string[];
  /**
   * How often EventBridge retries a failed delivery to the function.
   * @default 10
   */
  readonly retryAttempts?: number;
  /**
   * How long EventBridge and Lambda keep trying before the event goes to the dead-letter queue.
   * @default Duration.hours(6)
   */
  readonly maxEventAge?: Duration;
  /** The workflow's intake handler, which starts the runs (lambdas/platform/runs/intake.ts). */
  readonly handler: RegisteredHandler;
  /**
   * The intake function's construct ID, named for the handler it runs so that each intake's
   * logical ID says which code it is. Changing one replaces the function (a new logical ID), which
   * an intake survives: it holds no state, and its event source and grants move with it.
   */
  readonly functionId: string;
  /** What the uploads are, for descriptions. */
  readonly kind: string;
  /**
   * Retention of the intake function's logs.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
}

/**
 * S3 "Object Created" events for a workflow's inputs (input bucket, prefix + suffix) start a run
 * of its state machine through its intake function, which names the execution after the object's
 * identity: S3 and EventBridge deliver at least once, and a duplicate becomes
 * ExecutionAlreadyExists instead of a second run.
 */

export class UploadIntake extends Construct {
  public readonly rule: Rule;
  public readonly startFunction: PipelineFunction;
  /** Events that could not be delivered to, or failed in, the start function. */
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: UploadIntakeProps) {
    super(scope, id);
    // The configuration schema (lib/config/) has validated prefix and suffixes; these defaults
    // serve direct use of the construct.
    const prefix = props.prefix ?? 'incoming/';
    const { suffixes } = props;
    const retryAttempts = props.retryAttempts ?? 10;
    const maxEventAge = props.maxEventAge ?? Duration.hours(6);

    const { kind } = props;
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: `${kind} upload events that could not start a run`,
    });

    this.startFunction = new PipelineFunction(this, props.functionId, {
      handler: props.handler,
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: {
        [ENV.intakePrefix]: prefix,
        [ENV.intakeSuffixes]: suffixes.join(','),
      },
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(this.startFunction, props);
    // EventBridge invokes asynchronously: its DLQ sees only failed deliveries. A handler that
    // throws (e.g. StartExecution throttled) is retried by Lambda and then sent here as well.
    // Two retries are harmless: the execution name is deterministic, so a repeat starts nothing new.
    sendAsyncFailuresTo(this.startFunction, this.deadLetterQueue, { retryAttempts: 2, maxEventAge });

    // The rule matches the prefix only; the start function checks the suffix, in any letter case,
    // and ignores (logs) every other key. EventBridge refuses a rule whose wildcard matching is too
    // complex, and one wildcard per letter-case spelling of each suffix (16 for `.txt` and `.csv`)
    // was; a pattern cannot hold both a prefix and a case-insensitive suffix for one field, and a
    // prefix costs its matcher nothing.
    // https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
    this.rule = new Rule(this, 'ListUploaded', {
      description: `Starts a ${kind} run for uploads to ${prefix} ending in ${suffixes.join(', ')}`,
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [props.inputBucket.bucketName] },
          object: { key: Match.prefix(prefix) },
        },
      },
    });
    this.rule.addTarget(
      new LambdaFunction(this.startFunction, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts,
        maxEventAge,
      }),
    );
  }
}
