/**
 * Folders that show the parts: the local runner's and the runtime platform's modules sit in folders
 * named for what they do, so a reader following one command or one concern opens one folder rather
 * than scanning a flat list; project tooling (package, diagrams, schema, config check, redrive) is
 * apart from the local run, in scripts/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
/** A folder's own files, not its subfolders'. */
const looseFiles = (folder: string) =>
  readdirSync(join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
const subfolders = (folder: string) =>
  readdirSync(join(ROOT, folder), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe('folders that show the parts', () => {
  it.each(['local', 'lambdas/platform'])('%s keeps at most 10 files outside its subfolders', (folder) => {
    expect(looseFiles(folder).length).toBeLessThanOrEqual(10);
  });

  it('splits the local run into the CLI, its output, the runner, synthesis, the embedded services and the simulator', () => {
    expect(subfolders('local')).toEqual(['cli', 'output', 'runner', 'services', 'simulator', 'synth']);
    expect(subfolders('local/services')).toEqual(['iam', 's3', 'secrets-manager']);
  });

  it("runs every npm script's own TypeScript from local/, scripts/ or bench/", () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const files = Object.values(scripts).flatMap((command) => command.match(/\S+\.ts\b/g) ?? []);
    expect(files.length).toBeGreaterThan(5);
    expect(files.filter((file) => !/^(local|scripts|bench)\//.test(file))).toEqual([]);
    // The local run's own entry stays the CLI; tooling does not live beside it.
    expect(files.filter((file) => file.startsWith('local/'))).toEqual([
      'local/cli/main.ts',
      'local/simulator/main.ts',
    ]);
  });
});
