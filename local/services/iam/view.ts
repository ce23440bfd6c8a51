/**
 * What the IAM evaluator reads from a synthesized template, resolved to concrete ARNs once (at
 * synthesis, kept in the synth cache): each handler file's execution role and its policies, every
 * resource policy by the ARN it governs, and which buckets and secrets the local stand-ins play.
 */
import { ENV } from '#lambdas/platform/runtime/variables';
import type { CfnTemplate } from '../../synth/definitions.ts';
import type { ResolverEnvironment } from './resource-types.ts';
import {
  type NamedPolicy,
  type PolicyDocument,
  resourcePolicyOf,
  rolePoliciesOf,
} from './template-policies.ts';
import { type CfnTemplateLike, FAKE_ENVIRONMENT, TemplateResolver } from './template-resolver.ts';

export type { NamedPolicy, PolicyDocument } from './template-policies.ts';

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
  readonly environment: ResolverEnvironment;
  /** By handler file (`lambdas/<workflow>/<file>.ts`), read from each function's description. */
  readonly functions: Readonly<Record<string, FunctionIdentity>>;
  /** Bucket, queue, topic, key and secret policies, by the ARN of what they govern. */
  readonly resourcePolicies: Readonly<Record<string, PolicyDocument>>;
  /** Physical names of the buckets the functions' environment names (local `pipeline-input`...). */
  readonly buckets: { readonly input?: string; readonly results?: string };
  /** ARNs of the secrets the stack rotates (what `npm start -- rotate` rotates). */
  readonly rotatedSecrets: readonly string[];
}

const HANDLER_DESCRIPTION = /lambdas\/[\w-]+\/([\w-]+)\.ts$/;

/** The types whose resource policy the evaluator applies to a handler's calls on them. */
const GOVERNED_TYPES = new Set([
  'AWS::S3::Bucket',
  'AWS::SQS::Queue',
  'AWS::SNS::Topic',
  'AWS::KMS::Key',
  'AWS::SecretsManager::Secret',
]);

function refTo(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'Ref' in value) return String((value as { Ref: unknown }).Ref);
  if (value && typeof value === 'object' && 'Fn::GetAtt' in value) {
    return String((value as { 'Fn::GetAtt': unknown[] })['Fn::GetAtt'][0]);
  }
  return undefined;
}

/** The evaluator's view of `template`; a template without functions (a test's) yields an empty one. */
export function iamViewOf(
  template: CfnTemplate,
  environment: ResolverEnvironment = FAKE_ENVIRONMENT,
): IamView {
  const resolver = new TemplateResolver(
    { ...template, Resources: template.Resources ?? {} } as CfnTemplateLike,
    environment,
  );
  const text = (value: unknown, what: string) => resolver.resolveString(value, what);
  const resources = Object.entries(resolver.template.Resources);
  const resourcePolicies: Record<string, PolicyDocument> = {};
  const buckets: { input?: string; results?: string } = {};
  const rotatedSecrets: string[] = [];
  const functions: Record<string, FunctionIdentity> = {};
  for (const [logicalId, resource] of resources) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::SecretsManager::RotationSchedule') {
      rotatedSecrets.push(text(props.SecretId, `${logicalId}.SecretId`));
    } else if (GOVERNED_TYPES.has(resource.Type)) {
      const policy = resourcePolicyOf(resolver, logicalId);
      if (policy) resourcePolicies[resolver.arn(logicalId)] = policy;
    }
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const handler = HANDLER_DESCRIPTION.exec(String(props.Description ?? ''))?.[1];
    const roleId = refTo(props.Role);
    if (handler === undefined || roleId === undefined) continue;
    const { policies, outsideManagedPolicyArns } = rolePoliciesOf(resolver, roleId);
    functions[handler] = {
      functionName: resolver.ref(logicalId),
      roleName: resolver.ref(roleId),
      roleArn: resolver.arn(roleId),
      policies,
      managedPolicyArns: outsideManagedPolicyArns,
    };
    const variables =
      (props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    if (variables[ENV.inputBucket] !== undefined)
      buckets.input ??= text(variables[ENV.inputBucket], `${logicalId} ${ENV.inputBucket}`);
    if (variables[ENV.resultsBucket] !== undefined)
      buckets.results ??= text(variables[ENV.resultsBucket], `${logicalId} ${ENV.resultsBucket}`);
  }
  return { environment, functions, resourcePolicies, buckets, rotatedSecrets };
}
