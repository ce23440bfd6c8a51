/**
 * The IAM policies a synthesized template attaches, resolved to concrete ARNs: the identity
 * policies of a role, and the resource policy AWS evaluates for an ARN (topic, queue, bucket or
 * object, function, key, role trust). Input for an IAM simulator.
 */
import type { TemplateResolver } from './template-resolver.ts';

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly Record<string, unknown>[];
}

export interface NamedPolicy {
  readonly name: string;
  readonly policy: PolicyDocument;
}

const asList = (value: unknown): unknown[] => (value === undefined ? [] : ([] as unknown[]).concat(value));

function documentOf(resolver: TemplateResolver, value: unknown, what: string): PolicyDocument {
  const document = resolver.resolve(value) as PolicyDocument | undefined;
  if (!document || !Array.isArray(document.Statement))
    throw new Error(`template-policies: ${what} has no policy document with a Statement list`);
  return document;
}

/** Every resource of `type`, as [logicalId, properties]. */
function resourcesOfType(resolver: TemplateResolver, type: string): [string, Record<string, unknown>][] {
  return Object.entries(resolver.template.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => [id, r.Properties ?? {}]);
}

/** A role's policies from the template, and the managed policies it names from outside it. */
export interface RolePolicies {
  readonly policies: NamedPolicy[];
  /** ManagedPolicyArns of no policy in the template (AWS managed ones): their text is not here. */
  readonly outsideManagedPolicyArns: string[];
}

/**
 * The identity policies of a role: its inline Policies and every AWS::IAM::Policy or
 * AWS::IAM::ManagedPolicy of the template attached to it, plus the managed policy ARNs whose text
 * is not in the template (the caller decides whether those may be left out).
 */
export function rolePoliciesOf(resolver: TemplateResolver, roleLogicalId: string): RolePolicies {
  const role = resolver.resource(roleLogicalId);
  if (role.Type !== 'AWS::IAM::Role')
    throw new Error(`template-policies: ${roleLogicalId} is a ${role.Type}, not an AWS::IAM::Role`);
  const properties = role.Properties ?? {};
  const roleName = resolver.ref(roleLogicalId);
  const policies: NamedPolicy[] = [];
  for (const inline of asList(properties.Policies) as { PolicyName: unknown; PolicyDocument: unknown }[]) {
    const name = resolver.resolveString(inline.PolicyName, `${roleLogicalId} inline policy name`);
    policies.push({
      name,
      policy: documentOf(resolver, inline.PolicyDocument, `${roleLogicalId} policy ${name}`),
    });
  }
  const managedArns = asList(resolver.resolve(properties.ManagedPolicyArns)) as string[];
  const outsideManagedPolicyArns = managedArns.filter((arn) => !resolver.logicalIdOfArn(arn));
  for (const type of ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']) {
    for (const [id, props] of resourcesOfType(resolver, type)) {
      const roles = asList(resolver.resolve(props.Roles));
      const managedArn = type === 'AWS::IAM::ManagedPolicy' ? resolver.arn(id) : undefined;
      const viaArn = managedArn !== undefined && managedArns.includes(managedArn);
      if (roles.includes(roleName) || viaArn)
        policies.push({ name: id, policy: documentOf(resolver, props.PolicyDocument, id) });
    }
  }
  return { policies, outsideManagedPolicyArns };
}

/**
 * The identity policies of a role (rolePoliciesOf). A managed policy from outside the template
 * (ManagedPolicyArns) has no text here, so it is an error rather than silently missing.
 */
export function identityPoliciesOf(resolver: TemplateResolver, roleLogicalId: string): NamedPolicy[] {
  const { policies, outsideManagedPolicyArns } = rolePoliciesOf(resolver, roleLogicalId);
  const [arn] = outsideManagedPolicyArns;
  if (arn !== undefined)
    throw new Error(
      `template-policies: role ${roleLogicalId} uses managed policy ${arn}, whose text is not in the template`,
    );
  return policies;
}

/** Merges the documents of every policy resource of `type` whose `listProperty` names `target`. */
function attachedDocuments(
  resolver: TemplateResolver,
  type: string,
  listProperty: string,
  target: string,
): PolicyDocument | undefined {
  const statements: Record<string, unknown>[] = [];
  for (const [id, props] of resourcesOfType(resolver, type)) {
    if (!asList(resolver.resolve(props[listProperty])).includes(target)) continue;
    statements.push(...documentOf(resolver, props.PolicyDocument, id).Statement);
  }
  return statements.length === 0 ? undefined : { Version: '2012-10-17', Statement: statements };
}

/**
 * A function's resource policy as Lambda builds it from AddPermission: SourceArn becomes an
 * ArnLike condition and SourceAccount a StringEquals on aws:SourceAccount.
 * https://docs.aws.amazon.com/lambda/latest/dg/access-control-resource-based.html
 */
