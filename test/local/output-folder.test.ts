/**
 * Where `--out` puts a run's results can never hurt the repository: an empty `--out` is refused
 * (it once wrote the buckets' folders into the project root), and an output folder is marked so
 * that git and Biome skip it, wherever it lands (the README's `--out ./my-results` followed by
 * `npm test` once failed on Biome's findings in the results' JSON).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NPM_START_RUN_BY } from '../docs/documented-commands.ts';
import { runCli } from './cli-run.ts';

const run = promisify(execFile);
const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

let clone: string;
const savedInitCwd = process.env.INIT_CWD;
beforeEach(async () => {
  // A clone as far as git and Biome can tell: the project's own biome.json and .gitignore.
  clone = await mkdtemp(join(tmpdir(), 'output-folder-'));
  const biome = JSON.parse(readFileSync(join(PROJECT_ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete biome.$schema;
  await writeFile(join(clone, 'biome.json'), `${JSON.stringify(biome, null, 2)}\n`);
  await writeFile(join(clone, '.gitignore'), readFileSync(join(PROJECT_ROOT, '.gitignore')));
  await symlink(join(PROJECT_ROOT, 'examples'), join(clone, 'examples'));
  await run('git', ['init', '--quiet'], { cwd: clone });
  process.env.INIT_CWD = clone;
});
afterEach(async () => {
  if (savedInitCwd === undefined) delete process.env.INIT_CWD;
  else process.env.INIT_CWD = savedInitCwd;
  await rm(clone, { recursive: true, force: true });
});

describe('--out', () => {
  it.each([[''], ['  ']])(
    '%j is refused with exit 2, naming --out, and nothing is written',
    async (value) => {
      const before = await readdir(clone);

      const result = await runCli(['scan', 'a.example.com', '--out', value]);

      expect(result).toExitWith(2);
      expect(result.stderr).toContain('--out must name a folder (it is empty)');
      expect(await readdir(clone)).toEqual(before);
    },
  );

  it("the README's --out ./my-results example runs as written, exits 0 and leaves the clone clean for Biome and git", async () => {
    // The documented line itself (readme-examples leaves it to this test).
    const [line] =
      Object.entries(NPM_START_RUN_BY).find(([, by]) => by.endsWith('/output-folder.test.ts')) ?? [];
    expect(line).toMatch(/^npm start -- scan .*--out \.\/my-results/);
    const result = await runCli((line ?? '').split(' ').slice(3));
    expect(result.stderr).toBe('');
    expect(result).toExitWith(0);
    expect(result.stdout).toContain(join(clone, 'my-results'));
    expect(await readFile(join(clone, 'my-results', '.gitignore'), 'utf8')).toMatch(/^\*$/m);

    // `npm run lint` is `biome check .`: the results' JSON is not among what it checks.
    const lint = await run(join(PROJECT_ROOT, 'node_modules', '.bin', 'biome'), ['check', '.'], {
      cwd: clone,
    }).catch((error: { stdout: string; stderr: string }) => error);
    expect(`${lint.stdout}${lint.stderr}`).not.toMatch(/my-results/);
    expect(lint).not.toHaveProperty('code');
    const status = await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: clone });
    expect(status.stdout).not.toMatch(/my-results/);
  }, 120_000);

  it("a folder of the user's own with other files in it gets no marker", async () => {
    const own = join(clone, 'mine');
    await runCli(['scan', 'a.example.com', '--out', own, '--min-wait', '1', '--max-wait', '2']);
    await writeFile(join(own, 'notes.txt'), 'mine\n');
    await rm(join(own, '.gitignore'));

    await runCli(['scan', 'a.example.com', '--out', own, '--min-wait', '1', '--max-wait', '2']);

    expect(await readdir(own)).not.toContain('.gitignore');
  }, 120_000);
});
