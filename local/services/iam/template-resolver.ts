/**
 * Resolves a synthesized CloudFormation template to the concrete strings a deployment would see,
 * so IAM policies (and the ARNs they name) can be evaluated offline by an IAM simulator.
 *
 * Every resource gets a deterministic fake physical name (its explicit name property when the
 * template sets one, else `<stack>-<logicalId>`), in a fixed account, region and partition. Ref,
 * Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::Base64 and the pseudo parameters
 * resolve as CloudFormation would resolve them, with the Ref/GetAtt return values each resource
 * type documents (Ref of a topic is its ARN, of a queue its URL, of a function its name...).
 * Anything it has no model for (a resource type, an attribute, Fn::If) is an error naming it,
 * never a guess: a wrong ARN would make a policy check pass or fail for the wrong reason.
 * The per-type model is in resource-types.ts.
 */
import { keyId, type Named, type ResolverEnvironment, TYPES, type TypeModel } from './resource-types.ts';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

export interface CfnTemplateLike {
  readonly Resources: Record<string, CfnResource>;
  readonly Parameters?: Record<string, { readonly Type?: string; readonly Default?: unknown }>;
}

/** The fixed environment every offline policy check runs in. */
export const FAKE_ENVIRONMENT: ResolverEnvironment = {
  account: '123456789012',
  region: 'us-east-1',
  partition: 'aws',
  stackName: 'SecurityPipeline',
};

/** Removed from the list or object that holds it, as CloudFormation removes AWS::NoValue. */
const NO_VALUE = Symbol('AWS::NoValue');

export class TemplateResolver {
  readonly env: ResolverEnvironment;
  private readonly names = new Map<string, string>();

  constructor(
    readonly template: CfnTemplateLike,
    env: ResolverEnvironment = FAKE_ENVIRONMENT,
  ) {
    this.env = env;
  }

