/**
 * A module's exports declared with their types written out in full (objects, unions, literals,
 * arrays, functions), as the compiler resolves them, naming nothing but the compiler's own types
 * and the peers': what public-declarations.ts puts in place of an import from a module whose
 * declarations reach zod.
 */
import ts from 'typescript';

/** Declarations of a module's exports with their types written out, from the compiler's view of them. */
export class ExpandedTypes {
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
    // `export type {} from …` names nothing to write out: the import stays as it is.
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
