/**
 * A function of the installed package deploys its own handler's files from the one code-split
 * build: its entry and the chunks its manifest lists, their maps only with source maps on.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  gitignoreLiteral,
  PREBUILT_MANIFEST,
  prebuiltHandlerCode,
} from '../../lib/platform/prebuilt-handlers.ts';

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
function stagedFiles(handler: string, sourceMaps: boolean, from = dir): { files: string[]; handler: string } {
  const outdir = mkdtempSync(join(tmpdir(), 'prebuilt-assembly-'));
  try {
    // Staging is what is checked: without CloudFormation validation, which cost a third of each
    // synthesis here (and its rule engine's first build in the worker) and checks the template.
    const stack = new Stack(new App({ outdir, builtinCloudFormationValidation: false }), 'Prebuilt');
    const code = prebuiltHandlerCode(from, handler, sourceMaps);
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

  it('keeps exactly the closure: look-alike names in other folders, top-level files, names that prefix others', () => {
    // Segments from the characters a build names files with, few enough to collide: the same name
    // in two folders, one name the start of another, dots and the other plain punctuation.
    const segment = fc.constantFrom('a', 'b', 'a.b', 'a-b', 'b.map', '_a', '@a', 'a+');
    const builds = fc
      .uniqueArray(
        fc.array(segment, { minLength: 1, maxLength: 2 }).map((parts) => parts.join('/')),
        {
          minLength: 2,
          maxLength: 10,
        },
      )
      // No file may also be a folder of another, and the manifest's name is the build's.
      .filter(
        (files) =>
          !files.includes(PREBUILT_MANIFEST) &&
          files.every((file) => files.every((other) => !other.startsWith(`${file}/`))),
      )
      .chain((files) => fc.tuple(fc.constant(files), fc.subarray(files, { minLength: 1 }), fc.boolean()));
    fc.assert(
      fc.property(builds, ([files, closure, sourceMaps]) => {
        const built = mkdtempSync(join(tmpdir(), 'prebuilt-names-'));
        try {
          for (const file of files) {
            mkdirSync(dirname(join(built, file)), { recursive: true });
            writeFileSync(join(built, file), `// ${file}\n`);
          }
          writeFileSync(join(built, PREBUILT_MANIFEST), JSON.stringify({ handlers: { fn: closure } }));
          // With source maps on, each closure file's map goes with it where the build made one.
          const maps = sourceMaps
            ? closure.map((file) => `${file}.map`).filter((map) => files.includes(map))
            : [];
          expect(stagedFiles('fn', sourceMaps, built).files).toEqual(
            [...new Set([...closure, ...maps])].sort(),
          );
        } finally {
          rmSync(built, { recursive: true, force: true });
        }
      }),
      { seed: 44, numRuns: 60 },
    );
  });

  it('refuses a built file whose name gitignore would read as a pattern, naming the file', () => {
    for (const name of ['chunks/chunk-*.mjs', 'chunks/a?.mjs', '!a.mjs', '#a.mjs', 'a b.mjs', 'a[1].mjs']) {
      expect(() => gitignoreLiteral(name)).toThrow(
        `the prebuilt handlers hold a file named ${JSON.stringify(name)}: only letters, digits and . _ @ + - are expected`,
      );
    }
    expect(gitignoreLiteral('chunks/chunk-2B4ADZ3F.mjs.map')).toBe('/chunks/chunk-2B4ADZ3F.mjs.map');
  });
});
