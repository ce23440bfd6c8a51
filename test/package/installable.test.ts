/**
 * `npm pack` gives a package that a CDK app outside this repository installs (offline,
 * from the npm cache) and synthesizes: first without cdk-nag (an optional peer), then, with
 * cdk-nag added to the same app, with nothing brought, with every resource brought from the app,
 * and with every resource imported. Packed from the run's one package build (package-stage-once.ts),
 * installed and synthesized once for the file.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { cdkInitCompilerOptions } from './cdk-init-compiler-options.ts';
import { createConsumerApp, installAddedOffline, installOffline, packStage } from './consumer-app.ts';
import { packageStageOnce } from './package-stage-once.ts';

const PACKAGE = 'vendor-security-pipeline';
let workDir = '';
let appDir = '';
const templates = new Map<string, Template>();
let warnings: string[] = [];
/** The app before cdk-nag was added: whether npm installed cdk-nag anyway, and what its run printed. */
let bareHadNag = true;
let bareOutput = '';
/** The working tree's dist/ before the pack (its modification time, or absent). */
const workingTreeDist = () => {
  const dist = join(REPO_ROOT, 'dist');
  return existsSync(dist) ? statSync(dist).mtimeMs : 'absent';
};
let distBefore: number | 'absent' = 'absent';
let tarballBytes = 0;
/** The files npm packed into the tarball: what `npm publish` of the stage would send. */
let packedFiles: readonly string[] = [];
/**
 * Every consumer run here synthesizes with aws-cdk-lib's CloudFormation validation off, as
 * `cdk synth --no-validation` turns it off: it is a third of each cold synthesis's CPU (the app with
 * cdk-nag's three stacks: 26 s of CPU with it, 17 s without), and what it checks (the resources'
 * properties against CloudFormation's schemas) does not depend on how the construct was installed:
 * test/stack/cloudformation-validation.cdk.test.ts runs it on the stack itself, and the templates
 * here differ from the source's only in where the functions' code comes from. cdk-nag stays on.
 */
const WITHOUT_CLOUDFORMATION_VALIDATION = { ...process.env, CDK_VALIDATION: 'false' };