function lambdaPolicy(resolver: TemplateResolver, functionLogicalId: string): PolicyDocument | undefined {
  const name = resolver.ref(functionLogicalId);
  const arn = resolver.arn(functionLogicalId);
  const statements: Record<string, unknown>[] = [];
  for (const [id, props] of resourcesOfType(resolver, 'AWS::Lambda::Permission')) {
    const target = resolver.resolveString(props.FunctionName, `${id}.FunctionName`);
    if (target !== name && target !== arn) continue;
    const unmodelled = Object.keys(props).filter(
      (k) => !['Action', 'FunctionName', 'Principal', 'SourceArn', 'SourceAccount'].includes(k),
    );
    if (unmodelled.length > 0)
      throw new Error(
        `template-policies: ${id} sets ${unmodelled.join(', ')}, which this model does not evaluate`,
      );
    const principal = resolver.resolveString(props.Principal, `${id}.Principal`);
    const condition: Record<string, Record<string, string>> = {};
    if (props.SourceArn !== undefined)
      condition.ArnLike = { 'AWS:SourceArn': resolver.resolveString(props.SourceArn, `${id}.SourceArn`) };
    if (props.SourceAccount !== undefined)
      condition.StringEquals = {
        'AWS:SourceAccount': resolver.resolveString(props.SourceAccount, `${id}.SourceAccount`),
      };
    statements.push({
      Sid: id,
      Effect: 'Allow',
      Principal: principal.endsWith('.amazonaws.com') ? { Service: principal } : { AWS: principal },
      Action: resolver.resolveString(props.Action, `${id}.Action`),
      Resource: arn,
      ...(Object.keys(condition).length > 0 ? { Condition: condition } : {}),
    });
  }
  return statements.length === 0 ? undefined : { Version: '2012-10-17', Statement: statements };
}

/**
 * The resource policy AWS evaluates for a request on `arn` (an S3 object ARN maps to its bucket's
 * policy), or undefined when the resource has none. A resource of a type this model does not know,
 * or an ARN of no resource in the template, is an error.
 */
export function resourcePolicyFor(resolver: TemplateResolver, arn: string): PolicyDocument | undefined {
  const s3Object = /^arn:[^:]+:s3:::([^/]+)\//.exec(arn);
  const logicalId = resolver.logicalIdOfArn(
    s3Object ? `arn:${resolver.env.partition}:s3:::${s3Object[1]}` : arn,
  );
  if (!logicalId) throw new Error(`template-policies: no resource of the template has the ARN ${arn}`);
  return resourcePolicyOf(resolver, logicalId);
}

/**
 * The resource policy of the template's resource `logicalId`, or undefined when it has none; a
 * resource of a type this model does not know is an error.
 */
export function resourcePolicyOf(resolver: TemplateResolver, logicalId: string): PolicyDocument | undefined {
  const resource = resolver.resource(logicalId);
  const props = resource.Properties ?? {};
  switch (resource.Type) {
    case 'AWS::SNS::Topic':
      return attachedDocuments(resolver, 'AWS::SNS::TopicPolicy', 'Topics', resolver.ref(logicalId));
    case 'AWS::SQS::Queue':
      return attachedDocuments(resolver, 'AWS::SQS::QueuePolicy', 'Queues', resolver.ref(logicalId));
    case 'AWS::S3::Bucket':
      return attachedDocuments(resolver, 'AWS::S3::BucketPolicy', 'Bucket', resolver.ref(logicalId));
    case 'AWS::Lambda::Function':
      return lambdaPolicy(resolver, logicalId);
    case 'AWS::KMS::Key':
      return documentOf(resolver, props.KeyPolicy, `${logicalId}.KeyPolicy`);
    case 'AWS::IAM::Role':
      return documentOf(resolver, props.AssumeRolePolicyDocument, `${logicalId}.AssumeRolePolicyDocument`);
    case 'AWS::Logs::LogGroup':
    case 'AWS::SSM::Parameter':
    case 'AWS::StepFunctions::StateMachine':
    case 'AWS::Events::Rule':
    case 'AWS::Scheduler::Schedule':
    case 'AWS::CloudWatch::Alarm':
      // These types have no resource policy in CloudFormation (log groups use account-level ones).
      return undefined;
    case 'AWS::SecretsManager::Secret': {
      const policies = resourcesOfType(resolver, 'AWS::SecretsManager::ResourcePolicy').filter(
        ([, p]) => resolver.resolve(p.SecretId) === resolver.arn(logicalId),
      );
      return policies.length === 0
        ? undefined
        : {
            Version: '2012-10-17',
            Statement: policies.flatMap(([id, p]) => documentOf(resolver, p.ResourcePolicy, id).Statement),
          };
    }
    default:
      throw new Error(`template-policies: no resource-policy model for ${resource.Type} (${logicalId})`);
  }
}
