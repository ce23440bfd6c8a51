/**
 * What the IAM evaluator reads from a synthesized template, resolved to concrete ARNs once (at
 * synthesis, kept in the synth cache): each handler file's execution role and its policies, every
 * resource policy by the ARN it governs, and which buckets and secrets the local stand-ins play.
 */
import { ENV } from '#core/runtime/variables';
import type { CfnTemplate } from '../definitions.ts';
import { LOCAL_STACK, type Resolver, type StackEnvironment, templateResolver } from './resolve.ts';

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly Record<string, unknown>[];
}

export interface NamedPolicy {
  readonly name: string;
  readonly policy: PolicyDocument;
}

export interface FunctionIdentity {
  readonly functionName: string;
  readonly roleName: string;
  readonly roleArn: string;
  /** Inline, AWS::IAM::Policy and AWS::IAM::ManagedPolicy documents attached to the role. */
  readonly policies: readonly NamedPolicy[];
  /** AWS managed policies by ARN: not in the template, so not evaluated (they grant logging only here). */
  readonly managedPolicyArns: readonly string[];
}

export interface IamView {
  readonly environment: StackEnvironment;
  /** By handler file (`lambdas/<file>.ts`), read from each function's description. */
  readonly functions: Readonly<Record<string, FunctionIdentity>>;
  /** Bucket, queue, topic, key and secret policies, by the ARN of what they govern. */
  readonly resourcePolicies: Readonly<Record<string, PolicyDocument>>;
  /** Physical names of the buckets the functions' environment names (local `pipeline-input`...). */
  readonly buckets: { readonly input?: string; readonly results?: string };
  /** ARNs of the secrets the stack rotates (what `npm start -- rotate` rotates). */
  readonly rotatedSecrets: readonly string[];
}

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

const HANDLER_DESCRIPTION = /lambdas\/([\w-]+)\.ts$/;

function refTo(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'Ref' in value) return String((value as { Ref: unknown }).Ref);
  if (value && typeof value === 'object' && 'Fn::GetAtt' in value) {
    return String((value as { 'Fn::GetAtt': unknown[] })['Fn::GetAtt'][0]);
  }
  return undefined;
}

function documentOf(resolve: Resolver, raw: unknown): PolicyDocument {
  const document = resolve(raw) as PolicyDocument;
  return { ...document, Statement: ([] as Record<string, unknown>[]).concat(document.Statement ?? []) };
}

/** The resource policy's governed ARN per resource-policy type. */
function governedArns(
  resolve: Resolver,
  resource: Resource,
  partition: string,
): { arns: string[]; document: unknown } | undefined {
  const props = resource.Properties ?? {};
  const getArn = (value: unknown): string => {
    const logicalId = refTo(value);
    return String(resolve(logicalId ? { 'Fn::GetAtt': [logicalId, 'Arn'] } : value));
  };
  switch (resource.Type) {
    case 'AWS::S3::BucketPolicy':
      return {
        arns: [`arn:${partition}:s3:::${String(resolve(props.Bucket))}`],
        document: props.PolicyDocument,
      };
    case 'AWS::SQS::QueuePolicy':
      return { arns: (props.Queues as unknown[]).map(getArn), document: props.PolicyDocument };
    case 'AWS::SNS::TopicPolicy':
      return {
        arns: (props.Topics as unknown[]).map((t) => String(resolve(t))),
        document: props.PolicyDocument,
      };
    case 'AWS::KMS::Key':
      return props.KeyPolicy ? { arns: [], document: props.KeyPolicy } : undefined;
    case 'AWS::SecretsManager::ResourcePolicy':
      return { arns: [String(resolve(props.SecretId))], document: props.ResourcePolicy };
    default:
      return undefined;
  }
}

/** The evaluator's view of `template`; a template without functions (a test's) yields an empty one. */
export function iamViewOf(template: CfnTemplate, environment: StackEnvironment = LOCAL_STACK): IamView {
  const resolve = templateResolver(template, environment);
  const resources = Object.entries((template.Resources ?? {}) as Record<string, Resource>);
  const policiesByRole = new Map<string, NamedPolicy[]>();
  const attach = (roleRef: unknown, policy: NamedPolicy) => {
    const role = refTo(roleRef);
    if (role === undefined) return;
    policiesByRole.set(role, [...(policiesByRole.get(role) ?? []), policy]);
  };
  const resourcePolicies: Record<string, PolicyDocument> = {};
  const buckets: { input?: string; results?: string } = {};
  const rotatedSecrets: string[] = [];
  for (const [logicalId, resource] of resources) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') {
      const policy = {
        name: String(props.PolicyName ?? logicalId),
        policy: documentOf(resolve, props.PolicyDocument),
      };
      for (const role of (props.Roles as unknown[] | undefined) ?? []) attach(role, policy);
    } else if (resource.Type === 'AWS::IAM::Role') {
      for (const inline of (props.Policies as
        | { PolicyName: string; PolicyDocument: unknown }[]
        | undefined) ?? []) {
        attach(
          { Ref: logicalId },
          { name: inline.PolicyName, policy: documentOf(resolve, inline.PolicyDocument) },
        );
      }
    } else if (resource.Type === 'AWS::SecretsManager::RotationSchedule') {
      rotatedSecrets.push(String(resolve(props.SecretId)));
    }
    const governed = governedArns(resolve, resource, environment.partition);
    if (governed) {
      const arns =
        resource.Type === 'AWS::KMS::Key'
          ? [String(resolve({ 'Fn::GetAtt': [logicalId, 'Arn'] }))]
          : governed.arns;
      const document = documentOf(resolve, governed.document);
      for (const arn of arns) {
        const earlier = resourcePolicies[arn];
        resourcePolicies[arn] = earlier
          ? { ...earlier, Statement: [...earlier.Statement, ...document.Statement] }
          : document;
      }
    }
  }
  const functions: Record<string, FunctionIdentity> = {};
  for (const [logicalId, resource] of resources) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const props = resource.Properties ?? {};
    const handler = HANDLER_DESCRIPTION.exec(String(props.Description ?? ''))?.[1];
    const roleId = refTo(props.Role);
    if (handler === undefined || roleId === undefined) continue;
    const role = (template.Resources?.[roleId] ?? { Type: '' }) as Resource;
    functions[handler] = {
      functionName: String(resolve({ Ref: logicalId })),
      roleName: String(resolve({ Ref: roleId })),
      roleArn: String(resolve({ 'Fn::GetAtt': [roleId, 'Arn'] })),
      policies: policiesByRole.get(roleId) ?? [],
      managedPolicyArns: ((role.Properties?.ManagedPolicyArns as unknown[] | undefined) ?? []).map((arn) =>
        String(resolve(arn)),
      ),
    };
    const variables =
      (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    if (variables[ENV.inputBucket] !== undefined)
      buckets.input ??= String(resolve(variables[ENV.inputBucket]));
    if (variables[ENV.resultsBucket] !== undefined) {
      buckets.results ??= String(resolve(variables[ENV.resultsBucket]));
    }
  }
  return { environment, functions, resourcePolicies, buckets, rotatedSecrets };
}
