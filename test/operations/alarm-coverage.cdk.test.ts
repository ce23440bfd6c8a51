/**
 * The `Pipeline-AlarmCoverage` rule (lib/platform/rules/alarm-coverage.ts), in the style of cdk-nag's own
 * rule tests: a non-compliant and a compliant resource of each kind, then the whole stack.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import { PipelineChecks } from '../../lib/platform/rules/pipeline-checks.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { testApp } from '../kit/synth.ts';
import { testOutdir } from '../kit/synth-outdir.ts';

function resources() {
  const app = new App({ outdir: testOutdir() });
  const stack = new Stack(app, 'Test');
  const fn = new LambdaFunction(stack, 'Fn', {
    runtime: Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: Code.fromInline('exports.handler = async () => {};'),
  });
  const machine = new StateMachine(stack, 'Machine', {
    definitionBody: DefinitionBody.fromChainable(new Pass(stack, 'Nothing')),
  });
  const queue = new Queue(stack, 'Queue');
  return { app, stack, fn, machine, queue };
}

/** The construct paths the rule reports, without the `/Resource` suffix. */
function violations(app: App): string[] {
  const report = new PipelineChecks(app).validateScope(app);
  return report.violations
    .filter((v) => v.ruleName === 'Pipeline-AlarmCoverage')
    .flatMap((v) => v.violatingResources.map((r) => (r.constructPath ?? '').replace(/\/Resource$/, '')))
    .sort();
}

describe('Pipeline-AlarmCoverage', () => {
  it('is non-compliant for a function, a state machine and a queue without alarms', () => {
    const { app } = resources();
    expect(violations(app)).toEqual(['Test/Fn', 'Test/Machine', 'Test/Queue']);
  });

  it('stays non-compliant while one of the required alarms is missing', () => {
    const { app, stack, fn, machine, queue } = resources();
    fn.metricErrors().createAlarm(stack, 'FnErrors', { threshold: 1, evaluationPeriods: 1 });
    machine.metricFailed().createAlarm(stack, 'Failed', { threshold: 1, evaluationPeriods: 1 });
    machine.metricTimedOut().createAlarm(stack, 'TimedOut', { threshold: 1, evaluationPeriods: 1 });
    // An alarm on another queue's depth does not cover this one.
    const other = new Queue(stack, 'Other');
    other
      .metricApproximateNumberOfMessagesVisible()
      .createAlarm(stack, 'OtherDepth', { threshold: 1, evaluationPeriods: 1 });
    expect(violations(app)).toEqual(['Test/Fn', 'Test/Machine', 'Test/Queue']);
    expect(queue.queueArn).toBeTruthy();
  });

  it('is compliant once each has every required alarm', () => {
    const { app, stack, fn, machine, queue } = resources();
    const alarm = (id: string, metric: ReturnType<typeof fn.metricErrors>) =>
      metric.createAlarm(stack, id, { threshold: 1, evaluationPeriods: 1 });
    alarm('Errors', fn.metricErrors({ period: Duration.minutes(5) }));
    alarm('Throttles', fn.metricThrottles());
    alarm('Failed', machine.metricFailed());
    alarm('TimedOut', machine.metricTimedOut());
    alarm('Aborted', machine.metricAborted());
    alarm('Depth', queue.metricApproximateNumberOfMessagesVisible());
    expect(violations(app)).toEqual([]);
  });

  it.each([
    ['the default configuration', {}],
    [
      'every optional feature',
      {
        vendor: { keys: 'per-api' },
        scan: { deleteAtVendorAfterManifest: true },
        removalPolicy: 'destroy',
        schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }],
      },
    ],
  ])('finds every function, state machine and queue of the stack alarmed, for %s', (_name, raw) => {
    const app = testApp();
    new SecurityPipelineStack(app, 'SecurityPipeline', { config: parsePipelineConfig(raw, 'test') });
    app.synth();
    expect(violations(app)).toEqual([]);
  });
});
