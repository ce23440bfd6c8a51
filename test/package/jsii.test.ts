/**
 * The construct for every jsii language: jsii compiles its facade and props (scripts/jsii-build.ts)
 * into an assembly, `jsii-pacmak --code-only` generates the Python package from it, and the
 * compiled facade, with the TypeScript package's build bundled as its implementation, synthesizes
 * in a CDK app. Built once for the file (the implementation's build and jsii take a minute or two).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecurityPipelineBase } from '../../lib/construct/security-pipeline-base.ts';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';
import { buildJsiiPackage, type JsiiBuild } from '../../scripts/jsii-build.ts';

interface AssemblyType {
  readonly kind: 'class' | 'interface' | 'enum';
  readonly docs?: { readonly summary?: string };
  readonly properties?: {
    readonly name: string;
    readonly optional?: boolean;
    readonly type: unknown;
    readonly docs?: { readonly summary?: string; readonly default?: string };
  }[];
  readonly methods?: { readonly name: string }[];
  readonly members?: { readonly name: string }[];
}

let build: JsiiBuild;
let implementationDir = '';
let types: Record<string, AssemblyType>;
const PACKAGE = 'vendor-security-pipeline-jsii';

beforeAll(() => {
  implementationDir = mkdtempSync(join(tmpdir(), 'security-pipeline-implementation-'));
  // The TypeScript package's stage: its dist/ is the implementation the facade bundles.
  execFileSync(
    process.execPath,
    ['--import', 'tsx', 'scripts/build-package.ts', '--stage', implementationDir],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  build = buildJsiiPackage({ implementation: join(implementationDir, 'dist') });
  types = (JSON.parse(readFileSync(build.assembly, 'utf8')) as { types: Record<string, AssemblyType> }).types;
}, 300_000);

afterAll(() => {
  if (build !== undefined) rmSync(build.packageDir, { recursive: true, force: true });
  if (implementationDir !== '') rmSync(implementationDir, { recursive: true, force: true });
});

const typeNamed = (name: string): AssemblyType => {
  const found = types[`${PACKAGE}.${name}`];
  if (found === undefined) throw new Error(`the assembly has no type ${name}`);
  return found;
};

describe('the jsii assembly', () => {
  it('holds the construct with its members, grants and metrics', () => {
    const pipeline = typeNamed('SecurityPipeline');
    expect(pipeline.kind).toBe('class');
    expect(pipeline.properties?.map((property) => property.name)).toEqual(
      expect.arrayContaining(['resultsBucket', 'scanStateMachine', 'breachStateMachine', 'alarmTopic']),
    );
    expect(pipeline.methods?.map((method) => method.name)).toEqual(
      expect.arrayContaining([
        'grantStartScan',
        'grantReadResults',
        'grantStartBreachReport',
        'grantReadBreachReports',
        'metricScansFailed',
        'metricApiKeyAge',
      ]),
    );
  });

  it('offers every grant and metric of the TypeScript construct, and no other method', () => {
    const typescript = Object.getOwnPropertyNames(SecurityPipelineBase.prototype).filter(
      (name) => name !== 'constructor',
    );
    const facade = (typeNamed('SecurityPipeline').methods ?? []).map((method) => method.name);
    expect(facade.sort()).toEqual(typescript.sort());
  });

  it("gives each prop CDK's type and its documented default", () => {
    const poll = typeNamed('PollProps');
    const maxWait = poll.properties?.find((property) => property.name === 'maxWait');
    expect(maxWait).toMatchObject({
      optional: true,
      type: { fqn: 'aws-cdk-lib.Duration' },
      docs: { default: 'Duration.seconds(300)' },
    });
    const settings = typeNamed('SecurityPipelineSettingsProps');
    expect(settings.properties?.find((property) => property.name === 'removalPolicy')?.type).toEqual({
      fqn: 'aws-cdk-lib.RemovalPolicy',
    });
    expect(typeNamed('VendorKeyStorage').members?.map((member) => member.name)).toEqual([
      'SINGLE',
      'PER_API',
    ]);
    // Every struct property has a summary: nothing reaches Python undocumented.
    const undocumented = Object.entries(types).flatMap(([fqn, type]) =>
      (type.properties ?? [])
        .filter((property) => !property.docs?.summary)
        .map((property) => `${fqn}.${property.name}`),
    );
    expect(undocumented).toEqual([]);
  });
});

describe('the Python package', () => {
  it('is generated from the assembly, the construct and its props in snake case', () => {
    const module = join(build.pythonDir, 'src/vendor_security_pipeline/__init__.py');
    expect(existsSync(module)).toBe(true);
    const python = readFileSync(module, 'utf8');
    expect(python).toContain('class SecurityPipeline(');
    expect(python).toContain('def grant_start_scan(');
    expect(python).toMatch(/max_wait: typing\.Optional\["_aws_cdk_\w+\.Duration"\] = None/);
    expect(python).toContain('Default: Duration.seconds(300)');
  });
});

describe('the compiled facade', () => {
  it('synthesizes the pipeline from its bundled implementation, props in CDK types, grants on the team role', () => {
    copyFileSync(
      join(import.meta.dirname, 'fixtures/jsii-facade-app.cjs'),
      join(build.packageDir, 'app.cjs'),
    );
    const outdir = join(build.packageDir, 'cdk.out');
    const printed = execFileSync(process.execPath, ['app.cjs', outdir], {
      cwd: build.packageDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const template = JSON.parse(readFileSync(join(outdir, 'Facade.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    };
    const resources = Object.values(template.Resources);
    expect(
      resources.filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine').length,
    ).toBeGreaterThanOrEqual(4);
    const policies = JSON.stringify(resources.filter((resource) => resource.Type === 'AWS::IAM::Policy'));
    expect(policies).toContain('states:StartExecution');
    // A bad prop is the implementation's problem report, naming the prop and its unit.
    expect(printed).toContain('props.poll.maxWait (in seconds) must be between 1 and 3600 (got 7200)');
  }, 120_000);
});
