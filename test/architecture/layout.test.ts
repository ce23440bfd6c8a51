/**
 * The layout's rules, checked on every source file by its imports: one folder per workflow,
 * mirrored under lib/workflows/, lambdas/ and test/; a workflow uses the shared folders (the
 * platform, any vendor API's client) and another workflow's public contract only; nothing shared
 * imports a workflow; no import cycle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDLERS, type HandlerFile, handlerEntryPath, WORKFLOW_FOLDERS } from '../../lambdas/registry.ts';
import { importCycles, importGraph } from './import-graph.ts';

const ROOT = join(import.meta.dirname, '../..');
/** The workflows' folders, as lambdas/registry.ts lists them. */
const WORKFLOWS = Object.values(WORKFLOW_FOLDERS);
/**
 * What every workflow shares: the runtime platform, the vendor's API clients over their transport,
 * and the CDK platform. None of them may import a workflow module or the registry (which composes
 * the workflows): they take what they need as parameters.
 */
const SHARED_FOLDERS = ['lambdas/platform/', 'lambdas/vendor-api/', 'lib/platform/'] as const;
const graph = importGraph(ROOT);

const isShared = (file: string) => SHARED_FOLDERS.some((folder) => file.startsWith(folder));

/** The workflow a file belongs to, on either side (lambdas/<wf>/ or lib/workflows/<wf>/). */
function workflowOf(file: string): string | undefined {
  const name = /^lambdas\/([^/]+)\//.exec(file)?.[1] ?? /^lib\/workflows\/([^/]+)\//.exec(file)?.[1];
  return name !== undefined && WORKFLOWS.includes(name as (typeof WORKFLOWS)[number]) ? name : undefined;
}
const isWorkflowFile = (file: string) => workflowOf(file) !== undefined;

/** A shared module importing a workflow module, or the registry that composes the workflows. */
function sharedImportsWorkflow(from: string, to: string): boolean {
  return isShared(from) && (isWorkflowFile(to) || to === 'lambdas/registry.ts');
}

/** A workflow module importing another workflow's module other than its contract (payload schemas). */
function crossesWorkflows(from: string, to: string): boolean {
  const source = workflowOf(from);
  const target = workflowOf(to);
  if (source === undefined || target === undefined || source === target) return false;
  return !/^lambdas\/[^/]+\/contracts\.ts$/.test(to);
}

function edges(filter: (from: string, to: string) => boolean): string[] {
  return [...graph].flatMap(([from, targets]) =>
    targets.filter((to) => filter(from, to)).map((to) => `${from} -> ${to}`),
  );
}

