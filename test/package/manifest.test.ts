/**
 * The published manifests: the TypeScript package's (scripts/package-stage.ts) and the jsii
 * package's (scripts/jsii-build.ts) carry the fields a registry shows and `npm publish` needs
 * (licence, author, repository, homepage, issues), from the repository's one package.json, under
 * the names docs/deploying.md gives; neither is `private`, and neither names a placeholder.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { jsiiManifest, SHARED_MANIFEST_FIELDS } from '../../scripts/jsii-build.ts';
import { packageManifest } from '../../scripts/package-stage.ts';

const read = (path: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as Record<string, unknown>;
const repo = read('package.json') as Record<string, unknown> & { name: string; version: string };
const facade = read('jsii/package.json');
// What dist/index.cjs imports: the peers only (zod and the handlers' packages are bundled).
const published = packageManifest(repo, ['aws-cdk-lib', 'constructs']);
const jsii = jsiiManifest(repo, facade);

describe('the published manifests', () => {
  it('carry the licence, author, repository, homepage and issues, and are not private', () => {
    for (const manifest of [published, jsii]) {
      for (const field of SHARED_MANIFEST_FIELDS) expect(manifest[field], field).toEqual(repo[field]);
      expect(manifest).not.toHaveProperty('private');
    }
    expect(repo.repository).toMatchObject({
      type: 'git',
      url: expect.stringMatching(/^git\+https:\/\/github\.com\//),
    });
    expect(repo.author).toMatchObject({ name: expect.any(String) });
    expect(JSON.stringify([published, jsii])).not.toMatch(/example\.(com|org)|github\.com\/example\//);
  });

  it('depend on nothing the build bundled: a dependency stays only while dist/index.cjs imports it', () => {
    expect(repo).toHaveProperty('dependencies.zod');
    expect(published).not.toHaveProperty('dependencies');
    expect(packageManifest(repo, ['zod']).dependencies).toEqual({
      zod: (repo.dependencies as Record<string, string>).zod,
    });
  });

  it('ship dist/, the CHANGELOG and API.md (npm adds the README and LICENSE)', () => {
    expect(published.files).toEqual(['dist/', 'CHANGELOG.md', 'API.md']);
  });

  it('use the names docs/deploying.md documents, for npm and for PyPI', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs/deploying.md'), 'utf8');
    const python = (facade.jsii as { targets: { python: { distName: string; module: string } } }).targets
      .python;
    for (const name of [repo.name, String(facade.name), python.distName, python.module]) {
      expect(page).toContain(`\`${name}\``);
    }
  });
});
