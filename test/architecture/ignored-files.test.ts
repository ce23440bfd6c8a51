/**
 * What the docs have a user make inside the clone stays out of commits: the configuration copied
 * from the example (it names the account's vendor URLs, Region and topics) and the tarball
 * `npm pack` writes; the example itself, and everything else the repository holds, stays tracked.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** True when git would leave `path` (relative to the project root) out of a commit. */
async function ignored(path: string): Promise<boolean> {
  try {
    await run('git', ['check-ignore', '--quiet', '--no-index', path], { cwd: PROJECT_ROOT });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 1) return false;
    throw error;
  }
}

describe('.gitignore', () => {
  it('leaves out the configuration a user copies from the example, and the packed tarball', async () => {
    const { name, version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(await ignored('config/pipeline.json')).toBe(true);
    expect(await ignored(`${name}-${version}.tgz`)).toBe(true);
    expect(await ignored('config/pipeline.example.json')).toBe(false);
    expect(await ignored('config/pipeline.schema.json')).toBe(false);
  });
});
