/**
 * Resolves a synthesized template's intrinsics (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select,
 * Fn::Split) to concrete values, as CloudFormation would after creating the stack: every resource
 * gets a deterministic fake physical name and ARN in one fixed account, region and partition. The
 * IAM evaluator needs concrete ARNs: a policy simulator matches strings, not intrinsics.
 *
 * What Ref and Fn::GetAtt return per resource type follows each type's "Return values" section in
 * the CloudFormation reference, e.g.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-s3-bucket.html
 */
import type { CfnTemplate } from '../definitions.ts';

export interface StackEnvironment {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  readonly stackName: string;
}

/** The environment every local evaluation pretends the stack was deployed to. */
export const LOCAL_STACK: StackEnvironment = {
  account: '111122223333',
  region: 'eu-west-1',
  partition: 'aws',
  stackName: 'SecurityPipeline',
};

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/** Ref and the attributes of one resource. */
interface PhysicalResource {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** `SecurityPipeline-StorageResultsB2A4FB2E` lowercased, as CloudFormation names unnamed resources. */
function generatedName(env: StackEnvironment, logicalId: string, lower = false): string {
  const name = `${env.stackName}-${logicalId}`;
  return lower ? name.toLowerCase() : name;
}

function physicalOf(env: StackEnvironment, logicalId: string, resource: Resource): PhysicalResource {
  const { account, region, partition } = env;
  const props = resource.Properties ?? {};
  const named = (field: string, lower = false): string =>
    typeof props[field] === 'string' ? (props[field] as string) : generatedName(env, logicalId, lower);
  const arn = (service: string, rest: string) => `arn:${partition}:${service}:${region}:${account}:${rest}`;
  switch (resource.Type) {
    case 'AWS::S3::Bucket': {
      const name = named('BucketName', true);
      return { ref: name, attributes: { Arn: `arn:${partition}:s3:::${name}` } };
    }
    case 'AWS::IAM::Role': {
      const name = named('RoleName');
      return { ref: name, attributes: { Arn: `arn:${partition}:iam::${account}:role/${name}` } };
    }
    case 'AWS::Lambda::Function': {
      const name = named('FunctionName');
      return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
    }
    case 'AWS::SecretsManager::Secret': {
      // Secrets Manager appends six random characters to the name in the ARN.
      const secretArn = arn('secretsmanager', `secret:${named('Name')}-AbCdEf`);
      return { ref: secretArn, attributes: { Id: secretArn } };
    }
    case 'AWS::SQS::Queue': {
      const name = named('QueueName');
      return {
        ref: `https://sqs.${region}.amazonaws.com/${account}/${name}`,
        attributes: { Arn: arn('sqs', name), QueueName: name },
      };
    }
    case 'AWS::SNS::Topic': {
      const topicArn = arn('sns', named('TopicName'));
      return { ref: topicArn, attributes: { TopicArn: topicArn } };
    }
    case 'AWS::KMS::Key': {
      const id = `00000000-0000-4000-8000-${logicalId
        .toLowerCase()
        .replace(/[^0-9a-f]/g, '0')
        .slice(-12)
        .padStart(12, '0')}`;
      return { ref: id, attributes: { Arn: arn('kms', `key/${id}`), KeyId: id } };
    }
    case 'AWS::StepFunctions::StateMachine': {
      const name = named('StateMachineName');
      const machineArn = arn('states', `stateMachine:${name}`);
      return { ref: machineArn, attributes: { Arn: machineArn, Name: name } };
    }
    case 'AWS::Events::Rule': {
      const name = named('Name');
      return { ref: name, attributes: { Arn: arn('events', `rule/${name}`) } };
    }
    case 'AWS::SSM::Parameter': {
      const name = named('Name');
      return {
        ref: name,
        attributes: { Type: String(props.Type ?? 'String'), Value: String(props.Value ?? '') },
      };
    }
    case 'AWS::Logs::LogGroup': {
      const name = named('LogGroupName');
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    }
    case 'AWS::Scheduler::Schedule': {
      const name = named('Name');
      return { ref: name, attributes: { Arn: arn('scheduler', `schedule/default/${name}`) } };
    }
    default:
      return { ref: generatedName(env, logicalId), attributes: {} };
  }
}

export type Resolver = (value: unknown) => unknown;

/** A resolver over `template`'s resources in `env`; an intrinsic it cannot resolve is an error naming it. */
export function templateResolver(template: CfnTemplate, env: StackEnvironment = LOCAL_STACK): Resolver {
  const resources = (template.Resources ?? {}) as Record<string, Resource>;
  const physical = new Map<string, PhysicalResource>();
  const physicalFor = (logicalId: string): PhysicalResource => {
    const resource = resources[logicalId];
    if (!resource)
      throw new Error(`the template has no resource '${logicalId}' (referenced by an intrinsic)`);
    let found = physical.get(logicalId);
    if (!found) {
      found = physicalOf(env, logicalId, resource);
      physical.set(logicalId, found);
    }
    return found;
  };
  const pseudo: Record<string, string> = {
    'AWS::AccountId': env.account,
    'AWS::Region': env.region,
    'AWS::Partition': env.partition,
    'AWS::StackName': env.stackName,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackId': `arn:${env.partition}:cloudformation:${env.region}:${env.account}:stack/${env.stackName}/00000000-0000-4000-8000-000000000000`,
  };
  const ref = (name: string): string => pseudo[name] ?? physicalFor(name).ref;
  const getAtt = (logicalId: string, attribute: string): string => {
    const value = physicalFor(logicalId).attributes[attribute];
    if (value === undefined) {
      throw new Error(
        `cannot resolve Fn::GetAtt ${logicalId}.${attribute}: no local value for that attribute`,
      );
    }
    return value;
  };
  const text = (value: unknown): string => {
    const resolved = resolve(value);
    if (typeof resolved !== 'string' && typeof resolved !== 'number') {
      throw new Error(`expected a string, got ${JSON.stringify(resolved).slice(0, 120)}`);
    }
    return String(resolved);
  };
  const sub = (args: unknown): string => {
    const [pattern, variables]: [unknown, Record<string, unknown>] = Array.isArray(args)
      ? (args as [string, Record<string, unknown>])
      : [args, {}];
    return String(pattern).replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
      if (name in variables) return text(variables[name]);
      const dot = name.indexOf('.');
      return dot > 0 ? getAtt(name.slice(0, dot), name.slice(dot + 1)) : ref(name);
    });
  };
  function resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1) {
      const [key] = keys as [string];
      const args = record[key];
      switch (key) {
        case 'Ref':
          return ref(String(args));
        case 'Fn::GetAtt': {
          const [logicalId, attribute] = Array.isArray(args) ? args : String(args).split('.');
          return getAtt(String(logicalId), String(attribute));
        }
        case 'Fn::Join': {
          const [separator, parts] = args as [string, unknown[]];
          return (resolve(parts) as unknown[]).map((part) => text(part)).join(separator);
        }
        case 'Fn::Sub':
          return sub(args);
        case 'Fn::Select': {
          const [index, list] = args as [number | string, unknown];
          const items = resolve(list) as unknown[];
          return items[Number(index)];
        }
        case 'Fn::Split': {
          const [separator, source] = args as [string, unknown];
          return text(source).split(separator);
        }
        default:
          if (key.startsWith('Fn::')) throw new Error(`the IAM evaluator cannot resolve ${key}`);
      }
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolve(v)]));
  }
  return resolve;
}
