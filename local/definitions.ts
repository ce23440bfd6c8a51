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

/** Every `AWS::StepFunctions::StateMachine` in the template, definitions parsed. */
export function stateMachinesIn(template: CfnTemplate): SynthesizedStateMachine[] {
  const machines: SynthesizedStateMachine[] = [];
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::StepFunctions::StateMachine') continue;
    const raw = resource.Properties?.DefinitionString ?? resource.Properties?.Definition;
    const definition = (
      typeof raw === 'object' && raw && !('Fn::Join' in raw) ? raw : JSON.parse(resolveToString(raw))
    ) as AslDefinition;
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
