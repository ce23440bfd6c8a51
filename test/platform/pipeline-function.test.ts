import { Duration, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type HandlerFile, registeredHandler } from '../../lambdas/registry.ts';
import { setFunctionSettings } from '../../lib/platform/function-settings.ts';
import { PipelineFunction, type PipelineFunctionProps } from '../../lib/platform/pipeline-function.ts';
import { bareStack, FIRST_SYNTH_TIMEOUT_MS, templateOf } from '../kit/stack.ts';

const PLAIN = 'write-scan-manifest';
const VENDOR = 'start-scan';

function functionOf(props: Partial<PipelineFunctionProps> = {}): Template {
  return templateOf((stack) => {
    new PipelineFunction(stack, 'Fn', {
      handler: registeredHandler(PLAIN),
      timeout: Duration.seconds(30),
      ...props,
    });
  });
}

/** Builds one function and returns the error it refused its props with. */
function refusal(props: Partial<PipelineFunctionProps>): { message: string; stack: Stack } {
  const stack = bareStack();
  try {
    new PipelineFunction(stack, 'Fn', {
      handler: registeredHandler(PLAIN),
      timeout: Duration.seconds(30),
      ...props,
    });
  } catch (error) {
    return { message: (error as Error).message, stack };
  }
  throw new Error('expected PipelineFunction to refuse its props');
}

beforeAll(() => {
  functionOf();
}, FIRST_SYNTH_TIMEOUT_MS);

describe('PipelineFunction defaults', () => {
  it('runs Node.js 24 on arm64 with active tracing, 512 MB and the given timeout', () => {
    functionOf().hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      MemorySize: 512,
      Timeout: 30,
      Handler: 'index.handler',
      Description: `Security pipeline: lambdas/scan/${PLAIN}.ts`,
    });
  });

  it('sets the Powertools service and level, and no NODE_OPTIONS: source maps are off by default', () => {
    functionOf().hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: {
          POWERTOOLS_SERVICE_NAME: 'security-pipeline',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          NODE_OPTIONS: Match.absent(),
        },
      },
    });
  });

  it("takes its pipeline's runtime and source maps, and a function outside it the defaults", () => {
    const template = templateOf((stack) => {
      const pipeline = new Construct(stack, 'Pipeline');
      setFunctionSettings(pipeline, { runtime: 'nodejs22.x', sourceMaps: true });
      new PipelineFunction(pipeline, 'Inside', {
        handler: registeredHandler(PLAIN),
        timeout: Duration.seconds(30),
      });
      new PipelineFunction(stack, 'Outside', {
        handler: registeredHandler(PLAIN),
        timeout: Duration.seconds(30),
      });
    });
    const byId = (prefix: string) =>
      Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
        id.startsWith(prefix),
      )?.[1]?.Properties as { Runtime: string; Environment: { Variables: Record<string, string> } };
    expect(byId('PipelineInside')?.Runtime).toBe('nodejs22.x');
    expect(byId('PipelineInside')?.Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps');
    expect(byId('Outside')?.Runtime).toBe('nodejs24.x');
    expect(byId('Outside')?.Environment.Variables).not.toHaveProperty('NODE_OPTIONS');
  });

  it('merges caller variables over the defaults and keeps source maps ahead of caller NODE_OPTIONS', () => {
    const template = functionOf({
      sourceMaps: true,
      environment: { RESULTS_BUCKET: 'results', NODE_OPTIONS: '--max-old-space-size=256' },
      serviceName: 'scan',
      logLevel: 'DEBUG',
    });

    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: {
          POWERTOOLS_SERVICE_NAME: 'scan',
          POWERTOOLS_LOG_LEVEL: 'DEBUG',
          RESULTS_BUCKET: 'results',
          NODE_OPTIONS: '--enable-source-maps --max-old-space-size=256',
        },
      },
    });
  });

  it('writes to its own log group kept three months, through a role that can write only there', () => {
    const template = functionOf();

    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    const [logGroupId] = Object.keys(template.findResources('AWS::Logs::LogGroup'));
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: logGroupId } },
    });
    // No AWSLambdaBasicExecutionRole: its logs:* on * is what this role avoids.
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [Match.objectLike({ Principal: { Service: 'lambda.amazonaws.com' } })],
      },
      ManagedPolicyArns: Match.absent(),
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
          }),
        ]),
      },
    });
  });

  it('takes memory, retention, reserved concurrency and description from its props', () => {
    const template = functionOf({
      memorySize: 1024,
      logRetention: RetentionDays.ONE_WEEK,
      reservedConcurrentExecutions: 3,
      description: 'Writes the manifest',
    });

    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 1024,
      ReservedConcurrentExecutions: 3,
      Description: 'Writes the manifest',
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('has no dead-letter queue: its callers (Step Functions tasks) handle every failure', () => {
    functionOf().hasResourceProperties('AWS::Lambda::Function', { DeadLetterConfig: Match.absent() });
  });

  it('masks email addresses in the logs of a handler the registry says reads vendor answers', () => {
    const masked = templateOf((stack) => {
      new PipelineFunction(stack, 'Fn', {
        handler: registeredHandler(VENDOR),
        timeout: Duration.seconds(30),
      });
    });

    masked.hasResourceProperties('AWS::Logs::LogGroup', {
      DataProtectionPolicy: Match.objectLike({ Name: 'mask-email-addresses' }),
    });
    functionOf().hasResourceProperties('AWS::Logs::LogGroup', { DataProtectionPolicy: Match.absent() });
    functionOf({ maskEmailsInLogs: true }).hasResourceProperties('AWS::Logs::LogGroup', {
      DataProtectionPolicy: Match.objectLike({ Name: 'mask-email-addresses' }),
    });
  });

  it('raises an errors alarm at 5 in 5 minutes and a throttles alarm at 1, each naming its runbook', () => {
    const template = functionOf();

    template.resourceCountIs('AWS::CloudWatch::Alarm', 2);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Threshold: 5,
      Period: 300,
      Statistic: 'Sum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp(
        `^${PLAIN} threw .* Runbook: docs/runbooks/alarms.md#function-errors$`,
      ),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Throttles',
      Threshold: 1,
      AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbooks/alarms.md#function-throttles$'),
    });
  });

  it('takes the errors alarm threshold and runbook from its props', () => {
    functionOf({
      alarms: { errorThreshold: 1, runbook: 'docs/runbooks/scan.md#manifest' },
    }).hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Threshold: 1,
      AlarmDescription: Match.stringLikeRegexp('Runbook: docs/runbooks/scan.md#manifest$'),
    });
  });
});

