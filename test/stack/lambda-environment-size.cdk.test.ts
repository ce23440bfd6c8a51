/**
 * Lambda's 4 KB limit on a function's environment variables, refused at synth
 * (lib/platform/lambda-environment-size.ts) instead of by CloudFormation at deploy.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { registeredHandler } from '#lambdas/registry';
import { environmentSizeProblem } from '../../lib/platform/lambda-environment-size.ts';
import { PipelineFunction } from '../../lib/platform/pipeline-function.ts';
import { testApp } from '../kit/synth.ts';

const ARN = (index: number) =>
  `arn:aws:secretsmanager:eu-west-1:123456789012:secret:integrations/vendor-key-${String(index).padStart(3, '0')}-AbCdEf`;

describe("Lambda's 4 KB environment limit", () => {
  it.each([
    ['a few variables', { KEYS_API_URL: 'https://vendor.example.com' }, undefined],
    // {"A":"<4088 x>"} is 4096 bytes: exactly the limit.
    ['exactly 4096 bytes of JSON', { A: 'x'.repeat(4088) }, undefined],
    [
      'one byte more',
      { A: 'x'.repeat(4089) },
      /take at least 4097 bytes; Lambda allows 4096 in all \(largest: A 4089 bytes\)/,
    ],
    ['multi-byte characters counted as bytes', { A: 'é'.repeat(2045) }, /at least 4098 bytes/],
    // References (bucket names, ARNs) are counted as empty, their literal surroundings are not.
    [
      'the literal text of a join',
      { A: { 'Fn::Join': ['', ['x'.repeat(4089), { Ref: 'Bucket' }]] } },
      /at least 4097 bytes/,
    ],
    ['a reference alone', { A: { Ref: 'Bucket' }, B: { 'Fn::GetAtt': ['Machine', 'Arn'] } }, undefined],
  ])('%s', (_case, variables, expected) => {
    const problem = environmentSizeProblem(variables);
    if (expected === undefined) expect(problem).toBeUndefined();
    else expect(problem).toMatch(expected);
  });

  it('fails synth for a function whose mirror list would pass the limit, naming the function and the variable', () => {
    const app = testApp();
    const stack = new Stack(app, 'Env');
    new PipelineFunction(stack, 'RotateFunction', {
      handler: registeredHandler('rotate-api-key'),
      timeout: Duration.minutes(2),
      environment: {
        ROTATION_MIRROR_SECRET_ARNS: Array.from({ length: 50 }, (_, index) => ARN(index)).join(','),
      },
    });
    expect(() => app.synth()).toThrow(
      /Env\/RotateFunction[\s\S]*environment variables take at least \d+ bytes; Lambda allows 4096 in all \(largest: ROTATION_MIRROR_SECRET_ARNS \d+ bytes/,
    );
  });

  it('lets the same function through with a few mirrors', () => {
    const app = testApp();
    const stack = new Stack(app, 'Env');
    new PipelineFunction(stack, 'RotateFunction', {
      handler: registeredHandler('rotate-api-key'),
      timeout: Duration.minutes(2),
      environment: { ROTATION_MIRROR_SECRET_ARNS: [ARN(1), ARN(2)].join(',') },
    });
    expect(() => app.synth()).not.toThrow();
  });
});
