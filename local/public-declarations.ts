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

/** The packages a published declaration may import: the peers and the compiler's own libraries. */
export const DECLARATION_PACKAGES = ['aws-cdk-lib', 'constructs', 'cdk-nag'] as const;

/** tsc's output: declaration path → text, keyed by the absolute path tsc wrote it to. */
export type Declarations = Map<string, string>;

/**
 * Writes the package's declarations of lib/index.ts into `typesDir` (the compiler settings of
 * tsconfig.package.json): those a consumer's compiler reaches, their `.ts` and `#lambdas/…`
 * specifiers rewritten to the relative `.js` paths it resolves (those of imports, and of the
 * `declare module` that registers a name, e.g. a vendor API, with the platform), and marked
 * CommonJS (their own package.json), as dist/index.cjs is: under the package's `"type":
 * "module"` they would describe an ES module, and a consumer compiling to CommonJS (`module:
 * node16`) would be refused its `import` (TS1479) though `require` loads the package.
 * Returns the files written.
 */
export function writePublicDeclarations(rootDir: string, typesDir: string): string[] {
  const configFile = join(rootDir, 'tsconfig.package.json');
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, rootDir, { outDir: typesDir }, configFile);
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const declarations = publicDeclarations(program, rootDir, typesDir, join(rootDir, 'lib/index.ts'));
  for (const [file, text] of declarations) {
    const rewritten = text.replace(
      /(from\s+|import\(|declare module\s+)(['"])([^'"]+)\2/g,
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

/** Declarations of a module's exports with their types written out, from the compiler's view of them. */
class ExpandedTypes {
  /** The property names being written, for an error that says where. */
  private readonly path: string[] = [];

  constructor(private readonly checker: ts.TypeChecker) {}

  /**
   * The declarations that replace `statement` (an import or re-export from `target`), or undefined
   * when one of its names is a class or another thing that cannot be written out.
   */
  statementFor(
    statement: ts.ImportDeclaration | ts.ExportDeclaration,
    target: ts.SourceFile,
  ): string | undefined {
    const moduleSymbol = this.checker.getSymbolAtLocation(target);
    if (moduleSymbol === undefined) return undefined;
    const exports = new Map(this.checker.getExportsOfModule(moduleSymbol).map((s) => [s.name, s]));
    const names: { imported: string; local: string }[] = [];
    let exported: boolean;
    if (ts.isImportDeclaration(statement)) {
      const bindings = statement.importClause?.namedBindings;
      if (
        statement.importClause?.name !== undefined ||
        bindings === undefined ||
        !ts.isNamedImports(bindings)
      )
        return undefined;
      for (const element of bindings.elements)
        names.push({ imported: (element.propertyName ?? element.name).text, local: element.name.text });
      exported = false;
    } else {
      const clause = statement.exportClause;
      if (clause === undefined) {
        for (const name of exports.keys()) names.push({ imported: name, local: name });
      } else if (ts.isNamedExports(clause)) {
        for (const element of clause.elements)
          names.push({ imported: (element.propertyName ?? element.name).text, local: element.name.text });
      } else return undefined;
      exported = true;
    }
    // `export type {} from …` keeps a module for what it declares (a `declare module` augmentation).
    if (names.length === 0) return undefined;
    const declarations: string[] = [];
    for (const { imported, local } of names) {
      const found = exports.get(imported);
      if (found === undefined) return undefined;
      try {
        const declaration = this.declarationOf(found, local, exported);
        if (declaration === undefined) return undefined;
        declarations.push(declaration);
      } catch (error) {
        if (error instanceof NotWritable) return undefined;
        throw error;
      }
    }
    return declarations.join('\n');
  }

  private declarationOf(found: ts.Symbol, name: string, exported: boolean): string | undefined {
    const symbol = found.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(found) : found;
    const prefix = exported ? 'export ' : '';
    if (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Enum | ts.SymbolFlags.Namespace))
      return undefined;
    const parts: string[] = [];
    if (symbol.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface)) {
      const declaration = symbol.declarations?.[0] as ts.TypeAliasDeclaration | ts.InterfaceDeclaration;
      if (declaration.typeParameters !== undefined) return undefined;
      parts.push(`${prefix}type ${name} = ${this.write(this.checker.getDeclaredTypeOfSymbol(symbol))};`);
    }
    if (symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable)) {
      const declaration = symbol.valueDeclaration;
      if (declaration === undefined) return undefined;
      const type = this.checker.getTypeOfSymbolAtLocation(symbol, declaration);
      if (symbol.flags & ts.SymbolFlags.Function) {
        for (const signature of type.getCallSignatures()) {
          if (signature.typeParameters !== undefined) return undefined;
          parts.push(`${prefix}declare function ${name}${this.signature(signature)};`);
        }
      } else {
        parts.push(`${prefix}declare const ${name}: ${this.write(type)};`);
      }
    }
    return parts.length === 0 ? undefined : parts.join('\n');
  }

  private signature(signature: ts.Signature, arrow = false, depth = 0): string {
    const parameters = signature.parameters.map((parameter) => {
      const declaration = parameter.valueDeclaration as ts.ParameterDeclaration | undefined;
      const optional = declaration !== undefined && this.checker.isOptionalParameter(declaration);
      const rest = declaration?.dotDotDotToken !== undefined ? '...' : '';
      const type = this.checker.getTypeOfSymbol(parameter);
      return `${rest}${parameter.name}${optional ? '?' : ''}: ${this.write(type, depth + 1)}`;
    });
    const returned = this.write(signature.getReturnType(), depth + 1);
    return arrow ? `(${parameters.join(', ')}) => ${returned}` : `(${parameters.join(', ')}): ${returned}`;
  }

  /** The type written out, as TypeScript source that names nothing but the compiler's own types. */
  write(type: ts.Type, depth = 0): string {
    if (depth > 24) throw new Error(`a type nests deeper than 24 levels, at ${this.path.join('.')}`);
    const flags = type.flags;
    // An enum member by its value (`RetentionDays.ONE_DAY` is 1): the enum may not be in reach.
    if (flags & ts.TypeFlags.EnumLiteral && type.isLiteral()) return JSON.stringify(type.value);
    const simple =
      ts.TypeFlags.Any |
      ts.TypeFlags.Unknown |
      ts.TypeFlags.String |
      ts.TypeFlags.Number |
      ts.TypeFlags.Boolean |
      ts.TypeFlags.BigInt |
      ts.TypeFlags.Undefined |
      ts.TypeFlags.Null |
      ts.TypeFlags.Void |
      ts.TypeFlags.Never |
      ts.TypeFlags.StringLiteral |
      ts.TypeFlags.NumberLiteral |
      ts.TypeFlags.BooleanLiteral |
      ts.TypeFlags.BigIntLiteral |
      ts.TypeFlags.ESSymbol |
      ts.TypeFlags.TemplateLiteral |
      ts.TypeFlags.NonPrimitive;
    if (flags & simple) return this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
    if (type.isUnion()) {
      const members = type.types.map((member) => this.write(member, depth + 1));
      // The compiler holds `boolean` as `false | true`.
      const folded =
        members.includes('false') && members.includes('true')
          ? ['boolean', ...members.filter((m) => m !== 'false' && m !== 'true')]
          : members;
      return folded.map((member) => (/=>/.test(member) ? `(${member})` : member)).join(' | ');
    }
    if (type.isIntersection())
      return type.types.map((member) => `(${this.write(member, depth + 1)})`).join(' & ');
    if (this.checker.isArrayType(type)) {
      const element = this.checker.getTypeArguments(type as ts.TypeReference)[0] as ts.Type;
      const readonly = type.getSymbol()?.name === 'ReadonlyArray' ? 'readonly ' : '';
      return `${readonly}(${this.write(element, depth + 1)})[]`;
    }
    if (this.checker.isTupleType(type)) {
      const elements = this.checker.getTypeArguments(type as ts.TypeReference);
      return `[${elements.map((element) => this.write(element, depth + 1)).join(', ')}]`;
    }
    if (flags & ts.TypeFlags.Object) {
      const symbol = type.getSymbol();
      const file = symbol?.declarations?.[0]?.getSourceFile();
      // The compiler's own named library types (RegExp, Date); `Readonly<…>`, `Omit<…>` and the like
      // are written out, as what they name may not be.
      const named =
        symbol !== undefined && (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) !== 0;
      const generic = this.checker.getTypeArguments(type as ts.TypeReference).length > 0;
      if (
        named &&
        !generic &&
        file !== undefined &&
        /[\\/]typescript[\\/]lib[\\/]lib\.[^\\/]*\.d\.ts$/.test(file.fileName)
      )
        return this.checker.typeToString(type, undefined, ts.TypeFormatFlags.NoTruncation);
      // A peer's type (a bucket, a construct) by its name in the peer's public module.
      const peer = file === undefined ? undefined : peerModuleOf(file.fileName);
      if (peer !== undefined && named && !generic) return `import(${JSON.stringify(peer)}).${symbol.name}`;
      // A class instance (ours, or a library's Map) has behaviour, not a shape to write out.
      if (symbol !== undefined && (symbol.flags & ts.SymbolFlags.Class || (named && generic)))
        throw new NotWritable(this.checker.typeToString(type));
      const calls = type.getCallSignatures();
      const properties = this.checker.getPropertiesOfType(type);
      const indexes = this.checker.getIndexInfosOfType(type);
      if (calls.length === 1 && properties.length === 0 && indexes.length === 0)
        return this.signature(calls[0] as ts.Signature, true, depth);
      if (calls.length > 0 || type.getConstructSignatures().length > 0)
        throw new Error(`cannot write out a callable object type: ${this.checker.typeToString(type)}`);
      const members = [
        ...indexes.map(
          (index) =>
            `${index.isReadonly ? 'readonly ' : ''}[key: ${this.checker.typeToString(index.keyType)}]: ${this.write(index.type, depth + 1)};`,
        ),
        ...properties.map((property) => {
          const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
          const readonly = isReadonly(property) ? 'readonly ' : '';
          this.path.push(property.name);
          const written = this.write(this.checker.getTypeOfSymbol(property), depth + 1);
          this.path.pop();
          return `${readonly}${JSON.stringify(property.name)}${optional}: ${written};`;
        }),
      ];
      return `{ ${members.join(' ')} }`;
    }
    throw new Error(`cannot write out the type ${this.checker.typeToString(type)}`);
  }
}

/** A type that cannot be written out as a shape: the module that declares it is kept. */
class NotWritable extends Error {}

/**
 * The public module of a peer's declaration file: aws-cdk-lib's `<module>/lib/…` is
 * `aws-cdk-lib/<module>` (`core` is the package itself), constructs' is `constructs`.
 */
function peerModuleOf(fileName: string): string | undefined {
  const cdk = /[\\/]node_modules[\\/]aws-cdk-lib[\\/]([\w-]+)[\\/]lib[\\/]/.exec(fileName);
  if (cdk) return cdk[1] === 'core' ? 'aws-cdk-lib' : `aws-cdk-lib/${cdk[1]}`;
  if (/[\\/]node_modules[\\/]constructs[\\/]/.test(fileName)) return 'constructs';
  return undefined;
}

function isReadonly(property: ts.Symbol): boolean {
  return (property.declarations ?? []).some(
    (declaration) =>
      ts.canHaveModifiers(declaration) &&
      (ts.getModifiers(declaration) ?? []).some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword),
  );
}