beforeAll(async () => {
  distBefore = workingTreeDist();
  workDir = mkdtempSync(join(tmpdir(), 'security-pipeline-package-'));
  appDir = join(workDir, 'app');
  const { tarball, files } = packStage(await packageStageOnce(REPO_ROOT), workDir);
  tarballBytes = statSync(tarball).size;
  packedFiles = files;
  // First an app that never installed cdk-nag (an optional peer).
  createConsumerApp(REPO_ROOT, appDir, tarball, ['aws-cdk-lib', 'constructs']);
  installOffline(appDir);
  bareHadNag = existsSync(join(appDir, 'node_modules', 'cdk-nag'));
  copyFileSync(join(import.meta.dirname, 'fixtures/consumer-app-without-nag.mjs'), join(appDir, 'bare.mjs'));
  bareOutput = execFileSync(process.execPath, ['bare.mjs', join(appDir, 'cdk.bare')], {
    cwd: appDir,
    env: WITHOUT_CLOUDFORMATION_VALIDATION,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Then the same app with cdk-nag added: one install of aws-cdk-lib serves both.
  createConsumerApp(REPO_ROOT, appDir, tarball);
  installAddedOffline(appDir);
  copyFileSync(join(import.meta.dirname, 'fixtures/consumer-app.mjs'), join(appDir, 'app.mjs'));
  const outdir = join(appDir, 'cdk.out');
  // The app's own node, and nothing of this repository on its module path.
  execFileSync(process.execPath, ['app.mjs', outdir], {
    cwd: appDir,
    env: WITHOUT_CLOUDFORMATION_VALIDATION,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stack of ['Plain', 'Owned', 'Imported']) {
    templates.set(
      stack,
      Template.fromJSON(JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8'))),
    );
  }
  // Each stack's annotations are in <stack>.metadata.json, keyed by construct path.
  warnings = ['Plain', 'Owned', 'Imported'].flatMap((stack) => {
    const metadata = JSON.parse(readFileSync(join(outdir, `${stack}.metadata.json`), 'utf8')) as Record<
      string,
      { type: string; data: unknown }[]
    >;
    return Object.values(metadata)
      .flat()
      .filter((entry) => entry.type === 'aws:cdk:warning')
      .map((entry) => `${stack}: ${String(entry.data)}`);
  });
}, 600_000);

// Removing an installed aws-cdk-lib (160 MB of small files) took over a minute on the loaded machine.
afterAll(() => {
  if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
}, 300_000);

const template = (stack: string): Template => {
  const found = templates.get(stack);
  if (found === undefined) throw new Error(`no template for stack ${stack}`);
  return found;
};

describe('the packed construct in a fresh CDK app', () => {
  it('is packed from a build outside the working tree, so an `npm pack` beside the suite is undisturbed', () => {
    expect(workingTreeDist()).toBe(distBefore);
  });

  it('installs with nothing from this repository: built code, declarations and the entry point', () => {
    const installed = join(appDir, 'node_modules', PACKAGE);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
      peerDependencies: Record<string, string>;
      dependencies?: Record<string, string>;
    };
    expect(existsSync(join(installed, manifest.exports['.']?.default ?? 'missing'))).toBe(true);
    expect(existsSync(join(installed, manifest.exports['.']?.types ?? 'missing'))).toBe(true);
    expect(existsSync(join(installed, 'dist/handlers/start-scan/index.mjs'))).toBe(true);
    expect(existsSync(join(installed, 'lambdas'))).toBe(false);
    expect(existsSync(join(installed, 'lib'))).toBe(false);
    // The handlers' packages and zod are bundled: none is the consumer's to install.
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(existsSync(join(appDir, 'node_modules', 'zod'))).toBe(false);
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'cdk-nag', 'constructs']);
  });

  it("holds only what a consumer needs: dist/, the README, LICENSE and CHANGELOG, and a manifest without the repository's tooling", () => {
    const installed = join(appDir, 'node_modules', PACKAGE);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const field of ['scripts', 'devDependencies', 'imports', 'private']) {
      expect(manifest, field).not.toHaveProperty(field);
    }
    expect(manifest).toMatchObject({ license: 'Apache-2.0', main: './dist/index.cjs' });
    // What `npm publish` of the stage would send: pack and publish select files alike.
    const tops = new Set(packedFiles.map((path) => path.split('/')[0]));
    expect([...tops].sort()).toEqual([
      'API.md',
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'dist',
      'package.json',
    ]);
  });

  it("has the README's and the docs' links lead to pages in the package", () => {
    const installed = join(appDir, 'node_modules', PACKAGE);
    const pages = [
      'README.md',
      'CHANGELOG.md',
      ...filesUnder(join(installed, 'dist/docs')).map((page) => `dist/docs/${page}`),
    ];
    expect(pages.length).toBeGreaterThan(10);
    for (const page of pages.filter((name) => name.endsWith('.md'))) {
      const text = readFileSync(join(installed, page), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
        if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        expect(existsSync(join(installed, dirname(page), target)), `${page} -> ${target}`).toBe(true);
      }
    }
  });

  it('packs to under 3 MB: the handlers share their common modules as chunks', () => {
    expect(tarballBytes).toBeGreaterThan(0);
    expect(tarballBytes).toBeLessThan(3 * 1024 * 1024);
  });

  it("deploys each function with its own handler's files only: its entry and its chunks, no source maps", () => {
    const installed = join(appDir, 'node_modules', PACKAGE, 'dist/handlers');
    const manifest = JSON.parse(readFileSync(join(installed, 'manifest.json'), 'utf8')) as {
      handlers: Record<string, string[]>;
    };
    const functions = Object.values(template('Plain').findResources('AWS::Lambda::Function')).filter(
      (fn) =>
        typeof fn.Properties?.Handler === 'string' && /^[a-z-]+\/index\.handler$/.test(fn.Properties.Handler),
    );
    // Every function but those of settings left off (per-API keys' age checks, say).
    expect(functions.length).toBeGreaterThan(Object.keys(manifest.handlers).length - 3);
    for (const fn of functions) {
      const handler = (fn.Properties.Handler as string).replace(/\/index\.handler$/, '');
      // Each asset is staged in cdk.out as asset.<hash>, the hash its S3 key is named after.
      const key = String(fn.Properties.Code?.S3Key ?? 'missing');
      const assetDir = join(appDir, 'cdk.out', `asset.${key.replace(/\.zip$/, '')}`);
      const files = filesUnder(assetDir).sort();
      expect(files, handler).toEqual([...(manifest.handlers[handler] ?? ['missing'])].sort());
    }
  });

  it('synthesizes every workflow with cdk-nag AwsSolutions on, functions from the prebuilt bundles', () => {
    const plain = template('Plain');
    expect(
      Object.keys(plain.findResources('AWS::StepFunctions::StateMachine')).length,
    ).toBeGreaterThanOrEqual(4);
    plain.resourceCountIs('AWS::S3::Bucket', 3);
    plain.resourceCountIs('AWS::SecretsManager::Secret', 3);
    plain.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'start-scan/index.handler',
      Description: 'Security pipeline: lambdas/scan/start-scan.ts',
    });
  });

  it('uses the buckets, topic and secret the app brings, and creates none of its own', () => {
    const owned = template('Owned');
    // The team's three buckets (input, results, access logs); no pipeline bucket at all.
    owned.resourceCountIs('AWS::S3::Bucket', 3);
    expect(Object.keys(owned.findResources('AWS::S3::Bucket')).every((id) => id.startsWith('Team'))).toBe(
      true,
    );
    owned.hasResourceProperties('AWS::S3::Bucket', {
      NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
    });
    owned.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({
        detail: Match.objectLike({ bucket: { name: [{ Ref: Match.stringLikeRegexp('^TeamInput') }] } }),
      }),
    });
    // The team's secret, rotated by the pipeline; the two HMAC naming keys are the pipeline's own.
    const secrets = Object.keys(owned.findResources('AWS::SecretsManager::Secret'));
    expect(secrets.filter((id) => id.includes('ApiKey'))).toEqual([]);
    owned.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      SecretId: { Ref: Match.stringLikeRegexp('^TeamVendorKey') },
    });
    // Every alarm notifies the team's topic.
    const alarms = Object.values(owned.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(10);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^TeamAlarms/) }]);
    }
    owned.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: Match.stringLikeRegexp('^TeamAlarms') }],
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 'sns:Publish', Principal: { Service: 'cloudwatch.amazonaws.com' } }),
        ]),
      }),
    });
  });

  it('uses imported resources by name and ARN, and says which rules it could not check', () => {
    const imported = template('Imported');
    imported.resourceCountIs('AWS::S3::Bucket', 0);
    const alarms = Object.values(imported.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(10);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:111122223333:team-alarms']);
    }
    const policies = JSON.stringify(imported.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('arn:aws:secretsmanager:eu-west-1:111122223333:secret:team-vendor-key-AbCdEf');
    expect(policies).toContain('team-security-results');
    for (const prop of ['inputBucket', 'resultsBucket', 'alarmTopic', 'vendorKeySecret']) {
      expect(warnings).toContainEqual(
        expect.stringMatching(new RegExp(`^Imported: props\\.${prop} is imported`)),
      );
    }
    // Resources defined in the app are checked, not warned about.
    expect(
      warnings.filter((warning) => warning.includes('is imported') && !warning.startsWith('Imported:')),
    ).toEqual([]);
  });
});

