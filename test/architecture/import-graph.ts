/**
 * The repository's import graph, read with TypeScript's own pre-processor (the same parse tsc does,
 * without type-checking), so the layout rules can be checked on every file: relative imports and the
 * `#lambdas/*` / `#local/*` aliases of package.json, static and dynamic, type-only included (a type
 * import still couples two folders).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

export const SOURCE_ROOTS = ['bin', 'lib', 'lambdas', 'local', 'scripts', 'bench'] as const;

const ALIASES: readonly (readonly [prefix: string, folder: string])[] = [
  ['#lambdas/', 'lambdas/'],
  ['#local/', 'local/'],
];

function listTs(root: string, folder: string): string[] {
  const absolute = join(root, folder);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.m?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

/** Repository-relative file an import specifier names, or undefined for a package import. */
export function resolveSpecifier(root: string, fromFile: string, specifier: string): string | undefined {
  let base: string | undefined;
  if (specifier.startsWith('.')) base = normalize(join(dirname(fromFile), specifier));
  for (const [prefix, folder] of ALIASES) {
    if (specifier.startsWith(prefix)) base = `${folder}${specifier.slice(prefix.length)}`;
  }
  if (base === undefined) return undefined;
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(join(root, candidate)) && candidate.endsWith('.ts')) return candidate;
  }
  throw new Error(`${fromFile}: import '${specifier}' names no file`);
}

/** Each source file's imports of other repository files. */
export function importGraph(root: string, folders: readonly string[] = SOURCE_ROOTS): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of folders.flatMap((folder) => listTs(root, folder))) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = info.importedFiles
      .map((imported) => resolveSpecifier(root, file, imported.fileName))
      .filter((target): target is string => target !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): the cycles. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative enough for a few hundred files.
  let index = 0;
  const indexOf = new Map<string, number>();
  const lowOf = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    indexOf.set(file, index);
    lowOf.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!indexOf.has(target)) {
        visit(target);
        lowOf.set(file, Math.min(lowOf.get(file) ?? 0, lowOf.get(target) ?? 0));
      } else if (onStack.has(target)) {
        lowOf.set(file, Math.min(lowOf.get(file) ?? 0, indexOf.get(target) ?? 0));
      }
    }
    if (lowOf.get(file) === indexOf.get(file)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) cycles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) visit(file);
  return cycles;
}
