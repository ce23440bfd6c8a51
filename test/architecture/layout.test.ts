/**
 * The layout's rules, checked on every source file: one folder per workflow, mirrored
 * under lib/workflows/, lambdas/ and test/; a workflow uses the platform and another workflow's
 * public contract only; the platform uses no workflow; no import cycle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANDLERS, type HandlerFile, handlerEntryPath, WORKFLOW_FOLDERS } from '../../lambdas/registry.ts';
import { importCycles, importGraph } from './import-graph.ts';
import { workflowWordsIn, workflowWordsInCode } from './workflow-words.ts';

const ROOT = join(import.meta.dirname, '../..');
/** The workflows' folders, as their registries declare them (lambdas/registry.ts). */
const WORKFLOWS = Object.values(WORKFLOW_FOLDERS);
const PLATFORM_FOLDERS = ['lambdas/platform', 'lib/platform'] as const;
const graph = importGraph(ROOT);

/** The workflow a file belongs to, on either side (lambdas/<wf>/ or lib/workflows/<wf>/). */
function workflowOf(file: string): string | undefined {
  return /^lambdas\/([^/]+)\//.exec(file)?.[1] ?? /^lib\/workflows\/([^/]+)\//.exec(file)?.[1];
}
const isWorkflowFile = (file: string) => {
  const name = workflowOf(file);
  return name !== undefined && name !== 'platform';
};

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

  it('keeps the runtime platform free of workflows', () => {
    expect(
      edges(
        (from, to) =>
          from.startsWith('lambdas/platform/') && (isWorkflowFile(to) || to === 'lambdas/registry.ts'),
      ),
    ).toEqual([]);
  });

  it('keeps the CDK platform free of workflows', () => {
    expect(
      edges(
        (from, to) =>
          from.startsWith('lib/platform/') &&
          (isWorkflowFile(to) || to === 'lambdas/vendor-clients.ts' || to === 'lambdas/registry.ts'),
      ),
    ).toEqual([]);
  });

  it("lets a workflow use another workflow's contract and metric names only", () => {
    // Metric names are public as payloads are: the operations workflow's alarms and dashboard read them.
    expect(
      edges((from, to) => {
        const source = workflowOf(from);
        const target = workflowOf(to);
        if (!isWorkflowFile(from) || !isWorkflowFile(to) || source === target) return false;
        return !/^lambdas\/[^/]+\/(contracts|metrics)\.ts$/.test(to);
      }),
    ).toEqual([]);
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

describe('the platform names no workflow', () => {
  const platformFiles = [...graph.keys()].filter((file) =>
    PLATFORM_FOLDERS.some((folder) => file.startsWith(`${folder}/`)),
  );

  it('reads the platform folders', () => {
    expect(platformFiles.length).toBeGreaterThan(60);
    expect(workflowWordsIn('scanApiUrl SCAN_API_URL start-scan domainList')).toEqual([
      'scan',
      'scan',
      'scan',
      'domain-list',
    ]);
    expect(workflowWordsIn('ListBucket operation transcan')).toEqual([]);
  });

  it('names no file or folder after a workflow', () => {
    const named = platformFiles.filter(
      (file) => workflowWordsIn(file.replace(/^(lambdas|lib)\/platform\//, '')).length > 0,
    );
    expect(named).toEqual([]);
  });

  it('has no workflow name in its code (identifiers and literals)', () => {
    // Imports are literals too: `#lambdas/scan/…` or `../workflows/…` fails here as well as above.
    const found = Object.fromEntries(
      platformFiles
        .map((file) => [file, workflowWordsInCode(ROOT, file)] as const)
        .filter(([, words]) => Object.keys(words).length > 0),
    );
    expect(found).toEqual({});
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
    const vendorFolders = ['bin', 'lib', 'lambdas', 'local', 'bench', 'test', 'docs']
      .flatMap((top) => readdirSync(join(ROOT, top), { withFileTypes: true, recursive: true }))
      .filter((entry) => entry.isDirectory() && entry.name === 'vendor')
      .map((entry) => join(entry.parentPath, entry.name));
    expect(vendorFolders).toEqual([]);
  });
});
