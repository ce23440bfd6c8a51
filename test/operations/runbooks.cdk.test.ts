/**
 * The runbooks name stack outputs (`$(out X)`), resources by logical-ID prefix (`fn X`, `lg X`,
 * `res X AWS::Type`, and the `…Function`/`…Logs`/`…Queue` prefixes of their tables). Each must
 * exist in a synthesized template: the default configuration, or one with every optional feature
 * (per-API secrets, schedules, the delete step, the email subscriptions and their dead-letter
 * queues), so a renamed construct breaks this test, not an
 * on-call engineer's night.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { type Synthesized, synth } from '../kit/synth.ts';

const RUNBOOKS = join(REPO_ROOT, 'docs/runbooks');
const files = readdirSync(RUNBOOKS).filter((file) => file.endsWith('.md'));

let templates: Synthesized[];
beforeAll(() => {
  templates = [
    synth(),
    synth({
      vendor: { keys: 'per-api' },
      scan: { deleteAtVendorAfterManifest: true },
      notifications: { email: 'oncall@example.com', runsEmail: 'team@example.com' },
      schedules: [{ name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] }],
      breach: {
        schedules: [{ name: 'vips', expression: 'rate(1 day)', watchlistKey: 'watchlists/vips.csv' }],
      },
    }),
  ];
});

/** Class names the runbooks mention that are not resources. */
const CONSTRUCT_CLASSES = new Set(['PipelineFunction']);

interface Reference {
  readonly kind: 'output' | 'resource';
  readonly name: string;
  readonly type?: string;
}

/** Every output and resource a runbook's text refers to. */
function referencesIn(text: string): Reference[] {
  const refs: Reference[] = [];
  for (const [, name] of text.matchAll(/\$\(out ([A-Z]\w+)\)/g))
    refs.push({ kind: 'output', name: name as string });
  for (const [, name, type] of text.matchAll(/\bres ([A-Z]\w+) (AWS::\w+::\w+)/g)) {
    refs.push({ kind: 'resource', name: name as string, type: type as string });
  }
  for (const [, cmd, name] of text.matchAll(/\b(fn|lg) "?([A-Z]\w+)/g)) {
    refs.push({
      kind: 'resource',
      name: name as string,
      type: cmd === 'fn' ? 'AWS::Lambda::Function' : 'AWS::Logs::LogGroup',
    });
  }
  // Table cells naming a function or queue by its logical-ID prefix (not construct classes).
  for (const [, name] of text.matchAll(/`([A-Z][A-Za-z0-9]+(?:Function|DeadLetterQueue))`/g)) {
    if (!CONSTRUCT_CLASSES.has(name as string)) refs.push({ kind: 'resource', name: name as string });
  }
  return refs;
}

function exists(ref: Reference): boolean {
  return templates.some((t) => {
    if (ref.kind === 'output') return Object.hasOwn((t.json as { Outputs?: object }).Outputs ?? {}, ref.name);
    return Object.entries(t.json.Resources).some(
      ([id, r]) => id.startsWith(ref.name) && (ref.type === undefined || r.Type === ref.type),
    );
  });
}

describe('runbooks against the synthesized template', () => {
  it('finds runbooks that name outputs and resources at all', () => {
    const all = files.flatMap((file) => referencesIn(readFileSync(join(RUNBOOKS, file), 'utf8')));
    expect(all.filter((r) => r.kind === 'output').length).toBeGreaterThan(10);
    expect(all.filter((r) => r.kind === 'resource').length).toBeGreaterThan(20);
  });

  it.each(files)('%s names only outputs and resources the stack has', (file) => {
    const missing = referencesIn(readFileSync(join(RUNBOOKS, file), 'utf8'))
      .filter((ref) => !exists(ref))
      .map((ref) => `${ref.kind} ${ref.name}${ref.type ? ` (${ref.type})` : ''}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('catches a name the stack does not have', () => {
    expect(exists({ kind: 'output', name: 'ScanStateMachineArn' })).toBe(true);
    expect(exists({ kind: 'output', name: 'ScanMachineArn' })).toBe(false);
    expect(
      exists({ kind: 'resource', name: 'ScanDomainPollScanStatusFunction', type: 'AWS::Lambda::Function' }),
    ).toBe(true);
    expect(exists({ kind: 'resource', name: 'ScanDomainPollFunction', type: 'AWS::Lambda::Function' })).toBe(
      false,
    );
  });
});
