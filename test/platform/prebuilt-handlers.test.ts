/**
 * A function of the installed package deploys its own handler's files from the one code-split
 * build: its entry and the chunks its manifest lists, their maps only with source maps on.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREBUILT_MANIFEST, prebuiltHandlerCode } from '../../lib/platform/prebuilt-handlers.ts';

let dir = '';
const FILES = ['scan-a/index.mjs', 'scan-b/index.mjs', 'chunks/chunk-shared.mjs', 'chunks/chunk-only-b.mjs'];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'prebuilt-handlers-'));
  for (const file of FILES) {
    for (const path of [file, `${file}.map`]) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), `// ${path}\n`);
    }
  }
  writeFileSync(
    join(dir, PREBUILT_MANIFEST),
    JSON.stringify({
      handlers: {
        'scan-a': ['scan-a/index.mjs', 'chunks/chunk-shared.mjs'],
        'scan-b': ['scan-b/index.mjs', 'chunks/chunk-only-b.mjs', 'chunks/chunk-shared.mjs'],
      },
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files CDK stages for a function using the code, as `cdk deploy` would upload them. */
function stagedFiles(handler: string, sourceMaps: boolean): { files: string[]; handler: string } {
  const outdir = mkdtempSync(join(tmpdir(), 'prebuilt-assembly-'));
  try {
    const stack = new Stack(new App({ outdir }), 'Prebuilt');
    const code = prebuiltHandlerCode(dir, handler, sourceMaps);
    const fn = new LambdaFunction(stack, 'Fn', { runtime: Runtime.NODEJS_24_X, ...code });
    const assembly = stack.node.root as App;
    const cloud = assembly.synth();
    const template = cloud.getStackByName('Prebuilt').template as {
      Resources: Record<string, { Type: string; Properties: { Code: { S3Key: string } } }>;
    };
    const key = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')?.Properties
      .Code.S3Key;
    const staged = join(outdir, `asset.${String(key).replace(/\.zip$/, '')}`);
    const files = (
      readdirSync(staged, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[]
    )
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name).slice(staged.length + 1))
      .sort();
    expect(fn.node.id).toBe('Fn');
    return { files, handler: code.handler };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('prebuiltHandlerCode', () => {
  it("deploys the handler's entry and its chunks only, without maps by default", () => {
    expect(stagedFiles('scan-a', false)).toEqual({
      files: ['chunks/chunk-shared.mjs', 'scan-a/index.mjs'],
      handler: 'scan-a/index.handler',
    });
  });

  it('adds each file its map when source maps are on', () => {
    expect(stagedFiles('scan-b', true).files).toEqual(
      [
        'chunks/chunk-only-b.mjs',
        'chunks/chunk-only-b.mjs.map',
        'chunks/chunk-shared.mjs',
        'chunks/chunk-shared.mjs.map',
        'scan-b/index.mjs',
        'scan-b/index.mjs.map',
      ].sort(),
    );
  });

  it('refuses a handler the build did not record, naming it', () => {
    expect(() => prebuiltHandlerCode(dir, 'scan-c', false)).toThrow(/no prebuilt handler 'scan-c'/);
  });
});
