/**
 * Environment variable names, one place each: every variable the synthesized functions get is
 * named in the platform's ENV (lambdas/platform/runtime/variables.ts) or in the variables.ts of the
 * workflow that owns it (lambdas/<workflow>/variables.ts), by one owner only, and no source outside
 * those files spells one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_FOLDERS } from '#lambdas/registry';
import { synth } from '../kit/synth.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function namesIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Object.values(value as Record<string, unknown>).flatMap(namesIn);
}

/** Each file that names variables, with the names it exports. */
const VARIABLE_FILES = [
  'lambdas/platform/runtime/variables.ts',
  ...Object.values(WORKFLOW_FOLDERS)
    .map((folder) => `lambdas/${folder}/variables.ts`)
    .filter((file) => existsSync(join(ROOT, file))),
];
const NAMES_BY_FILE = new Map(
  await Promise.all(
    VARIABLE_FILES.map(async (file) => [file, namesIn(await import(join(ROOT, file)))] as const),
  ),
);
const KNOWN = new Set([...NAMES_BY_FILE.values()].flat());
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

  it("reads the platform's and every workflow's variables, each name from one owner only", () => {
    expect(VARIABLE_FILES.length).toBeGreaterThanOrEqual(5);
    expect(KNOWN).toContain('RESULTS_BUCKET');
    expect(KNOWN).toContain('SCAN_STATE_MACHINE_ARN');
    const owners = new Map<string, string[]>();
    for (const [file, names] of NAMES_BY_FILE) {
      for (const name of names) owners.set(name, [...(owners.get(name) ?? []), file]);
    }
    expect([...owners].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  it('is spelled as a string literal in no source file but the variables files', () => {
    // Prepare
    const files = ['lambdas', 'lib', 'local'].flatMap((dir) => sources(join(ROOT, dir)));

    // Act: a quoted name in code (comments, which explain, are left out)
    const spelled = files.flatMap((file) => {
      if (VARIABLE_FILES.includes(relative(ROOT, file))) return [];
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