describe('the import graph', () => {
  it('reads every source folder', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('lib/security-pipeline.ts')?.length).toBeGreaterThan(5);
  });

  it('has no cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('bundles nothing from outside lambdas/ into a handler', () => {
    expect(edges((from, to) => from.startsWith('lambdas/') && !to.startsWith('lambdas/'))).toEqual([]);
  });

  it('reads every shared folder, and knows a lambdas/ folder that is no workflow for shared', () => {
    for (const folder of SHARED_FOLDERS) {
      expect([...graph.keys()].filter((file) => file.startsWith(folder)).length, folder).toBeGreaterThan(5);
    }
    const unknown = [...graph.keys()]
      .map((file) => /^lambdas\/([^/]+)\//.exec(file)?.[1])
      .filter(
        (name) => name !== undefined && !isShared(`lambdas/${name}/`) && !isWorkflowFile(`lambdas/${name}/`),
      );
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('keeps everything shared free of workflows: no shared module imports a workflow or the registry', () => {
    expect(edges(sharedImportsWorkflow)).toEqual([]);
  });

  it("lets a workflow use the shared folders and another workflow's contract only", () => {
    expect(edges(crossesWorkflows)).toEqual([]);
  });

  it('accepts any workflow importing any vendor client, and refuses a client importing a workflow', () => {
    const forbidden = (from: string, to: string) =>
      sharedImportsWorkflow(from, to) || crossesWorkflows(from, to);
    expect(forbidden('lambdas/operations/x.ts', 'lambdas/vendor-api/scan/scan-client.ts')).toBe(false);
    expect(forbidden('lib/workflows/breach/x.ts', 'lambdas/vendor-api/keys/keys-client.ts')).toBe(false);
    expect(forbidden('lambdas/vendor-api/scan/scan-client.ts', 'lambdas/scan/settings.ts')).toBe(true);
    expect(forbidden('lambdas/vendor-api/scan/scan-client.ts', 'lambdas/registry.ts')).toBe(true);
    expect(forbidden('lib/platform/bindings.ts', 'lambdas/registry.ts')).toBe(true);
    expect(forbidden('lambdas/operations/x.ts', 'lambdas/scan/settings.ts')).toBe(true);
    expect(forbidden('lambdas/operations/x.ts', 'lambdas/scan/contracts.ts')).toBe(false);
  });
});

describe('a vendor client shared by workflows', () => {
  /** The workflows whose modules import the scanning API's client folder, and through which files. */
  const scanClientUsers = [...graph]
    .filter(([, targets]) => targets.some((to) => to.startsWith('lambdas/vendor-api/scan/')))
    .map(([from]) => from);

  it('has a second workflow on the scanning API: operations imports the scan client, as scan does', () => {
    const workflows = new Set(scanClientUsers.map(workflowOf).filter((name) => name !== undefined));
    expect(workflows).toContain('scan');
    expect(workflows).toContain('operations');
    // The statistics job's entry builds the client itself; its core reads the answer with the client's reader.
    expect(graph.get('lambdas/operations/record-vendor-stats.ts')).toContain(
      'lambdas/vendor-api/scan/scan-client.ts',
    );
    expect(graph.get('lambdas/operations/vendor-stats.ts')).toContain(
      'lambdas/vendor-api/scan/scan-listing.ts',
    );
  });

  it('lets operations reach the scan workflow through its contract only, and the rule allows every import it makes', () => {
    const operations = [...graph].filter(([from]) => workflowOf(from) === 'operations');
    const intoScan = operations.flatMap(([, targets]) => targets.filter((to) => workflowOf(to) === 'scan'));
    expect(new Set(intoScan)).toEqual(new Set(['lambdas/scan/contracts.ts']));
    const refused = operations.flatMap(([from, targets]) =>
      targets.filter((to) => crossesWorkflows(from, to) || sharedImportsWorkflow(from, to)),
    );
    expect(refused).toEqual([]);
  });
});

describe('one plain registry', () => {
  it('merges no declarations: what exists is listed in lambdas/registry.ts, not spread over modules', () => {
    // Comments count too: a reader looking for where a name comes from must not be sent to one.
    const merging = [...graph.keys()]
      .filter((file) => /^(lambdas|lib)\//.test(file))
      .filter((file) => /declare\s+module\b/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(merging).toEqual([]);
  });
});

describe('one folder per workflow', () => {
  it('knows every workflow folder', () => {
    expect(WORKFLOWS).toContain('domain-list');
    expect(WORKFLOWS.length).toBeGreaterThanOrEqual(6);
  });

  it.each(WORKFLOWS)('%s has the same folder under lib/workflows/, lambdas/ and test/', (workflow) => {
    expect(existsSync(join(ROOT, 'lib/workflows', workflow))).toBe(true);
    expect(existsSync(join(ROOT, 'lambdas', workflow))).toBe(true);
    expect(existsSync(join(ROOT, 'test', workflow))).toBe(true);
  });

  it('gives each Lambda one module, named after it, in its workflow folder', () => {
    // The step and its entry in one file: following a Task state opens one file, not an adapter too.
    const misplaced = (Object.keys(HANDLERS) as HandlerFile[])
      .map((handler) => handlerEntryPath(handler))
      .filter((path) => !existsSync(join(ROOT, path)) || !/^lambdas\/[^/]+\/[^/]+\.ts$/.test(path));
    expect(misplaced).toEqual([]);
    const handlerFolders = readdirSync(join(ROOT, 'lambdas'), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isDirectory() && entry.name === 'handlers')
      .map((entry) => join(entry.parentPath, entry.name));
    expect(handlerFolders).toEqual([]);
  });

  it('marks every Lambda entry pure, so a module that imports its step bundles no second entry', () => {
    const unmarked = (Object.keys(HANDLERS) as HandlerFile[])
      .map((handler) => handlerEntryPath(handler))
      .filter((path) => {
        const source = readFileSync(join(ROOT, path), 'utf8');
        const entries = source.match(/^export const handler = /gm) ?? [];
        const marked =
          source.match(/^export const handler = \/\* @__PURE__ \*\/ createLazyHandler\(/gm) ?? [];
        return entries.length !== 1 || marked.length !== 1;
      });
    expect(unmarked).toEqual([]);
  });

  it('loads no Lambda entry into synthesis: lib/ and bin/ import one for its types only', () => {
    // An entry module pulls in its runtime (SDK clients, Powertools): synth must not evaluate it.
    const entries = new Set(
      (Object.keys(HANDLERS) as HandlerFile[]).map((handler) => handlerEntryPath(handler)),
    );
    const loaded = edges((from, to) => /^(lib|bin)\//.test(from) && entries.has(to)).filter((edge) => {
      const [from, to] = edge.split(' -> ') as [string, string];
      const specifier = `#lambdas/${to.slice('lambdas/'.length, -'.ts'.length)}`;
      const source = readFileSync(join(ROOT, from), 'utf8');
      const imports = [...source.matchAll(/^import (type )?\{[^}]*\} from '([^']+)';/gm)];
      return (
        imports.some((match) => match[2] === specifier && match[1] === undefined) ||
        !imports.some((match) => match[2] === specifier)
      );
    });
    expect(loaded).toEqual([]);
  });

  it('has no folder named vendor (tools skip those as third-party code)', () => {
    const vendorFolders = ['bin', 'lib', 'lambdas', 'local', 'scripts', 'bench', 'test', 'docs']
      .flatMap((top) => readdirSync(join(ROOT, top), { withFileTypes: true, recursive: true }))
      .filter((entry) => entry.isDirectory() && entry.name === 'vendor')
      .map((entry) => join(entry.parentPath, entry.name));
    expect(vendorFolders).toEqual([]);
  });
});
