/**
 * The package's declarations, as a consumer's compiler reads them: tsc's `.d.ts` of lib/index.ts
 * and what it reaches, with no zod (nor any other package but the peers) in them.
 *
 * The configuration's types are inferred from its zod schemas (one source for every rule), so
 * tsc's declarations of everything that names them (the config member, the members' construct
 * props, the app's stack) import zod. A consumer's compiler then checks zod's own declarations,
 * and a CommonJS app without `skipLibCheck` and `esModuleInterop` fails on them (TS1259). Here,
 * each import of a type, function or constant from a module whose declarations reach zod is
 * replaced by that name's declaration with its type written out in full (objects, unions,
 * literals, arrays), as the compiler resolves it: the module is then not reached at all. A class
 * cannot be written out; its module is kept, so one that reaches zod fails the build, naming it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { ExpandedTypes } from './expanded-types.ts';

/** The packages a published declaration may import: the peers and the compiler's own libraries. */
export const DECLARATION_PACKAGES = ['aws-cdk-lib', 'constructs', 'cdk-nag'] as const;

/** tsc's output: declaration path → text, keyed by the absolute path tsc wrote it to. */
export type Declarations = Map<string, string>;

/**
 * Writes the package's declarations of lib/index.ts into `typesDir` (the compiler settings of
 * tsconfig.package.json): those a consumer's compiler reaches, their `.ts` and `#lambdas/…`
 * specifiers rewritten to the relative `.js` paths it resolves (static and dynamic imports), and marked
 * CommonJS (their own package.json), as dist/index.cjs is: under the package's `"type":
 * "module"` they would describe an ES module, and a consumer compiling to CommonJS (`module:
 * node16`) would be refused its `import` (TS1479) though `require` loads the package.
 * Returns the files written.
 */
