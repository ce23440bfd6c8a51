/**
 * How an AWS service's delivery into a resource of ours is authorized, as IAM requests to simulate:
 * a service principal against the target's resource policy (and the target's KMS key policy), or
 * a role the service assumes (trust policy, then the role's identity policies). Each request carries
 * the condition keys AWS sends for it, and where AWS sends aws:SourceArn/aws:SourceAccount, the same
 * request from another account's source must be refused (the confused-deputy check).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import {
  identityPoliciesOf,
  type NamedPolicy,
  type PolicyDocument,
  resourcePolicyFor,
} from '../../local/services/iam/template-policies.ts';
import type { TemplateResolver } from '../../local/services/iam/template-resolver.ts';

export type Context = Readonly<Record<string, string>>;

export interface Check {
  readonly label: string;
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  readonly context: Context;
  readonly resourcePolicy: PolicyDocument | undefined;
  readonly identityPolicies: readonly NamedPolicy[];
  /** The same request on behalf of another account's source: must not be allowed. */
  readonly foreignContext?: Context;
}

export const FOREIGN_ACCOUNT = '999999999999';

/** What a delivering service writes, per target resource type. */
const DELIVERY_ACTION: Readonly<Record<string, string>> = {
  'AWS::SNS::Topic': 'sns:Publish',
  'AWS::SQS::Queue': 'sqs:SendMessage',
  'AWS::Lambda::Function': 'lambda:InvokeFunction',
  'AWS::S3::Bucket': 's3:PutObject',
  'AWS::Events::EventBus': 'events:PutEvents',
  'AWS::StepFunctions::StateMachine': 'states:StartExecution',
};

/**
 * Services whose KMS calls on an encrypted SNS topic or SQS queue carry no aws:SourceArn or
 * aws:SourceAccount: for EventBridge, AWS documents these keys as unsupported in the key policy
 * (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services),
 * so a key statement conditioned on them never matches and only an unconditioned one lets it in.
 */
const KMS_WITHOUT_SOURCE_KEYS = new Set(['events.amazonaws.com']);

/** Where the delivery lands: the resource's logical ID and type, from a resolved ARN. */
export function targetOf(
  resolver: TemplateResolver,
  arn: string,
  what: string,
): { id: string; type: string } {
  // A qualified function ARN (alias or version) is still the function's resource policy.
  // An S3 object ARN lands in its bucket.
  const unqualified = arn
    .replace(/^(arn:[^:]+:lambda:[^:]+:\d+:function:[^:]+):.+$/, '$1')
    .replace(/^(arn:[^:]+:s3:::[^/]+)\/.*$/, '$1');
  const id = resolver.logicalIdOfArn(unqualified);
  if (!id) throw new Error(`${what} delivers to ${arn}, which is no resource of this template: no model`);
  return { id, type: resolver.resource(id).Type };
}

export function actionFor(type: string, what: string): string {
  const action = DELIVERY_ACTION[type];
  if (!action) throw new Error(`${what} delivers to a ${type}: no model of that delivery`);
  return action;
}

/** The request a service makes on behalf of `sourceArn`, with the keys AWS sends. */
export function sourceContext(resolver: TemplateResolver, sourceArn: string): Context {
  return {
    'aws:SourceArn': sourceArn,
    'aws:SourceAccount': resolver.env.account,
    'aws:SecureTransport': 'true',
  };
}

/** The same source name in another account (S3 bucket ARNs have no account: another bucket). */
export function foreignContext(resolver: TemplateResolver, sourceArn: string): Context {
  const parts = sourceArn.split(':');
  if (parts[4] === '') parts[5] = `${parts[5]}-${FOREIGN_ACCOUNT}`;
  else parts[4] = FOREIGN_ACCOUNT;
  return {
    ...sourceContext(resolver, sourceArn),
    'aws:SourceArn': parts.join(':'),
    'aws:SourceAccount': FOREIGN_ACCOUNT,
  };
}

/**
 * The KMS key a topic or queue is encrypted with: a key of this template (its logical ID), none,
 * or an AWS managed key (alias/aws/...), whose policy no one can change.
 */
