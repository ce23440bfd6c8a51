/**
 * The package's declarations (dist/types, as `npm run package` writes them) name nothing a
 * consumer does not install: no zod, no handler package, only the peers aws-cdk-lib and
 * constructs. A consumer's compiler checks every declaration it reaches unless `skipLibCheck` is
 * on, and zod's own declarations fail in a CommonJS app (TS1259). Read from the run's one package
 * build (package-stage-once.ts), whose declarations are the ones the tarball ships: writing them
 * again here cost a second program over aws-cdk-lib's declarations (about 15 s of CPU).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { packageStageOnce } from './package-stage-once.ts';

let typesDir = '';
let files: string[] = [];

beforeAll(async () => {
  typesDir = join(await packageStageOnce(REPO_ROOT), 'dist/types');
  files = declarationFilesUnder(typesDir);
}, 300_000);

function declarationFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationFilesUnder(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module specifier a declaration file names: imports, re-exports and `import("…")` types. */
function specifiersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push(node.moduleSpecifier.text);
    if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      found.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("the package's declarations", () => {
  it('import no package but the peers aws-cdk-lib and constructs, and no zod at all', () => {
    expect(files.length).toBeGreaterThan(10);
    const packages = new Map<string, string[]>();
    for (const file of files) {
      for (const specifier of specifiersOf(file).filter((s) => !s.startsWith('.'))) {
        const name = /^(@[^/]+\/)?[^/]+/.exec(specifier)?.[0] ?? specifier;
        packages.set(name, [...(packages.get(name) ?? []), relative(typesDir, file)]);
      }
    }
    expect([...packages.keys()].sort()).toEqual(['aws-cdk-lib', 'constructs']);
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toMatch(/['"]zod(\/[^'"]*)?['"]/);
  });

  it('reach every file they name: a consumer compiles them with nothing else of this repository', () => {
    const written = new Set(files);
    for (const file of files) {
      for (const specifier of specifiersOf(file).filter((s) => s.startsWith('.'))) {
        expect(
          written.has(join(file, '..', specifier.replace(/\.js$/, '.d.ts'))),
          `${file} -> ${specifier}`,
        ).toBe(true);
      }
    }
  });

  it("declare SecurityPipeline's resolved settings as a plain type, its config member included", () => {
    const pipeline = readFileSync(join(typesDir, 'lib/security-pipeline.d.ts'), 'utf8');
    expect(pipeline).toMatch(/readonly config: PipelineConfig;/);
    expect(pipeline).toMatch(/type PipelineConfig = \{ readonly "vendor": \{/);
    expect(specifiersOf(join(typesDir, 'lib/security-pipeline.d.ts'))).not.toContainEqual(
      expect.stringMatching(/config\//),
    );
  });
});
