/**
 * Environment variable names, one place each: every variable the synthesized functions get is
 * named in the platform's ENV (lambdas/platform/runtime/variables.ts) or in the variables.ts of the
 * workflow that owns it (lambdas/<workflow>/variables.ts), by one owner only, and no source outside
 * those files spells one. A vendor API's URL and key secret are named from the API's name by
 * vendorApiVariables (lambdas/platform/runtime/vendor-api-variables.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vendorApiVariables } from '#lambdas/platform/runtime/vendor-api-variables';
import { VENDOR_APIS, WORKFLOW_FOLDERS } from '#lambdas/registry';
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
/** A vendor API's URL and key secret, named from the API's name rather than listed in a file. */
const VENDOR_API_NAMES = VENDOR_APIS.flatMap((api) => namesIn(vendorApiVariables(api)));
const KNOWN = new Set([...[...NAMES_BY_FILE.values()].flat(), ...VENDOR_API_NAMES]);
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
    for (const [file, names] of [...NAMES_BY_FILE, ['vendorApiVariables', VENDOR_API_NAMES] as const]) {
      for (const name of names) owners.set(name, [...(owners.get(name) ?? []), file]);
    }
    expect([...owners].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  it('is spelled as a string literal in no source file but the variables files', () => {
    // Prepare
    const files = ['lambdas', 'lib', 'local', 'scripts'].flatMap((dir) => sources(join(ROOT, dir)));

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

describe('vendorApiVariables', () => {
  it("names each vendor API's variables from its name, as the deployed functions read them", () => {
    // Act
    const names = Object.fromEntries(VENDOR_APIS.map((api) => [api, vendorApiVariables(api)]));

    // Assess
    expect(names).toEqual({
      scan: { url: 'SCAN_API_URL', keySecretArn: 'SCAN_API_KEY_SECRET_ARN' },
      keys: { url: 'KEYS_API_URL', keySecretArn: 'KEYS_API_KEY_SECRET_ARN' },
      breach: { url: 'BREACH_API_URL', keySecretArn: 'BREACH_API_KEY_SECRET_ARN' },
    });
  });

  it('joins the words of a longer name with _ and refuses a name that cannot make a variable', () => {
    // An API no client registers yet: the rule the next one will meet.
    expect(vendorApiVariables('key-info' as never).url).toBe('KEY_INFO_API_URL');
    for (const name of ['Scan', 'key info', '', '-keys', 'keys-']) {
      expect(() => vendorApiVariables(name as never), name).toThrow(/must be lower-case words joined by '-'/);
    }
  });
});