  /** The resource, or an error naming the logical ID that is not in the template. */
  resource(logicalId: string): CfnResource {
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`template-resolver: no resource ${logicalId} in the template`);
    return resource;
  }

  /** What `{ Ref: logicalId }` returns: a resource's documented Ref value, or a parameter's. */
  ref(logicalId: string): string {
    const pseudo = this.pseudo(logicalId);
    if (pseudo !== undefined) return pseudo;
    const parameter = this.template.Parameters?.[logicalId];
    if (parameter) return this.parameter(logicalId, parameter);
    const n = this.named(logicalId);
    const { ref } = this.model(logicalId);
    if (ref === 'name') return n.name;
    if (ref === 'arn') return this.arn(logicalId);
    return ref(n);
  }

  /** What `{ "Fn::GetAtt": [logicalId, attribute] }` returns. */
  getAtt(logicalId: string, attribute: string): string {
    const model = this.model(logicalId);
    if (attribute === 'Arn' && model.arn) return model.arn(this.named(logicalId));
    const attr = model.attributes?.[attribute];
    if (!attr)
      throw new Error(
        `template-resolver: no model of Fn::GetAtt ${logicalId}.${attribute} (${this.resource(logicalId).Type}); add it to TYPES`,
      );
    return attr(this.named(logicalId));
  }

  /** The resource's ARN (also for types whose Arn is not a GetAtt attribute, e.g. SSM parameters). */
  arn(logicalId: string): string {
    const model = this.model(logicalId);
    if (!model.arn)
      throw new Error(`template-resolver: ${logicalId} (${this.resource(logicalId).Type}) has no ARN model`);
    return model.arn(this.named(logicalId));
  }

  /** The logical ID of the resource whose ARN is `arn`, if any resource of the template has it. */
  logicalIdOfArn(arn: string): string | undefined {
    for (const [id, resource] of Object.entries(this.template.Resources)) {
      if (TYPES[resource.Type]?.arn && this.arn(id) === arn) return id;
    }
    return undefined;
  }

  /** Resolves every intrinsic function and pseudo parameter in `value`, deeply. */
  resolve(value: unknown): unknown {
    const resolved = this.resolveValue(value);
    return resolved === NO_VALUE ? undefined : resolved;
  }

  /** Resolves `value`, which must come out as a string; `what` names it in the error. */
  resolveString(value: unknown, what: string): string {
    const resolved = this.resolve(value);
    if (typeof resolved !== 'string')
      throw new Error(`template-resolver: ${what} resolves to ${JSON.stringify(resolved)}, not a string`);
    return resolved;
  }

  private resolveValue(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolveValue(v)).filter((v) => v !== NO_VALUE);
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const intrinsic = keys.length === 1 ? keys[0] : undefined;
    if (intrinsic === 'Ref') {
      if (record.Ref === 'AWS::NoValue') return NO_VALUE;
      return this.ref(this.literal(record.Ref, 'Ref'));
    }
    if (intrinsic?.startsWith('Fn::') || intrinsic === 'Condition')
      return this.intrinsic(intrinsic, record[intrinsic]);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(record)) {
      const resolved = this.resolveValue(v);
      if (resolved !== NO_VALUE) out[key] = resolved;
    }
    return out;
  }

  private intrinsic(name: string, args: unknown): unknown {
    switch (name) {
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(args)
          ? (args as unknown[]).map((a) => this.resolveValue(a))
          : this.literal(args, name).split(/\.(.*)/s);
        return this.getAtt(this.literal(id, name), this.literal(attribute, name));
      }
      case 'Fn::Join': {
        const [separator, parts] = this.pair(name, args);
        return this.strings(name, this.resolveValue(parts)).join(this.literal(separator, name));
      }
      case 'Fn::Sub': {
        const [text, vars] = Array.isArray(args) ? this.pair(name, args) : [args, {}];
        return this.sub(this.literal(text, name), this.resolveValue(vars) as Record<string, unknown>);
      }
      case 'Fn::Select': {
        const [index, list] = this.pair(name, args);
        const items = this.resolveValue(list);
        const i = Number(this.resolveValue(index));
        if (!Array.isArray(items) || !Number.isInteger(i) || i < 0 || i >= items.length)
          throw new Error(
            `template-resolver: Fn::Select index ${String(index)} out of ${JSON.stringify(items)}`,
          );
        return items[i];
      }
      case 'Fn::Split': {
        const [separator, text] = this.pair(name, args);
        const source = this.resolveValue(text);
        if (typeof source !== 'string')
          throw new Error(`template-resolver: Fn::Split of ${JSON.stringify(source)}, not a string`);
        return source.split(this.literal(separator, name));
      }
      case 'Fn::Base64':
        return Buffer.from(this.literal(this.resolveValue(args), name)).toString('base64');
      default:
        throw new Error(
          `template-resolver: ${name} is not supported (conditions, imports and AZ lists have no single offline value)`,
        );
    }
  }

  /** `${Name}`, `${Name.Attr}` and pseudo parameters; `${!Literal}` stays `${Literal}`. */
  private sub(text: string, vars: Record<string, unknown>): string {
    return text.replace(/\$\{([^}]*)\}/g, (_match, inner: string) => {
      if (inner.startsWith('!')) return `\${${inner.slice(1)}}`;
      const name = inner.trim();
      if (name in vars) return this.literal(vars[name], `Fn::Sub variable ${name}`);
      const dot = name.indexOf('.');
      if (dot > 0 && !name.startsWith('AWS::')) return this.getAtt(name.slice(0, dot), name.slice(dot + 1));
      return this.ref(name);
    });
  }

  private pseudo(name: string): string | undefined {
    const { account, region, partition, stackName } = this.env;
    switch (name) {
      case 'AWS::AccountId':
        return account;
      case 'AWS::Region':
        return region;
      case 'AWS::Partition':
        return partition;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return stackName;
      case 'AWS::StackId':
        return `arn:${partition}:cloudformation:${region}:${account}:stack/${stackName}/${keyId(stackName)}`;
      default:
        return undefined;
    }
  }

  private parameter(name: string, parameter: { Type?: string; Default?: unknown }): string {
    const given = this.env.parameters?.[name];
    if (given !== undefined) return given;
    // An SSM-typed parameter's Default is the parameter's name in SSM, not its value.
    if (parameter.Default !== undefined && !parameter.Type?.startsWith('AWS::SSM::Parameter::Value'))
      return String(parameter.Default);
    throw new Error(`template-resolver: parameter ${name} has no value; pass it in environment.parameters`);
  }

  private model(logicalId: string): TypeModel {
    const { Type } = this.resource(logicalId);
    const model = TYPES[Type];
    if (!model)
      throw new Error(
        `template-resolver: no model of ${Type} (resource ${logicalId}); add its Ref/GetAtt values to TYPES`,
      );
    return model;
  }

  private named(logicalId: string): Named {
    const resource = this.resource(logicalId);
    const properties = resource.Properties ?? {};
    let name = this.names.get(logicalId);
    if (name === undefined) {
      const model = this.model(logicalId);
      const explicit = model.nameProperty ? properties[model.nameProperty] : undefined;
      if (explicit !== undefined) name = this.resolveString(explicit, `${logicalId}.${model.nameProperty}`);
      else {
        const generated = `${this.env.stackName}-${logicalId}`;
        name = model.lowerCase ? generated.toLowerCase() : generated;
      }
      this.names.set(logicalId, name);
    }
    return { name, env: this.env, properties };
  }

  private literal(value: unknown, what: string): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number') return String(value);
    throw new Error(`template-resolver: ${what} expects a string, got ${JSON.stringify(value)}`);
  }

  private pair(name: string, args: unknown): [unknown, unknown] {
    if (!Array.isArray(args) || args.length !== 2)
      throw new Error(`template-resolver: ${name} expects two arguments, got ${JSON.stringify(args)}`);
    return [args[0], args[1]];
  }

  private strings(name: string, value: unknown): string[] {
    if (!Array.isArray(value))
      throw new Error(`template-resolver: ${name} expects a list, got ${JSON.stringify(value)}`);
    return value.map((v) => this.literal(v, name));
  }
}