export function encryptionOf(
  resolver: TemplateResolver,
  target: { id: string; type: string },
): { kind: 'none' } | { kind: 'template'; keyId: string } | { kind: 'aws-managed'; key: string } {
  const props = resolver.resource(target.id).Properties ?? {};
  if (target.type !== 'AWS::SNS::Topic' && target.type !== 'AWS::SQS::Queue') return { kind: 'none' };
  if (props.KmsMasterKeyId === undefined) return { kind: 'none' };
  const key = resolver.resolveString(props.KmsMasterKeyId, `${target.id}.KmsMasterKeyId`);
  if (/(^|:)alias\/aws\//.test(key)) return { kind: 'aws-managed', key };
  const keyId =
    resolver.logicalIdOfArn(key) ??
    Object.keys(resolver.template.Resources).find(
      (id) => resolver.resource(id).Type === 'AWS::KMS::Key' && resolver.ref(id) === key,
    );
  if (!keyId)
    throw new Error(`${target.id} is encrypted with ${key}, which is no key of this template: no model`);
  return { kind: 'template', keyId };
}

/**
 * A service principal writes to the target itself (resource policy), and, if the target is
 * encrypted with our key, uses the key through the target's service (key policy).
 */
export function serviceChecks(
  resolver: TemplateResolver,
  service: string,
  sourceArn: string,
  targetArn: string,
  what: string,
  problems: string[],
): Check[] {
  const target = targetOf(resolver, targetArn, what);
  const context = sourceContext(resolver, sourceArn);
  const foreign = foreignContext(resolver, sourceArn);
  const checks: Check[] = [
    {
      label: `${service} ${actionFor(target.type, what)} on ${target.id}`,
      principal: service,
      action: actionFor(target.type, what),
      resource: targetArn,
      context,
      resourcePolicy: resourcePolicyFor(resolver, targetArn),
      identityPolicies: [],
      foreignContext: foreign,
    },
  ];
  const encryption = encryptionOf(resolver, target);
  if (encryption.kind === 'aws-managed')
    problems.push(
      `${what}: ${target.id} is encrypted with the AWS managed key ${encryption.key}, whose key policy cannot let ${service} use it; ` +
        'use a customer managed key (https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services)',
    );
  if (encryption.kind === 'template') {
    const keyArn = resolver.arn(encryption.keyId);
    const sendsKeys = !KMS_WITHOUT_SOURCE_KEYS.has(service);
    for (const action of ['kms:GenerateDataKey', 'kms:Decrypt'])
      checks.push({
        label: `${service} ${action} on ${encryption.keyId} (encrypts ${target.id})`,
        principal: service,
        action,
        resource: keyArn,
        context: sendsKeys ? context : { 'aws:SecureTransport': 'true' },
        resourcePolicy: resourcePolicyFor(resolver, keyArn),
        identityPolicies: [],
        ...(sendsKeys ? { foreignContext: foreign } : {}),
      });
  }
  return checks;
}

/** The role's ARN and logical ID, from a RoleArn value. */
export function roleOf(
  resolver: TemplateResolver,
  roleArn: unknown,
  what: string,
): { id: string; arn: string } {
  const arn = resolver.resolveString(roleArn, `${what} RoleArn`);
  const id = resolver.logicalIdOfArn(arn);
  if (!id || resolver.resource(id).Type !== 'AWS::IAM::Role')
    throw new Error(`${what} runs as ${arn}, which is no role of this template: no model`);
  return { id, arn };
}

/** `service` may assume the role on behalf of `sourceArn`, and only for our account. */
export function trustCheck(
  resolver: TemplateResolver,
  service: string,
  role: { id: string; arn: string },
  sourceArn: string,
): Check {
  return {
    label: `${service} sts:AssumeRole on ${role.id}`,
    principal: service,
    action: 'sts:AssumeRole',
    resource: role.arn,
    context: sourceContext(resolver, sourceArn),
    resourcePolicy: resourcePolicyFor(resolver, role.arn),
    identityPolicies: [],
    foreignContext: foreignContext(resolver, sourceArn),
  };
}

/** The role performs `action` on the target (identity policies, plus the target's resource policy and key). */
export function roleChecks(
  resolver: TemplateResolver,
  role: { id: string; arn: string },
  action: string,
  targetArn: string,
  what: string,
): Check[] {
  const target = targetOf(resolver, targetArn, what);
  const identityPolicies = identityPoliciesOf(resolver, role.id);
  const checks: Check[] = [
    {
      label: `${role.id} ${action} on ${target.id}`,
      principal: role.arn,
      action,
      resource: targetArn,
      context: { 'aws:SecureTransport': 'true' },
      resourcePolicy: resourcePolicyFor(resolver, targetArn),
      identityPolicies,
    },
  ];
  const encryption = encryptionOf(resolver, target);
  if (encryption.kind === 'template') {
    const keyArn = resolver.arn(encryption.keyId);
    for (const kmsAction of ['kms:GenerateDataKey', 'kms:Decrypt'])
      checks.push({
        label: `${role.id} ${kmsAction} on ${encryption.keyId} (encrypts ${target.id})`,
        principal: role.arn,
        action: kmsAction,
        resource: keyArn,
        context: { 'aws:SecureTransport': 'true' },
        resourcePolicy: resourcePolicyFor(resolver, keyArn),
        identityPolicies,
      });
  }
  return checks;
}

export type Decision = 'Allowed' | 'ImplicitlyDenied' | 'ExplicitlyDenied';

/** The decision of IAM for one request; a request the simulator rejects is an error naming it. */
export async function simulate(check: Check, context: Context, account: string): Promise<Decision> {
  const response = await runSimulation(
    {
      request: {
        principal: check.principal,
        action: check.action,
        resource: { resource: check.resource, accountId: account },
        contextVariables: { ...context },
      },
      identityPolicies: check.identityPolicies.map((p) => ({ name: p.name, policy: p.policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(check.resourcePolicy ? { resourcePolicy: check.resourcePolicy } : {}),
    },
    {},
  );
  if (response.resultType === 'error')
    throw new Error(`${check.label}: the simulator refused the request: ${JSON.stringify(response.errors)}`);
  return response.overallResult as Decision;
}

export interface Delivery {
  /** e.g. "AWS::Events::Rule IntakeListUploaded Targets[0].DeadLetterConfig" */
  readonly path: string;
  readonly service: string;
  readonly from: string;
  /** Logical ID of the resource delivered to, or a name of AWS's (the default event bus, an email). */
  readonly to: string;
  readonly checks: readonly Check[];
  /** Violations of AWS rules found without simulation (e.g. an AWS managed key). */
  readonly problems: readonly string[];
}

/** A property that may hold one value or a list, as a list. */
export const list = (value: unknown): unknown[] =>
  value === undefined ? [] : ([] as unknown[]).concat(value);

/** A delivery whose checks `build` makes, collecting the problems it finds on the way. */
export function delivery(
  path: string,
  service: string,
  from: string,
  to: string,
  build: (problems: string[]) => Check[],
): Delivery {
  const problems: string[] = [];
  return { path, service, from, to, checks: build(problems), problems };
}
