/** The template resolver: CloudFormation's Ref/GetAtt values per type, intrinsics, and its refusals. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Fn::Sub text is CloudFormation syntax, not a template literal
import { describe, expect, it } from 'vitest';
import { identityPoliciesOf, resourcePolicyFor } from '../../local/services/iam/template-policies.ts';
import {
  type CfnTemplateLike,
  FAKE_ENVIRONMENT,
  TemplateResolver,
} from '../../local/services/iam/template-resolver.ts';

const template: CfnTemplateLike = {
  Parameters: {
    Stage: { Type: 'String', Default: 'prod' },
    BootstrapVersion: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk-bootstrap/version' },
  },
  Resources: {
    Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
    Named: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: { 'Fn::Sub': 'named-${Stage}' } } },
    Topic: { Type: 'AWS::SNS::Topic' },
    Queue: { Type: 'AWS::SQS::Queue' },
    Bucket: { Type: 'AWS::S3::Bucket' },
    Key: {
      Type: 'AWS::KMS::Key',
      Properties: { KeyPolicy: { Statement: [{ Effect: 'Allow', Resource: '*' }] } },
    },
    Logs: { Type: 'AWS::Logs::LogGroup', Properties: { LogGroupName: '/custom/logs' } },
    Secret: { Type: 'AWS::SecretsManager::Secret' },
    Role: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
        },
        Policies: [
          {
            PolicyName: 'inline',
            PolicyDocument: { Statement: [{ Effect: 'Allow', Resource: { Ref: 'Topic' } }] },
          },
        ],
      },
    },
    RolePolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        Roles: [{ Ref: 'Role' }],
        PolicyDocument: { Statement: [{ Effect: 'Allow', Resource: { 'Fn::GetAtt': ['Queue', 'Arn'] } }] },
      },
    },
    QueuePolicy: {
      Type: 'AWS::SQS::QueuePolicy',
      Properties: {
        Queues: [{ Ref: 'Queue' }],
        PolicyDocument: { Statement: [{ Sid: 'q', Effect: 'Allow' }] },
      },
    },
    BucketPolicy: {
      Type: 'AWS::S3::BucketPolicy',
      Properties: {
        Bucket: { Ref: 'Bucket' },
        PolicyDocument: { Statement: [{ Sid: 'b', Effect: 'Allow' }] },
      },
    },
    Permission: {
      Type: 'AWS::Lambda::Permission',
      Properties: {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': ['Fn', 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: 'arn:aws:events:us-east-1:123456789012:rule/r',
      },
    },
    Rule: { Type: 'AWS::Events::Rule' },
    Machine: { Type: 'AWS::StepFunctions::StateMachine' },
    Unknown: { Type: 'AWS::Kinesis::Stream' },
  },
};

const resolver = new TemplateResolver(template);

describe('TemplateResolver', () => {
  it('gives each type the Ref and Arn CloudFormation documents, in the fake account and region', () => {
    expect(resolver.ref('Fn')).toBe('SecurityPipeline-Fn');
    expect(resolver.getAtt('Fn', 'Arn')).toBe(
      'arn:aws:lambda:us-east-1:123456789012:function:SecurityPipeline-Fn',
    );
    expect(resolver.ref('Topic')).toBe('arn:aws:sns:us-east-1:123456789012:SecurityPipeline-Topic');
    expect(resolver.ref('Queue')).toBe(
      'https://sqs.us-east-1.amazonaws.com/123456789012/SecurityPipeline-Queue',
    );
    expect(resolver.getAtt('Queue', 'Arn')).toBe('arn:aws:sqs:us-east-1:123456789012:SecurityPipeline-Queue');
    expect(resolver.ref('Bucket')).toBe('securitypipeline-bucket');
    expect(resolver.getAtt('Bucket', 'Arn')).toBe('arn:aws:s3:::securitypipeline-bucket');
    expect(resolver.getAtt('Role', 'Arn')).toBe('arn:aws:iam::123456789012:role/SecurityPipeline-Role');
    expect(resolver.getAtt('Logs', 'Arn')).toBe(
      'arn:aws:logs:us-east-1:123456789012:log-group:/custom/logs:*',
    );
    expect(resolver.getAtt('Rule', 'Arn')).toBe(
      'arn:aws:events:us-east-1:123456789012:rule/SecurityPipeline-Rule',
    );
    expect(resolver.ref('Machine')).toBe(
      'arn:aws:states:us-east-1:123456789012:stateMachine:SecurityPipeline-Machine',
    );
    expect(resolver.ref('Secret')).toMatch(
      /^arn:aws:secretsmanager:us-east-1:123456789012:secret:SecurityPipeline-Secret-[0-9a-f]{6}$/,
    );
    expect(resolver.ref('Key')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(resolver.getAtt('Key', 'Arn')).toBe(
      `arn:aws:kms:us-east-1:123456789012:key/${resolver.ref('Key')}`,
    );
  });

  it('is deterministic: a second resolver of the same template names everything the same', () => {
    const again = new TemplateResolver(template);
    for (const id of ['Key', 'Secret', 'Fn', 'Bucket']) expect(again.arn(id)).toBe(resolver.arn(id));
  });

  it('uses an explicit name property, itself resolved (parameters by their Default)', () => {
    expect(resolver.getAtt('Named', 'Arn')).toBe('arn:aws:lambda:us-east-1:123456789012:function:named-prod');
  });

  it('resolves Join, Sub (with variables, attributes, pseudo parameters and ${!literals}), Select, Split and NoValue', () => {
    expect(
      resolver.resolve({
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':sns:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            ':t',
          ],
        ],
      }),
    ).toBe('arn:aws:sns:us-east-1:123456789012:t');
    expect(resolver.resolve({ 'Fn::Sub': '${Fn.Arn}/${AWS::StackName}/${!Keep}' })).toBe(
      'arn:aws:lambda:us-east-1:123456789012:function:SecurityPipeline-Fn/SecurityPipeline/${Keep}',
    );
    expect(resolver.resolve({ 'Fn::Sub': ['${X}-${Queue}', { X: { Ref: 'Stage' } }] })).toBe(
      'prod-https://sqs.us-east-1.amazonaws.com/123456789012/SecurityPipeline-Queue',
    );
    expect(
      resolver.resolve({ 'Fn::Select': [1, { 'Fn::Split': [':', { 'Fn::GetAtt': ['Topic', 'Arn'] }] }] }),
    ).toBe('aws');
    expect(resolver.resolve({ 'Fn::GetAtt': 'Queue.QueueName' })).toBe('SecurityPipeline-Queue');
    expect(resolver.resolve({ a: [1, { Ref: 'AWS::NoValue' }, 2], b: { Ref: 'AWS::NoValue' } })).toEqual({
      a: [1, 2],
    });
  });

  it('maps an ARN back to its logical ID', () => {
    expect(resolver.logicalIdOfArn(resolver.arn('Queue'))).toBe('Queue');
    expect(resolver.logicalIdOfArn('arn:aws:sqs:us-east-1:123456789012:elsewhere')).toBeUndefined();
  });

  it('refuses what it has no single value for, naming it', () => {
    expect(() => resolver.ref('Unknown')).toThrow('no model of AWS::Kinesis::Stream (resource Unknown)');
    expect(() => resolver.getAtt('Topic', 'Nope')).toThrow('Fn::GetAtt Topic.Nope');
    expect(() => resolver.ref('Missing')).toThrow('no resource Missing');
    expect(() => resolver.ref('BootstrapVersion')).toThrow('parameter BootstrapVersion has no value');
    expect(() => resolver.resolve({ 'Fn::If': ['C', 1, 2] })).toThrow('Fn::If is not supported');
    expect(() => resolver.resolveString({ 'Fn::Split': [',', 'a,b'] }, 'the thing')).toThrow(
      'the thing resolves to',
    );
  });

  it('takes another environment and given parameters', () => {
    const other = new TemplateResolver(template, {
      ...FAKE_ENVIRONMENT,
      account: '210987654321',
      region: 'eu-west-1',
      parameters: { BootstrapVersion: '21' },
    });
    expect(other.arn('Topic')).toBe('arn:aws:sns:eu-west-1:210987654321:SecurityPipeline-Topic');
    expect(other.ref('BootstrapVersion')).toBe('21');
  });
});

describe('template policies', () => {
  it("gathers a role's inline policies and the AWS::IAM::Policy resources attached to it, resolved", () => {
    const policies = identityPoliciesOf(resolver, 'Role');
    expect(policies.map((p) => p.name)).toEqual(['inline', 'RolePolicy']);
    expect(policies.map((p) => p.policy.Statement[0]?.Resource)).toEqual([
      resolver.arn('Topic'),
      resolver.arn('Queue'),
    ]);
  });

  it('finds the resource policy AWS evaluates for an ARN, by resource type', () => {
    expect(resourcePolicyFor(resolver, resolver.arn('Queue'))?.Statement).toEqual([
      { Sid: 'q', Effect: 'Allow' },
    ]);
    expect(resourcePolicyFor(resolver, `${resolver.arn('Bucket')}/some/key`)?.Statement).toEqual([
      { Sid: 'b', Effect: 'Allow' },
    ]);
    expect(resourcePolicyFor(resolver, resolver.arn('Key'))?.Statement).toEqual([
      { Effect: 'Allow', Resource: '*' },
    ]);
    expect(resourcePolicyFor(resolver, resolver.arn('Topic'))).toBeUndefined();
    expect(() => resourcePolicyFor(resolver, 'arn:aws:sqs:us-east-1:123456789012:elsewhere')).toThrow(
      'no resource',
    );
  });

  it("builds a function's policy from its permissions as Lambda does (SourceArn as ArnLike)", () => {
    expect(resourcePolicyFor(resolver, resolver.arn('Fn'))?.Statement).toEqual([
      {
        Sid: 'Permission',
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'lambda:InvokeFunction',
        Resource: resolver.arn('Fn'),
        Condition: { ArnLike: { 'AWS:SourceArn': 'arn:aws:events:us-east-1:123456789012:rule/r' } },
      },
    ]);
  });
});