describe('an app without cdk-nag', () => {
  it('installs without it: cdk-nag is an optional peer', () => {
    expect(bareHadNag).toBe(false);
    const manifest = JSON.parse(
      readFileSync(join(appDir, 'node_modules', PACKAGE, 'package.json'), 'utf8'),
    ) as { peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    expect(manifest.peerDependenciesMeta).toEqual({ 'cdk-nag': { optional: true } });
  });

  it("loads the construct and synthesizes; the pipeline's pack says it needs cdk-nag only when made", () => {
    const bare = Template.fromJSON(
      JSON.parse(readFileSync(join(appDir, 'cdk.bare', 'Bare.template.json'), 'utf8')),
    );
    expect(Object.keys(bare.findResources('AWS::StepFunctions::StateMachine')).length).toBeGreaterThanOrEqual(
      4,
    );
    expect(bareOutput).toContain(
      'PipelineChecks: PipelineChecks runs on cdk-nag, which this app does not have',
    );
  });
});

function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

/** The README's TypeScript example, written into the app as `file` with `extra` lines after it. */
function writeReadmeExample(file: string, extra: readonly string[]): void {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const example = /^## In your own CDK app$[\s\S]*?^```ts\n([\s\S]*?)^```/m.exec(readme)?.[1];
  expect(example, 'README.md has a ```ts example under "In your own CDK app"').toBeDefined();
  writeFileSync(join(appDir, file), [example, ...extra, ''].join('\n'));
}

/** What the app compiles: a file and the compiler options it is compiled with (its own tsconfig). */
interface Compilation {
  readonly file: string;
  readonly options: Record<string, unknown>;
}

/**
 * The README's example as an ES module app checks it: misspelt settings are compile errors, and the
 * vendor APIs' names reach the declarations.
 */
const ES_MODULE_CONSUMER: Compilation = {
  file: 'consumer.ts',
  options: { module: 'nodenext', moduleResolution: 'nodenext', noEmit: true },
};

// A CommonJS consumer (a .cts file, CommonJS whatever the app's "type"; `cdk init` apps are CommonJS).
// Its compiler settings vary with its age: node16 resolves through "exports" but may
// not require an ES module (TS1479 when the declarations looked like one); node10 (`module:
// commonjs` alone) reads the top-level "types" and "main" only.
const COMMONJS_CONSUMERS = [
  ['node16', { module: 'node16', moduleResolution: 'node16' }],
  ['commonjs (node10 resolution)', { module: 'commonjs', moduleResolution: 'node10' }],
].map(([name, options]) => {
  const slug = String(name).replace(/\W+/g, '-');
  return {
    name: String(name),
    file: `consumer-${slug}.cts`,
    outDir: `out-${slug}`,
    options: { ...(options as Record<string, unknown>), outDir: `out-${slug}` },
  };
});

/** Each compilation's tsconfig, in the app: the consumer file and its compiler options. */
const tsconfigOf = (file: string) => `tsconfig.${file}.json`;

let compiled: Promise<Record<string, string[]>> | undefined;

/**
 * Compiles every consumer file in the app, each with its own compiler options, in one process
 * (consumer-typecheck.ts): the first compilation, the ES module's, checks every declaration file it
 * reaches, as tsc does; the CommonJS ones check their own files and the package's declarations,
 * not aws-cdk-lib's 2,600 files again. Resolves to each tsconfig's error lines, once for all the
 * tests that ask.
 */
function compileConsumers(): Promise<Record<string, string[]>> {
  compiled ??= new Promise<Record<string, string[]>>((resolve) => {
    writeReadmeExample(ES_MODULE_CONSUMER.file, [
      '// Misspelt settings are compile errors, not silently ignored props.',
      '// @ts-expect-error: maxWait is a Duration, not a number of seconds',
      "new SecurityPipeline(new Stack(app, 'Other'), 'Pipeline', { poll: { maxWait: 600 } });",
      "// The vendor APIs' names reach the declarations (each API's type module registers its own).",
      "pipeline.vendorSecrets.secretFor('keys');",
      '// @ts-expect-error: the vendor has no API of that name',
      "pipeline.vendorSecrets.secretFor('key');",
    ]);
    for (const consumer of COMMONJS_CONSUMERS) writeReadmeExample(consumer.file, ['app.synth();']);
    const configs = [ES_MODULE_CONSUMER, ...COMMONJS_CONSUMERS].map(({ file, options }) => {
      writeFileSync(
        join(appDir, tsconfigOf(file)),
        JSON.stringify({
          // A fresh `cdk init` app's compiler options, skipLibCheck off, then this consumer's module settings.
          compilerOptions: { ...cdkInitCompilerOptions(), ...options },
          files: [file],
        }),
      );
      return tsconfigOf(file);
    });
    // The compiler is a tool, not a dependency: the app compiles with nothing else of this repository.
    const output = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'test/package/consumer-typecheck.ts', appDir, PACKAGE, ...configs],
      { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    resolve(JSON.parse(output) as Record<string, string[]>);
  });
  return compiled;
}

/** tsc's errors in the compilation of `file`: in the file itself or in a declaration it reaches. */
async function compileErrors(file: string): Promise<string[]> {
  return (await compileConsumers())[tsconfigOf(file)] ?? [`no compilation of ${file}`];
}

describe('the declarations', () => {
  it("type-check the README's TypeScript example against the installed package", async () => {
    expect(await compileErrors(ES_MODULE_CONSUMER.file)).toEqual([]);
  }, 180_000);

  it.each(COMMONJS_CONSUMERS.map((consumer) => [consumer.name, consumer] as const))(
    'compile for a CommonJS app with module %s, to output that requires the package',
    async (_name, consumer) => {
      expect(await compileErrors(consumer.file)).toEqual([]);
      expect(readFileSync(commonJsOutput(consumer), 'utf8')).toContain('require("vendor-security-pipeline")');
    },
    180_000,
  );

  it('load through require() in a CommonJS app, which then synthesizes', async () => {
    // The compilers' settings differ in how they resolve the package's declarations; at run time
    // both outputs are the same require() of dist/index.cjs through the package's "exports", so one
    // run shows it (a cold synthesis is about 8 s of CPU).
    const [consumer] = COMMONJS_CONSUMERS;
    if (consumer === undefined) throw new Error('no CommonJS consumer');
    expect(await compileErrors(consumer.file)).toEqual([]);
    // Run by the app's own node, with its own node_modules: the package loads through require().
    execFileSync(process.execPath, [commonJsOutput(consumer)], {
      cwd: appDir,
      env: { ...WITHOUT_CLOUDFORMATION_VALIDATION, CDK_OUTDIR: join(appDir, `cdk.${consumer.outDir}`) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(existsSync(join(appDir, `cdk.${consumer.outDir}`, 'SecOps.template.json'))).toBe(true);
  }, 300_000);
});

/** Where tsc wrote a CommonJS consumer's JavaScript. */
function commonJsOutput(consumer: (typeof COMMONJS_CONSUMERS)[number]): string {
  return join(appDir, consumer.outDir, consumer.file.replace(/\.cts$/, '.cjs'));
}
