import { Duration } from 'aws-cdk-lib';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IStringParameter } from 'aws-cdk-lib/aws-ssm';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { ENV } from '#lambdas/platform/runtime/variables';
import { bindDeclared } from './bindings.ts';
import { DeadLetterQueue } from './dead-letter-queue.ts';
import { PipelineFunction } from './pipeline-function.ts';
import { sendAsyncFailuresTo } from './scheduled-invoke.ts';

export interface UploadIntakeProps {
  /** The bucket domain lists are uploaded to; must have EventBridge notifications enabled. */
  readonly inputBucket: IBucket;
  /** The list state machine an upload starts. */
  readonly listStateMachine: IStateMachine;
  /** While it says `paused`, nothing starts: events wait in the dead-letter queue for resume. */
  readonly pause: { readonly parameter: IStringParameter };
  /**
   * Key prefix of domain lists (non-empty, ends with '/').
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
  /**
   * The handler that starts the runs (the same intake code serves watchlists).
   * @default 'start-domain-list'
   */
  readonly handlerFile?: 'start-domain-list' | 'start-watchlist';
  /**
   * What the uploads are, for descriptions.
   * @default 'domain-list'
   */
  readonly kind?: string;
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
/**
 * Construct IDs of the intake function by handler. Changing one replaces the function (a new
 * logical ID), which an intake survives: it holds no state, and its event source and grants move
 * with it.
 */
const INTAKE_FUNCTION_IDS = {
  'start-domain-list': 'StartDomainListFunction',
  'start-watchlist': 'StartWatchlistFunction',
} as const;

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

    const kind = props.kind ?? 'domain-list';
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: `${kind} upload events that could not start a run`,
    });

    const handlerFile = props.handlerFile ?? 'start-domain-list';
    // Named for the handler it runs, so each intake's logical ID says which code it is.
    this.startFunction = new PipelineFunction(this, INTAKE_FUNCTION_IDS[handlerFile], {
      handlerFile,
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

    // EventBridge wildcards are case-sensitive and a key cannot be matched by both a prefix and an
    // `equals-ignore-case` suffix, so every upper/lower spelling of each suffix gets its own
    // wildcard: `incoming/x.Txt` must start a run just as the handler would accept it.
    const keyPatterns = suffixes.flatMap((suffix) =>
      caseVariants(suffix).flatMap((s) => Match.wildcard(`${prefix}*${s}`)),
    );
    if (keyPatterns.length > MAX_KEY_PATTERNS) {
      throw new Error(
        `UploadIntake ${id}: suffixes ${JSON.stringify(suffixes)} need ${keyPatterns.length} case-insensitive key patterns; at most ${MAX_KEY_PATTERNS} fit in one rule (use fewer or shorter suffixes)`,
      );
    }
    this.rule = new Rule(this, 'ListUploaded', {
      description: `Starts a ${kind} run for uploads to ${prefix} ending in ${suffixes.join(', ')}`,
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

/** Case spellings one rule may list; keeps the event pattern far below EventBridge's size limits. */
const MAX_KEY_PATTERNS = 64;

/** Every upper/lower-case spelling of `text`, e.g. `.tx` -> `.tx`, `.tX`, `.Tx`, `.TX`. */
export function caseVariants(text: string): string[] {
  let variants = [''];
  for (const char of text) {
    const spellings = [...new Set([char.toLowerCase(), char.toUpperCase()])];
    variants = variants.flatMap((head) => spellings.map((c) => head + c));
  }
  return variants;
}
