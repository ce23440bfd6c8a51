/** The Mermaid diagrams of docs/state-machines.md are the synthesized state machines, not a drawing of them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { type CfnTemplate, stateMachineWithState, walkStates } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';
import {
  DIAGRAMS,
  DIAGRAMS_PAGE,
  diagramIn,
  mermaidFor,
  renderDiagrams,
  withDiagrams,
} from '../../scripts/diagrams.ts';

let template: CfnTemplate;
let readme: string;
beforeAll(async () => {
  template = await cachedTemplate(DEFAULT_PIPELINE_CONFIG);
  readme = readFileSync(join(REPO_ROOT, DIAGRAMS_PAGE), 'utf8');
});

describe('state machine diagrams (docs/state-machines.md)', () => {
  it.each(DIAGRAMS.map((d) => d.name))(
    '%s is Mermaid rendered from the synthesized definition (npm run diagrams)',
    (name) => {
      const rendered = renderDiagrams(template).get(name);
      expect(diagramIn(readme, name), 'stale: run npm run diagrams').toBe(rendered);
    },
  );

  it.each(DIAGRAMS)('$name shows every state of the machine, nested ones included', ({ stateName }) => {
    const { definition } = stateMachineWithState(template, stateName);
    const mermaid = mermaidFor(definition);
    walkStates(definition, (state) => {
      expect(mermaid, state).toContain(`"${state}"`);
    });
  });

  it('notices a diagram that no longer matches the definition', () => {
    const { definition } = stateMachineWithState(template, 'StartScan');
    const changed = { ...definition, States: { ...definition.States, Extra: { Type: 'Pass', End: true } } };
    const stale = withDiagrams(readme, new Map([['ScanDomain', mermaidFor(changed)]]));
    expect(diagramIn(stale, 'ScanDomain')).not.toBe(renderDiagrams(template).get('ScanDomain'));
  });
});
