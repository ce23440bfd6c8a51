/**
 * Turns a synthesized CloudFormation template back into runnable state machine definitions.
 *
 * The local runner executes exactly what `cdk synth` produces: it never keeps a second,
 * hand-written copy of the ASL. CloudFormation intrinsics inside `DefinitionString` (function
 * ARNs, bucket names) are replaced by inert placeholders; the runner binds every Task to a local
 * handler by state name, so the placeholders are never called.
 */

export interface AslState {
  readonly Type: string;
  readonly [field: string]: unknown;
}

export interface AslDefinition {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, AslState>>;
  readonly TimeoutSeconds?: number;
  readonly [field: string]: unknown;
}

export interface SynthesizedStateMachine {
  readonly logicalId: string;
  readonly definition: AslDefinition;
}

interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

export interface CfnTemplate {
  readonly Resources?: Record<string, CfnResource>;
}

/** Renders an intrinsic as a stable placeholder, e.g. `arn:aws:lambda:local:000000000000:function:StartScanFn`. */
function placeholderFor(intrinsic: Record<string, unknown>): string {
  const getAtt = intrinsic['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return `arn:aws:lambda:us-east-1:000000000000:function:${String(getAtt[0])}`;
  const ref = intrinsic.Ref;
  if (typeof ref === 'string') {
    if (ref === 'AWS::Partition') return 'aws';
    if (ref === 'AWS::Region') return 'us-east-1';
    if (ref === 'AWS::AccountId') return '000000000000';
    if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
    return `local-${ref.toLowerCase()}`;
  }
  return 'local-placeholder';
}

function resolveToString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const join = (value as Record<string, unknown>)['Fn::Join'];
    if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
      return (join[1] as unknown[]).map(resolveToString).join(join[0]);
    }
    return placeholderFor(value as Record<string, unknown>);
  }
  throw new Error(`Unsupported DefinitionString fragment: ${JSON.stringify(value).slice(0, 200)}`);
}

/**
 * The timeout (seconds) of the function behind each Task state of a definition read from a
 * template, kept beside the definition rather than in it (the engine validates the ASL). A Task's
 * Resource names its function by logical id (`placeholderFor`).
 */
const lambdaTimeouts = new WeakMap<AslDefinition, ReadonlyMap<string, number>>();

/** The synthesized timeout of the function behind `stateName`, when the template gave one. */
export function lambdaTimeoutSeconds(definition: AslDefinition, stateName: string): number | undefined {
  return lambdaTimeouts.get(definition)?.get(stateName);
}

function timeoutsOf(template: CfnTemplate, definition: AslDefinition): ReadonlyMap<string, number> {
  const timeouts = new Map<string, number>();
  for (const [name, state] of taskStates(definition)) {
    const resource = typeof state.Resource === 'string' ? state.Resource : '';
    const logicalId = /:function:([A-Za-z0-9]+)$/.exec(resource)?.[1];
    const fn = logicalId === undefined ? undefined : template.Resources?.[logicalId];
    const timeout = fn?.Type === 'AWS::Lambda::Function' ? fn.Properties?.Timeout : undefined;
    // Lambda's default is 3 s, but every function here sets its own; none set means none known.
    if (typeof timeout === 'number') timeouts.set(name, timeout);
  }
  return timeouts;
}

/** Every `AWS::StepFunctions::StateMachine` in the template, definitions parsed. */
export function stateMachinesIn(template: CfnTemplate): SynthesizedStateMachine[] {
  const machines: SynthesizedStateMachine[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::StepFunctions::StateMachine') continue;
    const raw = resource.Properties?.DefinitionString ?? resource.Properties?.Definition;
    const definition = (
      typeof raw === 'object' && raw && !('Fn::Join' in raw) ? raw : JSON.parse(resolveToString(raw))
    ) as AslDefinition;
    lambdaTimeouts.set(definition, timeoutsOf(template, definition));
    machines.push({ logicalId, definition });
  }
  return machines;
}

/** The state machine whose top level has a state of this name (state names are our contract). */
export function stateMachineWithState(template: CfnTemplate, stateName: string): SynthesizedStateMachine {
  const matches = stateMachinesIn(template).filter((machine) => stateName in machine.definition.States);
  if (matches.length !== 1) {
    throw new Error(
      `Expected exactly one synthesized state machine with a top-level state '${stateName}', found ${matches.length}`,
    );
  }
  return matches[0] as SynthesizedStateMachine;
}

/** The per-domain scan state machine (the one whose first state is `StartScan`). */
export function scanDomainStateMachine(template: CfnTemplate): SynthesizedStateMachine {
  return stateMachineWithState(template, 'StartScan');
}

/** The domain-list state machine (the one with `PrepareDomainList`). */
export function domainListStateMachine(template: CfnTemplate): SynthesizedStateMachine {
  return stateMachineWithState(template, 'PrepareDomainList');
}

/** Visits every state, including those nested in Parallel branches and Map processors. */
export function walkStates(definition: AslDefinition, visit: (name: string, state: AslState) => void): void {
  for (const [name, state] of Object.entries(definition.States)) {
    visit(name, state);
    for (const branch of (state.Branches as AslDefinition[] | undefined) ?? []) walkStates(branch, visit);
    const processor = (state.ItemProcessor ?? state.Iterator) as AslDefinition | undefined;
    if (processor) walkStates(processor, visit);
  }
}

/** Every Task state (nested ones included) by name. */
export function taskStates(definition: AslDefinition): Map<string, AslState> {
  const tasks = new Map<string, AslState>();
  walkStates(definition, (name, state) => {
    if (state.Type === 'Task') tasks.set(name, state);
  });
  return tasks;
}

/** The per-person breach report machine (the one with `Recon`). */
export function breachReportStateMachine(template: CfnTemplate): SynthesizedStateMachine {
  return stateMachineWithState(template, 'Recon');
}
