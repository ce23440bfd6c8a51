import { Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IAlarm,
  type IMetric,
  type Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnRotationSchedule, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct, type IConstruct } from 'constructs';
import { ENV } from '#lambdas/platform/runtime/variables';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import type { MetricName } from '#lambdas/registry';
import { ROTATION_METRIC, registeredHandler } from '#lambdas/registry';
import { ROTATION_VARIABLES } from '#lambdas/rotation/variables';
import {
  type MirrorSecret,
  ROTATION_FUNCTION_TIMEOUT_SECONDS,
  rotationScheduleProblem,
  rotationWindowProblem,
} from '../../config/rotation-schema.ts';
import { bindDeclared } from '../../platform/bindings.ts';
import { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { acknowledge } from '../../platform/nag.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { pipelineMetric } from '../../platform/pipeline-metric.ts';
import { invokeOnSchedule } from '../../platform/scheduled-invoke.ts';
import { alarmOn, silenceAlarm } from '../../platform/standard-alarms.ts';

export interface KeyRotationProps {
  /** The secret holding the org key (`{"apiKey", "orgUuid"}`) that Secrets Manager rotates. */
  readonly secret: ISecret;
  /** Base URL of the vendor's key-management API (`KEYS_API_URL`). */
  readonly keysApiUrl: string;
  /** The organisation, when the secret does not carry `orgUuid`. */
  readonly orgUuid?: string;
  /** Secrets Manager schedule: `rate(N days)`, `rate(N hours)` or `cron(...)`. */
  readonly scheduleExpression: string;
  /** How long the rotation window stays open after the scheduled time. */
  readonly window: Duration;
  /** Dot path of the new key in the rotate answer. @default search the common names */
  readonly newKeyFieldPath?: string;
  /** How long a new key may take to work everywhere (rotation.keyPropagationSeconds). @default the function's own default */
  readonly keyPropagation?: Duration;
  /** Secrets that get the new value after every rotation, with their customer managed keys. @default [] */
  readonly mirrors?: readonly MirrorSecret[];
  /** The key-age alarm fires when the key is older than this. */
  readonly maxKeyAge: Duration;
  /** @default RetentionDays.THREE_MONTHS */
  readonly logRetention?: RetentionDays;
}

/** Two missed daily checks, not one late one (the schedule's flexible window is an hour). */
const AGE_CHECK_SILENCE = Duration.days(2);

/**
 * How long one rotation step may take: the rotate call (read to its end however slowly it comes),
 * the key's propagation window, the puts' retries, the mirrors (lib/config/rotation-schema.ts).
 */
const STEP_TIMEOUT = Duration.seconds(ROTATION_FUNCTION_TIMEOUT_SECONDS);

/**
 * Scheduled native rotation of the vendor org key, with its guards:
 * - the rotation function (lambdas/rotation/rotate-api-key.ts) on a native rotation schedule, never rotating
 *   on deploy (`rotateImmediatelyOnUpdate: false`), invocable by Secrets Manager for this secret only;
 * - no blind retries: the function's asynchronous invocations are never retried by Lambda, and a
 *   failed one lands in a dead-letter queue; Secrets Manager itself resumes the same token later;
 * - a daily key-age check (lambdas/rotation/check-api-key-age.ts) whose metric the key-age alarm watches, and
 *   a silence alarm for when the check stops reporting;
 * - alarms for every way a rotation goes wrong (docs/runbooks/key-rotation.md).
 */
export class KeyRotation extends Construct {
  public readonly rotationFunction: PipelineFunction;
  public readonly ageCheckFunction: PipelineFunction;
  public readonly rotationSchedule: CfnRotationSchedule;
  public readonly deadLetterQueue: DeadLetterQueue;
  /** Every alarm of the rotation, by what it watches. */
  public readonly alarms: Readonly<Record<RotationAlarmName, IAlarm>>;

  constructor(scope: Construct, id: string, props: KeyRotationProps) {
    super(scope, id);
    const windowHours = props.window.toHours({ integral: false });
    // The configuration checks these already (naming its settings); this guards any other caller.
    const scheduleProblem = rotationScheduleProblem(props.scheduleExpression);
    if (scheduleProblem) throw new Error(`KeyRotation ${id}: scheduleExpression ${scheduleProblem}`);
    const windowProblem = Number.isInteger(windowHours)
      ? rotationWindowProblem(props.scheduleExpression, windowHours)
      : `must be whole hours (got ${windowHours})`;
    if (windowProblem) throw new Error(`KeyRotation ${id}: window ${windowProblem}`);
    const mirrors = props.mirrors ?? [];
    this.deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: 'key-age check invocations that failed or could not be delivered',
      runbook: 'docs/runbooks/key-rotation.md#rotationdeadletters',
    });
    this.rotationFunction = new PipelineFunction(this, 'RotateFunction', {
      handler: registeredHandler('rotate-api-key'),
      timeout: STEP_TIMEOUT,
      // Every failed step matters: Secrets Manager only resumes it on its next attempt.
      alarms: { errorThreshold: 1, runbook: 'docs/runbooks/key-rotation.md#rotationfailed' },
      memorySize: 256,
      environment: {
        [vendorApiVariables('keys').url]: props.keysApiUrl,
        // A claim outlives any invocation that could still be calling the vendor.
        [ROTATION_VARIABLES.claimLeaseSeconds]: String(STEP_TIMEOUT.toSeconds() + 60),
        ...(props.orgUuid === undefined ? {} : { [ENV.orgUuid]: props.orgUuid }),
        ...(props.newKeyFieldPath === undefined
          ? {}
          : { [ROTATION_VARIABLES.newKeyFieldPath]: props.newKeyFieldPath }),
        ...(props.keyPropagation === undefined
          ? {}
          : { [ROTATION_VARIABLES.keyPropagationSeconds]: String(props.keyPropagation.toSeconds()) }),
      },
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(this.rotationFunction, {
      rotatedSecret: { secret: props.secret, mirrors },
    });
    // Secrets Manager invokes the rotation function synchronously, so an asynchronous-invoke
    // configuration (retries, an on-failure destination) would never apply to it: a failed step
    // fails the RotateSecret call, the RotationFailed alarm fires on the function's first error,
    // AWSPENDING stays on the token's version, and Secrets Manager tries the rotation again.
    // https://docs.aws.amazon.com/lambda/latest/dg/with-secrets-manager.html
    acknowledge(
      this.rotationFunction,
      'Serverless-LambdaDLQ',
      'Secrets Manager invokes the rotation function synchronously: a dead-letter queue or on-failure destination never receives its failures. They surface as the RotationFailed alarm (every error) and the secret keeps AWSPENDING until a retry succeeds (docs/key-rotation.md).',
    );

    // The L1 schedule, not addRotationSchedule: the L2 also grants the function
    // secretsmanager:GetRandomPassword on * and read/write through grantRead/grantWrite, which a
    // vendor-generated key never needs; bindDeclared grants exactly the four steps' actions.
    this.rotationFunction.addPermission('InvokedBySecretsManager', {
      principal: new ServicePrincipal('secretsmanager.amazonaws.com'),
      // Only for this secret: no other secret's rotation can be pointed at this function.
      sourceArn: props.secret.secretArn,
      sourceAccount: Stack.of(this).account,
    });
    this.rotationSchedule = new CfnRotationSchedule(this, 'RotationSchedule', {
      secretId: props.secret.secretArn,
      rotationLambdaArn: this.rotationFunction.functionArn,
      // A deploy must never rotate the key: the vendor kills the old one at once.
      rotateImmediatelyOnUpdate: false,
      rotationRules: {
        scheduleExpression: props.scheduleExpression,
        duration: `${windowHours}h`,
      },
    });
    this.rotationSchedule.node.addDependency(
      this.rotationFunction.permissionsNode.findChild('InvokedBySecretsManager'),
    );

    this.ageCheckFunction = new PipelineFunction(this, 'AgeCheckFunction', {
      handler: registeredHandler('check-api-key-age'),
      timeout: Duration.seconds(30),
      memorySize: 256,
      logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(this.ageCheckFunction, { rotatedSecret: { secret: props.secret, mirrors: [] } });
    invokeOnSchedule(this, 'AgeCheckSchedule', {
      fn: this.ageCheckFunction,
      expression: 'rate(1 day)',
      flexibleWindow: Duration.hours(1),
      deadLetterQueue: this.deadLetterQueue,
      description: 'measure the vendor org key age once a day',
    });

    this.alarms = this.createAlarms(props.maxKeyAge);
  }

  private createAlarms(maxKeyAge: Duration): Record<RotationAlarmName, IAlarm> {
    // The threshold may be a fraction of a day: toDays() alone would refuse it with a CDK error.
    const maxDays = maxKeyAge.toDays({ integral: false });
    const count = (name: MetricName) => rotationMetric(this, name, 'Sum', Duration.minutes(5));
    const atLeastOnce = (id: RotationAlarmName, metric: IMetric, meaning: string) =>
      alarmOn(this, id, {
        metric,
        threshold: 1,
        meaning,
        runbook: `docs/runbooks/key-rotation.md#${id.toLowerCase()}`,
      });
    return {
      RotationFailed: this.rotationFunction.alarms.errors,
      RotationResponseLost: atLeastOnce(
        'RotationResponseLost',
        count(ROTATION_METRIC.rotationResponseLost),
        'LOCKOUT: the vendor rotated the org key and the new key was lost. Break-glass recovery now.',
      ),
      RotateAnswerUnparsable: atLeastOnce(
        'RotateAnswerUnparsable',
        count(ROTATION_METRIC.rotateAnswerUnparsable),
        "The vendor's rotate answer held no key we could find; it is stored whole under AWSPENDING.",
      ),
      MirrorWriteFailed: atLeastOnce(
        'MirrorWriteFailed',
        count(ROTATION_METRIC.mirrorWriteFailures),
        'A mirror secret was not updated after a rotation: integrations reading it hold a dead key.',
      ),
      RotationEventFailed: atLeastOnce(
        'RotationEventFailed',
        count(ROTATION_METRIC.rotationEventFailures),
        'ApiKeyRotated could not be published: dependents were not told about a rotation.',
      ),
      RotationDeadLetters: this.deadLetterQueue.depthAlarm,
      KeyNotRotated: new Alarm(this, 'KeyNotRotated', {
        alarmDescription: `The vendor org key is older than ${maxDays} days: rotation is not happening. Runbook: docs/runbooks/key-rotation.md#keynotrotated`,
        metric: rotationMetric(this, ROTATION_METRIC.apiKeyAge, 'Maximum', Duration.days(1)),
        threshold: maxDays,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        // Every check run publishes an age, seeded secret or not (it dates from the secret's
        // creation), so a day without one means the check did not run: KeyAgeNotMeasured's to say.
        // As breaching, it put a fresh stack in ALARM before the first daily check.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      // A failing check lands in the dead-letter queue (RotationDeadLetters); this catches the check
      // not running at all (schedule disabled or deleted) once it has reported.
      KeyAgeNotMeasured: silenceAlarm(this, 'KeyAgeNotMeasured', {
        metric: rotationMetric(this, ROTATION_METRIC.apiKeyAge, 'SampleCount', AGE_CHECK_SILENCE),
        meaning: `The daily key-age check has published no ApiKeyAgeDays for ${AGE_CHECK_SILENCE.toDays()} days: KeyNotRotated is blind.`,
        runbook: 'docs/runbooks/key-rotation.md#keyagenotmeasured',
      }),
    };
  }
}

export type RotationAlarmName =
  | 'RotationFailed'
  | 'RotationResponseLost'
  | 'RotateAnswerUnparsable'
  | 'MirrorWriteFailed'
  | 'RotationEventFailed'
  | 'RotationDeadLetters'
  | 'KeyNotRotated'
  | 'KeyAgeNotMeasured';

/** A rotation metric as Powertools writes it: the service dimension plus `workflow=rotation`. */
function rotationMetric(scope: IConstruct, name: MetricName, statistic: string, period: Duration): Metric {
  return pipelineMetric(scope, name, { workflow: 'rotation' }, { statistic, period });
}
