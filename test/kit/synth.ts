/**
 * Helpers for the CDK assertion tests: synthesize the stack (asset bundling skipped, cdk.json's
 * feature flags applied as in `cdk synth`), read the state machine definitions back as JSON, and
 * find resources by intent (handler file, state name) rather than by hashed logical IDs.
 */
import type { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { cdkSynthApp } from '../../local/synth/synth.ts';
import { testOutdir } from './synth-outdir.ts';

type Json = Record<string, unknown>;

/**
 * An App like the one `cdk synth` builds from cdk.json, as the local runner builds it
 * (local/synth/synth.ts): asset bundling and the CloudFormation validation plugin are skipped. The plugin
 * was a third of these tests' CPU; test/stack/cloudformation-validation.cdk.test.ts runs it.
 */
export function testApp(): App {
  return cdkSynthApp({ outdir: testOutdir() });
}

export interface Synthesized {
  readonly app: App;
  readonly stack: SecurityPipelineStack;
  readonly template: Template;
  readonly json: { Resources: Record<string, { Type: string; Properties?: Json }> };
}

/**
 * The same configuration synthesizes to the same template, so each worker synthesizes it once:
 * the *.cdk.test.ts files run without per-file isolation (vitest.config.ts), and a whole stack costs seconds of
 * CPU while the default configuration alone is asked for by ten files. Keyed by the parsed
 * configuration, so `synth()` and `synth({})` share one entry. Bounded, as each entry holds a whole
 * construct tree (about 5 MB of heap).
 */
const memo = new Map<string, Synthesized>();
const MEMO_ENTRIES = 16;

/**
 * Synthesizes the stack for `raw` settings (validated by the real config parser), or returns the
 * worker's earlier synthesis of the same settings. What it returns is shared, so it is made
 * read-only: the template JSON is frozen and the construct tree is locked, so a test that tried to
 * change either fails at once instead of leaking into another test. A test that needs to change a
 * stack builds its own with `testApp()`.
 */
export function synth(raw?: PipelineConfigInput): Synthesized {
  const config = parsePipelineConfig(raw, 'test');
  const key = canonicalJson(config);
  const cached = memo.get(key);
  if (cached) {
    // Least recently used goes first: a worker asks for more than MEMO_ENTRIES configurations, and
    // the default one, asked for by a file early and by others late, was evicted and synthesized twice.
    memo.delete(key);
    memo.set(key, cached);
    return cached;
  }
  const app = testApp();
  const stack = new SecurityPipelineStack(app, 'SecurityPipeline', { config });
  const template = Template.fromStack(stack);
  const json = deepFreeze(template.toJSON()) as Synthesized['json'];
  app.node.lock();
  const synthesized: Synthesized = Object.freeze({ app, stack, template, json });
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, synthesized);
  return synthesized;
}

/** JSON with object keys sorted, so two equal configurations give one key whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// State machine definitions
// ---------------------------------------------------------------------------------------------

export interface AslState extends Json {
  readonly Type: string;
}

export interface AslDefinition extends Json {
  readonly StartAt: string;
  readonly States: Record<string, AslState>;
}

/**
 * `DefinitionString` is an `Fn::Join` of literal JSON text and intrinsics (function ARNs, bucket
 * names). Each intrinsic becomes a placeholder naming what it refers to, e.g. `<Ref:Bucket123>`.
 */
export function parseDefinition(definitionString: unknown): AslDefinition {
  return JSON.parse(joinIntrinsics(definitionString)) as AslDefinition;
}