export function writePublicDeclarations(rootDir: string, typesDir: string): string[] {
  const configFile = join(rootDir, 'tsconfig.package.json');
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  // `noCheck`: the emit asks the checker only for the types it writes. Without it, the emit first
  // checks every file it emits (4 s of this build's CPU), though it reports only the errors of
  // writing declarations, which it still reports; type errors are `npm run typecheck`'s.
  const parsed = ts.parseJsonConfigFileContent(
    config,
    ts.sys,
    rootDir,
    { outDir: typesDir, noCheck: true },
    configFile,
  );
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const declarations = publicDeclarations(program, rootDir, typesDir, join(rootDir, 'lib/index.ts'));
  for (const [file, text] of declarations) {
    const rewritten = text.replace(
      /(from\s+|import\()(['"])([^'"]+)\2/g,
      (_match, prefix: string, quote: string, specifier: string) =>
        `${prefix}${quote}${declarationSpecifier(file, typesDir, specifier)}${quote}`,
    );
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, rewritten);
  }
  // The nearest package.json decides a declaration file's module format, as it does a .js file's.
  writeFileSync(join(typesDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  return [...declarations.keys()];
}

/** `./x.ts` → `./x.js`; `#lambdas/a/b` → the relative path of types/lambdas/a/b.js. */
function declarationSpecifier(file: string, typesDir: string, specifier: string): string {
  const alias = /^#(lambdas|local)\/(.+)$/.exec(specifier);
  if (alias) {
    const target = relative(dirname(file), join(typesDir, alias[1] as string, `${alias[2]}.js`));
    return target.startsWith('.') ? target : `./${target}`;
  }
  return specifier.startsWith('.') ? specifier.replace(/\.ts$/, '.js') : specifier;
}

/**
 * Emits the declarations of `entry` (a source file of `program`) into `outDir`, with every name
 * from a module that reaches a package outside {@link DECLARATION_PACKAGES} written out in full.
 * Returns the declarations a consumer's compiler reaches from the entry, by path under `outDir`.
 */
function publicDeclarations(
  program: ts.Program,
  rootDir: string,
  outDir: string,
  entry: string,
): Declarations {
  const emitted: Declarations = new Map();
  const result = program.emit(undefined, (file, text) => emitted.set(resolve(file), text), undefined, true);
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0)
    throw new Error(ts.formatDiagnostics(errors, ts.createCompilerHost(program.getCompilerOptions())));
  const toSource = (declaration: string) =>
    join(rootDir, relative(outDir, declaration)).replace(/\.d\.ts$/, '.ts');
  const toDeclaration = (source: string) => join(outDir, relative(rootDir, source)).replace(/\.ts$/, '.d.ts');
  const graph = new DeclarationGraph(emitted, rootDir, outDir);
  const writer = new ExpandedTypes(program.getTypeChecker());
  const kept: Declarations = new Map();
  const pending = [toDeclaration(entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (kept.has(file)) continue;
    const text = emitted.get(file);
    if (text === undefined) throw new Error(`no declaration emitted for ${relative(outDir, file)}`);
    const source = program.getSourceFile(toSource(file));
    const parsed = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const edits: { start: number; end: number; text: string }[] = [];
    for (const statement of parsed.statements) {
      const specifier = moduleSpecifierOf(statement);
      if (specifier === undefined) continue;
      const target = graph.resolve(file, specifier);
      if (target === undefined) {
        const outside = packageOf(specifier);
        if (!(DECLARATION_PACKAGES as readonly string[]).includes(outside))
          throw new Error(`${relative(outDir, file)} imports ${specifier}: not a peer dependency`);
        continue;
      }
      if (!graph.reachesOutside(target)) {
        pending.push(target);
        continue;
      }
      const targetSource = program.getSourceFile(toSource(target));
      if (source === undefined || targetSource === undefined)
        throw new Error(`no source for ${relative(outDir, file)} or ${relative(outDir, target)}`);
      const written = writer.statementFor(
        statement as ts.ImportDeclaration | ts.ExportDeclaration,
        targetSource,
      );
      if (written === undefined) {
        // A class (or anything else that cannot be written out): its module stays, and must not reach zod.
        pending.push(target);
        continue;
      }
      edits.push({ start: statement.getStart(parsed), end: statement.getEnd(), text: written });
    }
    let rewritten = text;
    for (const edit of edits.sort((a, b) => b.start - a.start)) {
      rewritten = rewritten.slice(0, edit.start) + edit.text + rewritten.slice(edit.end);
    }
    kept.set(file, rewritten);
  }
  const leaking = [...kept.keys()].filter((file) => graph.importsOutside(file));
  if (leaking.length > 0) {
    throw new Error(
      `the package's declarations still reach packages that are not peers through ${leaking
        .map((file) => relative(outDir, file))
        .join(', ')}: a class there names an inferred configuration type`,
    );
  }
  return kept;
}

function moduleSpecifierOf(statement: ts.Statement): string | undefined {
  if (
    (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
    statement.moduleSpecifier !== undefined &&
    ts.isStringLiteral(statement.moduleSpecifier)
  )
    return statement.moduleSpecifier.text;
  return undefined;
}

const packageOf = (specifier: string) => /^(@[^/]+\/)?[^/]+/.exec(specifier)?.[0] ?? specifier;

/** Which emitted declarations import which, and which reach a package that is not a peer. */
class DeclarationGraph {
  private readonly outside = new Map<string, boolean>();

  constructor(
    private readonly emitted: Declarations,
    private readonly rootDir: string,
    private readonly outDir: string,
  ) {}

  /** The emitted declaration `specifier` names from `file`, or undefined for a package. */
  resolve(file: string, specifier: string): string | undefined {
    const alias = /^#(lambdas|local)\/(.+)$/.exec(specifier);
    if (alias) return join(this.outDir, alias[1] as string, `${alias[2]}.d.ts`);
    if (specifier.startsWith('.')) return join(dirname(file), specifier.replace(/\.(ts|js)$/, '.d.ts'));
    return undefined;
  }

  /** Whether `file` itself imports a package that is not a peer. */
  importsOutside(file: string): boolean {
    return this.specifiers(file).some(
      (specifier) =>
        this.resolve(file, specifier) === undefined &&
        !(DECLARATION_PACKAGES as readonly string[]).includes(packageOf(specifier)),
    );
  }

  /** Whether `file` or anything it imports imports a package that is not a peer. */
  reachesOutside(file: string, visiting = new Set<string>()): boolean {
    const known = this.outside.get(file);
    if (known !== undefined) return known;
    if (visiting.has(file)) return false;
    visiting.add(file);
    const reaches =
      this.importsOutside(file) ||
      this.specifiers(file).some((specifier) => {
        const target = this.resolve(file, specifier);
        return target !== undefined && this.reachesOutside(target, visiting);
      });
    this.outside.set(file, reaches);
    return reaches;
  }

  private specifiers(file: string): string[] {
    const text = this.emitted.get(file);
    if (text === undefined) throw new Error(`no declaration emitted for ${relative(this.rootDir, file)}`);
    const found: string[] = [];
    const visit = (node: ts.Node): void => {
      const specifier = ts.isStatement(node) ? moduleSpecifierOf(node) : undefined;
      if (specifier !== undefined) found.push(specifier);
      if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      )
        found.push(node.argument.literal.text);
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
    return found;
  }
}
