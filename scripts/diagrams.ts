/**
 * Mermaid diagrams of the state machines, generated from the synthesized definitions, and kept in
 * docs/state-machines.md between `<!-- diagram:<Name> -->` and `<!-- /diagram -->` markers.
 *
 *   npm run diagrams            rewrites that page's diagrams from `cdk synth`
 *
 * test/stack/diagrams.cdk.test.ts fails when a diagram there differs from what this renders, so the
 * pictures can never drift from the deployed workflow.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PIPELINE_CONFIG } from '../lib/config/defaults.ts';
import {
  type AslDefinition,
  type AslState,
  type CfnTemplate,
  stateMachineWithState,
} from '../local/synth/definitions.ts';
import { cachedTemplate } from '../local/synth/synth-cache.ts';

/** The page that holds the diagrams, relative to the repository root. */
export const DIAGRAMS_PAGE = 'docs/state-machines.md';

/** The diagrams on that page: a name, and a top-level state that identifies the machine. */
export const DIAGRAMS = [
  { name: 'DomainListScan', stateName: 'PrepareDomainList' },
  { name: 'ScanDomain', stateName: 'StartScan' },
  { name: 'WatchlistRun', stateName: 'PrepareWatchlist' },
  { name: 'BreachReport', stateName: 'Recon' },
] as const;

const id = (name: string) => name.replace(/[^A-Za-z0-9_]/g, '_');

/** A `flowchart TD` of one definition: states, their Next/Choice/Catch edges, Parallel and Map nested. */
export function mermaidFor(definition: AslDefinition): string {
  const lines = ['flowchart TD', `  start((start)) --> ${id(definition.StartAt)}`];
  renderStates(definition, lines, '  ', 'done');
  lines.push('  done((end))');
  return lines.join('\n');
}

function renderStates(definition: AslDefinition, lines: string[], indent: string, end: string): void {
  for (const [name, state] of Object.entries(definition.States)) {
    lines.push(`${indent}${id(name)}${shape(name, state)}`);
    for (const branch of (state.Branches as AslDefinition[] | undefined) ?? []) {
      const sub = `${id(name)}_${id(branch.StartAt)}`;
      lines.push(`${indent}subgraph ${sub} [" "]`);
      renderStates(branch, lines, `${indent}  `, id(name));
      lines.push(`${indent}end`, `${indent}${id(name)} -.-> ${id(branch.StartAt)}`);
    }
    const processor = (state.ItemProcessor ?? state.Iterator) as AslDefinition | undefined;
    if (processor) {
      lines.push(`${indent}subgraph ${id(name)}_each ["each item"]`);
      renderStates(processor, lines, `${indent}  `, id(name));
      lines.push(`${indent}end`, `${indent}${id(name)} -.-> ${id(processor.StartAt)}`);
    }
    for (const edge of edges(state, end)) lines.push(`${indent}${id(name)} ${edge}`);
  }
}

function shape(name: string, state: AslState): string {
  switch (state.Type) {
    case 'Choice':
      return `{"${name}"}`;
    case 'Succeed':
    case 'Fail':
      return `(["${name}"])`;
    case 'Wait':
    case 'Pass':
      return `("${name}")`;
    default:
      return `["${name}"]`;
  }
}

function edges(state: AslState, end: string): string[] {
  const out: string[] = [];
  if (typeof state.Next === 'string') out.push(`--> ${id(state.Next)}`);
  if (state.End === true || state.Type === 'Succeed' || state.Type === 'Fail') out.push(`--> ${end}`);
  if (state.Type === 'Choice') {
    for (const choice of (state.Choices as { Next: string }[] | undefined) ?? [])
      out.push(`-->|choice| ${id(choice.Next)}`);
    if (typeof state.Default === 'string') out.push(`-->|default| ${id(state.Default)}`);
  }
  for (const caught of (state.Catch as { ErrorEquals: string[]; Next: string }[] | undefined) ?? []) {
    out.push(`-. "${caught.ErrorEquals.join(', ')}" .-> ${id(caught.Next)}`);
  }
  return [...new Set(out)];
}

/** Each diagram's Mermaid, rendered from `template`. */
export function renderDiagrams(template: CfnTemplate): Map<string, string> {
  return new Map(
    DIAGRAMS.map(({ name, stateName }) => [
      name,
      mermaidFor(stateMachineWithState(template, stateName).definition),
    ]),
  );
}

/** The Mermaid between the markers of `name` in `readme`, or undefined. */
export function diagramIn(readme: string, name: string): string | undefined {
  const match = new RegExp(
    `<!-- diagram:${name} -->\\n\`\`\`mermaid\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /diagram -->`,
  ).exec(readme);
  return match?.[1];
}

/** `readme` with every diagram replaced by its rendering; throws when a marker is missing. */
export function withDiagrams(readme: string, diagrams: ReadonlyMap<string, string>): string {
  let text = readme;
  for (const [name, mermaid] of diagrams) {
    if (diagramIn(text, name) === undefined)
      throw new Error(`${DIAGRAMS_PAGE} has no <!-- diagram:${name} --> block`);
    text = text.replace(
      new RegExp(`(<!-- diagram:${name} -->\\n\`\`\`mermaid\\n)[\\s\\S]*?(\\n\`\`\`\\n<!-- /diagram -->)`),
      (_all, open: string, close: string) => `${open}${mermaid}${close}`,
    );
  }
  return text;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const readmePath = resolve(import.meta.dirname, '..', DIAGRAMS_PAGE);
  const diagrams = renderDiagrams(await cachedTemplate(DEFAULT_PIPELINE_CONFIG));
  await writeFile(readmePath, withDiagrams(await readFile(readmePath, 'utf8'), diagrams));
  process.stdout.write(`${DIAGRAMS_PAGE}: ${[...diagrams.keys()].join(', ')} rendered from cdk synth\n`);
}