describe('PipelineFunction.validate', () => {
  it.each([
    ['a name with an extension', 'write-scan-manifest.ts'],
    ['a path', 'core/redact'],
    ['upper case', 'WriteScanManifest'],
    ['an underscore', 'write_scan_manifest'],
    ['a trailing hyphen', 'write-'],
  ])('refuses a handler file with %s', (_what, file) => {
    expect(refusal({ handler: { ...registeredHandler(PLAIN), file } }).message).toBe(
      `PipelineFunction Fn: the handler's file must be a kebab-case file name without extension, e.g. 'write-summary' (got '${file}')`,
    );
  });

  it('refuses a handler whose entry file does not exist', () => {
    const entryPath = 'lambdas/scan/no-such-handler.ts';
    expect(refusal({ handler: { ...registeredHandler(PLAIN), entryPath } }).message).toMatch(
      /^PipelineFunction Fn: handler file .*lambdas\/scan\/no-such-handler\.ts does not exist$/,
    );
  });

  it('has no handler to build from for a file the registry does not declare (it names the folder)', () => {
    expect(() => registeredHandler('no-such-handler' as HandlerFile)).toThrow(
      "lambdas/registry.ts declares no handler 'no-such-handler'; add what it touches before deploying it",
    );
  });

  it.each([
    [Duration.seconds(0), 0],
    [Duration.minutes(16), 960],
  ])('refuses a timeout outside 1 second .. 15 minutes (%s)', (timeout, seconds) => {
    expect(refusal({ timeout }).message).toBe(
      `PipelineFunction Fn: timeout must be between 1 second and 15 minutes (got ${seconds} s)`,
    );
  });

  it('accepts the timeout bounds themselves', () => {
    expect(() => functionOf({ timeout: Duration.seconds(1) })).not.toThrow();
    expect(() => functionOf({ timeout: Duration.minutes(15) })).not.toThrow();
  });

  it.each([127, 10_241, 512.5])('refuses memorySize %s', (memorySize) => {
    expect(refusal({ memorySize }).message).toBe(
      `PipelineFunction Fn: memorySize must be a whole number of MB from 128 to 10240 (got ${memorySize})`,
    );
  });

  it('refuses reserved concurrency below 1', () => {
    expect(refusal({ reservedConcurrentExecutions: 0 }).message).toBe(
      'PipelineFunction Fn: reservedConcurrentExecutions must be at least 1 (got 0)',
    );
  });

  it('creates nothing when it refuses its props', () => {
    expect(refusal({ memorySize: 64 }).stack.node.children).toEqual([]);
  });

  it('has no handler for a file that exists but that lambdas/registry.ts does not declare as one', () => {
    expect(() => registeredHandler('registry' as HandlerFile)).toThrow(
      "lambdas/registry.ts declares no handler 'registry'; add what it touches before deploying it",
    );
  });

  it('fails synthesis when its environment exceeds Lambda 4 KB limit, naming the largest variable', () => {
    const stack = bareStack();
    new PipelineFunction(stack, 'Fn', {
      handler: registeredHandler(PLAIN),
      timeout: Duration.seconds(30),
      environment: { STATUS_WORDS: 'x'.repeat(5_000) },
    });

    expect(() => Template.fromStack(stack)).toThrow(
      /environment variables take at least \d+ bytes; Lambda allows 4096 in all \(largest: STATUS_WORDS 5000 bytes, /,
    );
  });
});
