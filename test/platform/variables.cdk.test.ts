/**
 * Environment variable names, one place: every variable the synthesized functions get is named in
 * ENV (lambdas/platform/runtime/variables.ts), and no source outside that file spells one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV } from '#lambdas/platform/runtime/variables';
import { synth } from '../kit/synth.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function namesIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Object.values(value as Record<string, unknown>).flatMap(namesIn);
}

const KNOWN = new Set(namesIn(ENV));
/** Set by the function defaults for the runtime, not read by our handlers. */
const RUNTIME_ONLY = new Set(['NODE_OPTIONS', 'AWS_NODEJS_CONNECTION_REUSE_ENABLED']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('environment variable names', () => {
  it('names every variable of every synthesized function in ENV', () => {
    // Act
    const { json } = synth({ vendor: { keys: 'per-api' }, scan: { deleteAtVendorAfterManifest: true } });
    const variables = Object.values(json.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .flatMap((resource) =>
        Object.keys(
          (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
            ?.Variables ?? {},
        ),
      );

    // Assess
    expect(variables.length).toBeGreaterThan(0);
    const unknown = [...new Set(variables)].filter((name) => !KNOWN.has(name) && !RUNTIME_ONLY.has(name));
    expect(unknown).toEqual([]);
  });

  it('is spelled as a string literal in no source file but variables.ts', () => {
    // Prepare
    const files = ['lambdas', 'lib', 'local'].flatMap((dir) => sources(join(ROOT, dir)));

    // Act: a quoted name in code (comments, which explain, are left out)
    const spelled = files.flatMap((file) => {
      if (file.endsWith(join('runtime', 'variables.ts'))) return [];
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      return [...KNOWN]
        .filter((name) => new RegExp(`['"\`]${name}['"\`]`).test(code))
        .map((name) => `${relative(ROOT, file)}: ${name}`);
    });

    // Assess
    expect(spelled).toEqual([]);
  });
});