function joinIntrinsics(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(joinIntrinsics).join(',');
  const record = value as Json;
  const join = record['Fn::Join'] as [string, unknown[]] | undefined;
  if (join) return join[1].map(joinIntrinsics).join(join[0]);
  if (typeof record.Ref === 'string') return `<Ref:${record.Ref}>`;
  const getAtt = record['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt) return `<GetAtt:${getAtt[0]}.${getAtt[1]}>`;
  // Other intrinsics (Fn::Select, Fn::Split...) keep their arguments, without JSON quotes.
  const [name, args] = Object.entries(record)[0] ?? ['intrinsic', []];
  return `<${name}(${joinIntrinsics(args)})>`;
}

/** The state machine whose top level has `stateName` (state names are the contract). */
export function stateMachineWith(
  synthesized: Synthesized,
  stateName: string,
): { logicalId: string; properties: Json; definition: AslDefinition } {
  const matches = Object.entries(synthesized.json.Resources)
    .filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine')
    .map(([logicalId, r]) => ({
      logicalId,
      properties: r.Properties ?? {},
      definition: parseDefinition(r.Properties?.DefinitionString),
    }))
    .filter((m) => stateName in m.definition.States);
  if (matches.length !== 1)
    throw new Error(`expected one state machine with state ${stateName}, found ${matches.length}`);
  return matches[0] as { logicalId: string; properties: Json; definition: AslDefinition };
}

/** Every state by name, including those inside Parallel branches and Map processors. */
export function allStates(definition: AslDefinition): Map<string, AslState> {
  const states = new Map<string, AslState>();
  const visit = (def: AslDefinition): void => {
    for (const [name, state] of Object.entries(def.States)) {
      states.set(name, state);
      for (const branch of (state.Branches as AslDefinition[] | undefined) ?? []) visit(branch);
      const processor = state.ItemProcessor as AslDefinition | undefined;
      if (processor) visit(processor);
    }
  };
  visit(definition);
  return states;
}

export function stateNamed(definition: AslDefinition, name: string): AslState {
  const state = allStates(definition).get(name);
  if (!state) throw new Error(`state ${name} not found`);
  return state;
}

export interface AslRetrier {
  readonly ErrorEquals: string[];
  readonly IntervalSeconds?: number;
  readonly MaxAttempts?: number;
  readonly BackoffRate?: number;
  readonly MaxDelaySeconds?: number;
  readonly JitterStrategy?: string;
}

export function retriesOf(state: AslState): AslRetrier[] {
  return (state.Retry as AslRetrier[] | undefined) ?? [];
}

/** Every error name any Retry rule of the state retries. */
export function retriedErrors(state: AslState): string[] {
  return retriesOf(state).flatMap((r) => r.ErrorEquals);
}

// ---------------------------------------------------------------------------------------------
// Functions and their permissions
// ---------------------------------------------------------------------------------------------

export interface FunctionInfo {
  readonly logicalId: string;
  readonly properties: Json;
  readonly roleLogicalId: string;
  readonly environment: Record<string, unknown>;
}

/** The Lambda function built from `lambdas/<workflow>/<handlerFile>.ts` (found by its description). */
export function functionFor(synthesized: Synthesized, handlerFile: string): FunctionInfo {
  const matches = Object.entries(synthesized.json.Resources).filter(
    ([, r]) =>
      r.Type === 'AWS::Lambda::Function' &&
      typeof r.Properties?.Description === 'string' &&
      r.Properties.Description.endsWith(`/${handlerFile}.ts`),
  );
  if (matches.length !== 1)
    throw new Error(`expected one function for ${handlerFile}, found ${matches.length}`);
  const [logicalId, resource] = matches[0] as [string, { Properties: Json }];
  const role = resource.Properties.Role as { 'Fn::GetAtt': [string, string] };
  const env = (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
    ?.Variables;
  return {
    logicalId,
    properties: resource.Properties,
    roleLogicalId: role['Fn::GetAtt'][0],
    environment: env ?? {},
  };
}

export interface Grant {
  readonly actions: string[];
  readonly resources: unknown[];
}

/** Every Allow statement of every policy attached to a role (inline and AWS::IAM::Policy). */
export function grantsOf(synthesized: Synthesized, roleLogicalId: string): Grant[] {
  const grants: Grant[] = [];
  for (const resource of Object.values(synthesized.json.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = (resource.Properties?.Roles as { Ref: string }[] | undefined) ?? [];
    if (!roles.some((r) => r.Ref === roleLogicalId)) continue;
    const document = resource.Properties?.PolicyDocument as { Statement: Json[] };
    for (const statement of document.Statement) {
      if (statement.Effect !== 'Allow') continue;
      const actions = ([] as string[]).concat(statement.Action as string | string[]);
      const resources = ([] as unknown[]).concat(statement.Resource);
      grants.push({ actions, resources });
    }
  }
  return grants;
}

/** The resources (rendered as text) on which the role is allowed `action` (exact action names). */
export function resourcesAllowed(grants: readonly Grant[], action: string): string[] {
  return grants
    .filter(
      (g) =>
        g.actions.includes(action) ||
        g.actions.some((a) => a.endsWith('*') && action.startsWith(a.slice(0, -1))),
    )
    .flatMap((g) => g.resources.map(joinIntrinsics));
}

/** Every action the role may perform on anything. */
export function actionsAllowed(grants: readonly Grant[]): string[] {
  return [...new Set(grants.flatMap((g) => g.actions))];
}

/** The logical ID of the only resource of `type` whose logical ID starts with `prefix`. */
export function logicalIdOfType(synthesized: Synthesized, type: string, prefix: string): string {
  const ids = Object.entries(synthesized.json.Resources)
    .filter(([id, r]) => r.Type === type && id.startsWith(prefix))
    .map(([id]) => id);
  if (ids.length !== 1)
    throw new Error(`expected one ${type} starting with ${prefix}, found ${ids.join(', ')}`);
  return ids[0] as string;
}

/**
 * Asserts the role holds `s3:ListBucket` with its `s3:prefix` condition limited to `prefix` (a
 * listing is granted on the bucket, so its scope is the condition, not the resource).
 */
export function expectListsOnlyUnder(synthesized: Synthesized, roleLogicalId: string, prefix: string): void {
  synthesized.template.hasResourceProperties('AWS::IAM::Policy', {
    Roles: [{ Ref: roleLogicalId }],
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({ Action: 's3:ListBucket', Condition: { StringLike: { 's3:prefix': [prefix] } } }),
      ]),
    },
  });
}
