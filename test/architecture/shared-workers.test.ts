/**
 * The test files share one module graph per worker (vitest.config.ts: `isolate: false`), so what a
 * file patches for the whole process must be put back before the next file runs there. vitest puts
 * back spies, stubbed variables and stubbed globals itself (`restoreMocks`, `unstubEnvs`,
 * `unstubGlobals`); these rules cover what it cannot: aws-sdk-client-mock's patched client
 * classes, fake timers, and module mocks, which a shared graph cannot undo at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.ts';

const TEST_ROOT = import.meta.dirname.replace(/\/architecture$/, '');
const REPO_ROOT = join(TEST_ROOT, '..');

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testSources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each file's text without this file, whose own rules name the calls it looks for. */
const sources = testSources(TEST_ROOT)
  .filter((path) => path !== import.meta.filename)
  .map((path) => ({ file: relative(REPO_ROOT, path), text: readFileSync(path, 'utf8') }));

/** The files that use `pattern` without `remedy` anywhere in the same file. */
function usesWithout(pattern: RegExp, remedy: RegExp): string[] {
  return sources.filter(({ text }) => pattern.test(text) && !remedy.test(text)).map(({ file }) => file);
}

describe('test files that share a worker', () => {
  it('reads the whole test tree', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.some(({ text }) => /\bmockClient\(/.test(text))).toBe(true);
  });

  it('restore every client class that aws-sdk-client-mock patched', () => {
    // mockClient(SomeClient) patches the class for every instance in the process; mockClient(instance)
    // patches one object and dies with it. The kit's mockSecretsManager hands its mock to the caller.
    const patchesAClass = /\bmockClient\(\s*[A-Z]\w*\s*\)|\bmockSecretsManager\(/;
    const handsItOn = new Set(['test/kit/secrets-manager-mock.ts']);
    const unrestored = usesWithout(patchesAClass, /\.restore\(\)/).filter((file) => !handsItOn.has(file));
    expect(unrestored).toEqual([]);
  });

  it('go back to real timers after fake ones', () => {
    expect(usesWithout(/\bvi\.useFakeTimers\(/, /\bvi\.useRealTimers\(\)/)).toEqual([]);
  });

  it('mock no module: a shared module graph cannot take a module mock back', () => {
    const moduleMocks = sources.filter(({ text }) => /\bvi\.(?:doMock|mock)\(/.test(text));
    expect(moduleMocks.map(({ file }) => file)).toEqual([]);
  });

  it('run with vitest putting back spies, variables and globals after each test', () => {
    expect(config.test).toMatchObject({ restoreMocks: true, unstubEnvs: true, unstubGlobals: true });
    const projects = (config.test?.projects ?? []) as { test?: { isolate?: boolean } }[];
    expect(projects.length).toBeGreaterThan(0);
    for (const project of projects) expect(project.test?.isolate).toBe(false);
  });
});
