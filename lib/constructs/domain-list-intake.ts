import { Duration } from 'aws-cdk-lib';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { bindStateMachineStarter } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';

export interface DomainListIntakeProps {
  /** The bucket domain lists are uploaded to; must have EventBridge notifications enabled. */
  readonly inputBucket: IBucket;
  /** The list state machine an upload starts. */
  readonly listStateMachine: IStateMachine;
  /**
   * Key prefix of domain lists (non-empty, ends with '/').
   * @default 'incoming/'
   */
  readonly prefix?: string;
  /**
   * Lower-case key suffixes that count as domain lists.
   * @default ['.txt', '.csv']
   */
  readonly suffixes?: readonly string[];
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
  /**
   * Retention of the intake function's logs.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
}

/**
 * S3 "Object Created" events for domain lists (input bucket, prefix + suffix) start a run of the
 * list state machine through the `start-domain-list` function, which names the execution after the
 * object's identity: S3 and EventBridge deliver at least once, and a duplicate becomes
 * ExecutionAlreadyExists instead of a second run.
 */
export class DomainListIntake extends Construct {
  public readonly rule: Rule;
  public readonly startFunction: PipelineFunction;
  /** Events that could not be delivered to, or failed in, the start function. */
  public readonly deadLetterQueue: DeadLetterQueue;

  constructor(scope: Construct, id: string, props: DomainListIntakeProps) {
    super(scope, id);
    const prefix = props.prefix ?? 'incoming/';
    if (prefix === '' || prefix.startsWith('/') || !prefix.endsWith('/') || /[*\\]/.test(prefix)) {
      throw new Error(
        `DomainListIntake ${id}: prefix must be non-empty, end with '/', and contain no leading '/', '*' or '\\' (got '${prefix}')`,
      );
    }
    const suffixes = props.suffixes ?? ['.txt', '.csv'];
    if (suffixes.length === 0 || suffixes.some((s) => !/^\.[a-z0-9._-]+$/.test(s))) {
      throw new Error(
        `DomainListIntake ${id}: suffixes must be a non-empty list of lower-case extensions like '.txt' (got ${JSON.stringify(suffixes)})`,
      );
    }
    const retryAttempts = props.retryAttempts ?? 10;
    const maxEventAge = props.maxEventAge ?? Duration.hours(6);

    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: 'domain-list upload events that could not start a list run',
    });

    this.startFunction = new PipelineFunction(this, 'StartDomainListFunction', {
      handlerFile: 'start-domain-list',
      timeout: Duration.seconds(30),
      memorySize: 256,
      environment: {
        INTAKE_PREFIX: prefix,
        INTAKE_SUFFIXES: suffixes.join(','),
        // Lets the handler ignore events for other buckets; a name, not a grant: it never reads lists.
        INPUT_BUCKET: props.inputBucket.bucketName,
      },
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindStateMachineStarter(this.startFunction, props.listStateMachine);
    // EventBridge invokes asynchronously: its DLQ sees only failed deliveries. A handler that
    // throws (e.g. StartExecution throttled) is retried by Lambda and then sent here as well.
    this.startFunction.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge,
      onFailure: new SqsDestination(this.deadLetterQueue),
    });

    // EventBridge wildcards are case-sensitive; the handler compares suffixes case-insensitively,
    // so match the two common spellings (list.txt, LIST.TXT) here.
    const keyPatterns = suffixes.flatMap((suffix) =>
      [...new Set([suffix, suffix.toUpperCase()])].flatMap((s) => Match.wildcard(`${prefix}*${s}`)),
    );
    this.rule = new Rule(this, 'ListUploaded', {
      description: `Starts a domain-list run for uploads to ${prefix} ending in ${suffixes.join(', ')}`,
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [props.inputBucket.bucketName] },
          object: { key: keyPatterns },
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
