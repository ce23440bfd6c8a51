/**
 * Tests clean up the temporary folders they make: each `npm test` once left a `pipeline-config-*`
 * folder in the system temp directory (config-schedules.cdk.test.ts), and on a shared machine they
 * pile up. Read from the source: every file under test/ and bench/ that makes a temporary folder
 * (mkdtemp, mkdtempSync) also removes one (rm, rmSync), or is listed here with where its folders go.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const PROJECT_ROOT = resolve(import.meta.dirname, '../..');

/** Files whose folders are removed elsewhere, and where. */
const REMOVED_ELSEWHERE: Record<string, string> = {
  'test/kit/synth-outdir.ts': "inside the run's folder, which test/global-setup.ts removes",
};

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(PROJECT_ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(PROJECT_ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

describe('temporary folders made by tests and benchmarks', () => {
  const makers = [...sourcesUnder('test'), ...sourcesUnder('bench')].filter(
    (file) =>
      file !== 'test/kit/temp-folders.test.ts' &&
      /\bmkdtemp(Sync)?\(/.test(readFileSync(join(PROJECT_ROOT, file), 'utf8')),
  );

  it('are made by some files (or this check checks nothing)', () => {
    expect(makers.length).toBeGreaterThan(10);
  });

  it.each(makers.map((file) => [file]))('%s removes the folders it makes', (file) => {
    if (REMOVED_ELSEWHERE[file]) return;
    expect(readFileSync(join(PROJECT_ROOT, file), 'utf8')).toMatch(/\brm(Sync)?\(/);
  });
});
