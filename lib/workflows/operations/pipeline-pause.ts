/**
 * The pause switch (#lambdas/platform/runs/pause): one SSM parameter, `running` or `paused`, that every intake reads
 * (uploads and schedule fires go through them), and the resume function that gives back what a
 * pause held. Nothing is redeployed to pause or resume: `aws ssm put-parameter --overwrite`.
 *
 * Resume runs when the parameter changes (its Parameter Store change event) and, as a safety net,
 * every 15 minutes; a run while paused does nothing.
 */
import { Duration } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { PAUSE_STATE } from '#lambdas/platform/runs/pause';
import { registeredHandler } from '#lambdas/registry';
import { bindDeclared } from '../../platform/bindings.ts';
import { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { PipelineFunction } from '../../platform/pipeline-function.ts';
import { invokeOnSchedule } from '../../platform/scheduled-invoke.ts';

export class PipelinePause extends Construct {
  public readonly parameter: StringParameter;
  public resumeFunction: PipelineFunction | undefined;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.parameter = new StringParameter(this, 'Parameter', {
      description: `Security pipeline pause switch: "${PAUSE_STATE.running}" or "${PAUSE_STATE.paused}" (docs/runbooks/pause-and-resume.md)`,
      stringValue: PAUSE_STATE.running,
      allowedPattern: `^(${PAUSE_STATE.running}|${PAUSE_STATE.paused})$`,
    });
  }

  /**
   * The resume function for these intakes (their dead-letter queues and functions); `schedulerRole`
   * is the role the pipeline's schedules share (a role of its own without it).
   */
  resume(
    held: readonly { queue: IQueue; fn: IFunction }[],
    logRetention?: RetentionDays,
    schedulerRole?: Role,
  ): PipelineFunction {
    const deadLetterQueue = new DeadLetterQueue(this, 'DeadLetterQueue', {
      purpose: 'resume runs that failed or could not be delivered',
    });
    const fn = new PipelineFunction(this, 'ResumeFunction', {
      handler: registeredHandler('resume-paused-starts'),
      timeout: Duration.minutes(5),
      memorySize: 256,
      logRetention: logRetention ?? RetentionDays.THREE_MONTHS,
    });
    bindDeclared(fn, { pause: { parameter: this.parameter, held } });
    invokeOnSchedule(this, 'SafetyNetSchedule', {
      fn,
      expression: 'rate(15 minutes)',
      flexibleWindow: Duration.minutes(5),
      deadLetterQueue,
      description: 'resume starts a pause held, if the change event was missed',
      ...(schedulerRole === undefined ? {} : { role: schedulerRole }),
    });
    new Rule(this, 'Changed', {
      description: 'The pause switch changed: resume what it held (a no-op while paused)',
      eventPattern: {
        source: ['aws.ssm'],
        detailType: ['Parameter Store Change'],
        detail: { name: [this.parameter.parameterName], operation: ['Update'] },
      },
      targets: [
        new LambdaFunction(fn, { deadLetterQueue, retryAttempts: 2, maxEventAge: Duration.hours(1) }),
      ],
    });
    this.resumeFunction = fn;
    return fn;
  }
}
