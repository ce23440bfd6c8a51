/**
 * A stack can be created, fail, be destroyed and be created again, and two stacks of the pipeline
 * live side by side in one account and Region:
 *
 * - no resource with a fixed physical name outlives its stack (DeletionPolicy Retain,
 *   RetainExceptOnCreate or Snapshot, or a secret in its recovery window) unless the name carries
 *   the stack ID, which is new on every create;
 * - log groups are RetainExceptOnCreate (a rolled-back first create leaves nothing behind), or
 *   Delete in `removalPolicy: destroy`;
 * - two stacks with different names in one app share no physical name and no export.
 */
import { App, Stack } from 'aws-cdk-lib';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { addPipelineStack } from '../../lib/pipeline-app.ts';
import { PHYSICAL_NAME_PROPERTIES } from '../../lib/platform/rules/fixed-name-lifetime.ts';
import { PipelineChecks } from '../../lib/platform/rules/pipeline-checks.ts';
import { type Synthesized, synth, testApp } from '../kit/synth.ts';
import { testOutdir } from '../kit/synth-outdir.ts';

type Resources = Synthesized['json']['Resources'];

/** Everything the stack can hold, so every named resource is there to check. */
const everything: PipelineConfigInput = {
  vendor: { scanApiUrl: 'https://scan.vendor.test', keys: 'per-api' },
  scan: { deleteAtVendorAfterManifest: true },
  notifications: { email: 'oncall@example.com', runsEmail: 'team@example.com' },
  domainLists: { main: { objectKey: 'lists/main.txt' } },
  schedules: [{ name: 'nightly', expression: 'cron(0 2 * * ? *)', domainList: 'main' }],
  breach: {
    reconcileSchedule: 'cron(0 3 * * ? *)',
    schedules: [{ name: 'weekly-vips', expression: 'cron(0 6 ? * MON *)', watchlistKey: 'vips.csv' }],
  },
};

/** CloudFormation's property for each resource type's physical name (the L1 name, capitalised). */
const NAME_PROPERTY = Object.fromEntries(
  Object.entries(PHYSICAL_NAME_PROPERTIES).map(([type, prop]) => [
    type,
    prop[0]?.toUpperCase() + prop.slice(1),
  ]),
);

const OUTLIVES = new Set(['Retain', 'RetainExceptOnCreate', 'Snapshot']);

/** Every resource given a physical name, with its name and deletion policy. */
function namedResources(resources: Resources) {
  return Object.entries(resources).flatMap(([id, r]) => {
    const property = NAME_PROPERTY[r.Type];
    const name = property === undefined ? undefined : r.Properties?.[property];
    const deletionPolicy = (r as { DeletionPolicy?: string }).DeletionPolicy ?? 'Delete';
    return name === undefined ? [] : [{ id, type: r.Type, name, deletionPolicy }];
  });
}

describe.each([
  ['retain', {}],
  ['destroy', { removalPolicy: 'destroy' }],
] as const)('removalPolicy %s', (mode, extra) => {
  const resources = () => synth({ ...everything, ...extra }).json.Resources;

  it('gives no resource that outlives the stack a fixed physical name', () => {
    const blocking = namedResources(resources()).filter(
      ({ type, name, deletionPolicy }) =>
        (OUTLIVES.has(deletionPolicy) || type === 'AWS::SecretsManager::Secret') &&
        !JSON.stringify(name).includes('"AWS::StackId"'),
    );
    expect(blocking).toEqual([]);
    // The state machines' log groups are the named ones; the check above must have seen them.
    expect(namedResources(resources()).filter((r) => r.type === 'AWS::Logs::LogGroup')).toHaveLength(4);
  });

  it(`makes every log group ${mode === 'retain' ? 'RetainExceptOnCreate' : 'Delete'}`, () => {
    const policies = new Set(
      Object.values(resources())
        .filter((r) => r.Type === 'AWS::Logs::LogGroup')
        .map((r) => (r as { DeletionPolicy?: string }).DeletionPolicy),
    );
    expect([...policies]).toEqual([mode === 'retain' ? 'RetainExceptOnCreate' : 'Delete']);
  });
});

describe('Pipeline-FixedNameLifetime', () => {
  function findings(build: (stack: Stack) => void): string[] {
    const app = new App({ outdir: testOutdir() });
    build(new Stack(app, 'Lifetime'));
    return new PipelineChecks(app)
      .validateScope(app)
      .violations.filter((v) => v.ruleName.endsWith('FixedNameLifetime'))
      .flatMap((v) => v.violatingResources.map((r) => r.constructPath ?? ''))
      .sort();
  }

  it('refuses a retained log group with a fixed name, and a named secret; passes generated and stack-ID names', () => {
    const paths = findings((stack) => {
      new LogGroup(stack, 'Fixed', { logGroupName: '/fixed/name' });
      new LogGroup(stack, 'Generated');
      new LogGroup(stack, 'PerCreate', { logGroupName: `/per-create/${stack.stackId}` });
      // Deleted with the stack, but its name stays taken for the recovery window (7 to 30 days).
      new CfnSecret(stack, 'NamedSecret', { name: 'vendor-key' });
    });
    expect(paths).toEqual(['Lifetime/Fixed/Resource', 'Lifetime/NamedSecret']);
  });

  it('passes the pipeline stack in both removal modes', () => {
    for (const config of [everything, { ...everything, removalPolicy: 'destroy' as const }]) {
      const app = testApp();
      addPipelineStack(app, parsePipelineConfig(config, 'test'));
      const violations = new PipelineChecks(app)
        .validateScope(app)
        .violations.filter((v) => v.ruleName.endsWith('FixedNameLifetime'));
      expect(violations).toEqual([]);
    }
  });
});

describe('two stacks in one account and Region', () => {
  /**
   * A physical name as text, with what differs per stack made concrete: the stack's name and ID,
   * and names CloudFormation generates (a Ref or GetAtt of the stack's own resource).
   */
  function render(value: unknown, stackName: string): string {
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    if (Array.isArray(value)) return value.map((v) => render(v, stackName)).join(',');
    const record = value as Record<string, unknown>;
    if (record.Ref === 'AWS::StackName') return stackName;
    if (record.Ref === 'AWS::StackId')
      return `arn:aws:cloudformation:eu-west-1:1:stack/${stackName}/id-of-${stackName}`;
    if (typeof record.Ref === 'string') return `${stackName}:${record.Ref}`;
    const join = record['Fn::Join'] as [string, unknown[]] | undefined;
    if (join) return join[1].map((v) => render(v, stackName)).join(join[0]);
    const split = record['Fn::Split'] as [string, unknown] | undefined;
    if (split) return render(split[1], stackName).split(split[0]).join('\u0000');
    const select = record['Fn::Select'] as [number, unknown] | undefined;
    if (select) return render(select[1], stackName).split('\u0000')[select[0]] ?? '';
    return `${stackName}:${JSON.stringify(record)}`;
  }

  it('synthesizes a dev and a prod stack whose physical names and exports never collide', () => {
    // Prepare: one configuration, two names, as docs/deploying.md runs dev and prod.
    const app = testApp();
    const stacks = ['SecurityPipeline-dev', 'SecurityPipeline-prod'].map((name) =>
      addPipelineStack(app, parsePipelineConfig({ ...everything, stack: { name } }, 'test')),
    );

    // Act
    const namesOf = (stack: Stack) => {
      const template = app.synth().getStackByName(stack.stackName).template as {
        Resources: Resources;
        Outputs?: Record<string, { Export?: { Name: unknown } }>;
      };
      const names = namedResources(template.Resources).map(
        ({ type, name }) => `${type} ${render(name, stack.stackName)}`,
      );
      const exports = Object.values(template.Outputs ?? {}).flatMap((o) =>
        o.Export ? [`export ${render(o.Export.Name, stack.stackName)}`] : [],
      );
      return [...names, ...exports];
    };
    const [dev, prod] = stacks.map(namesOf) as [string[], string[]];

    // Assess
    expect(stacks.map((s) => s.stackName)).toEqual(['SecurityPipeline-dev', 'SecurityPipeline-prod']);
    expect(dev.length).toBeGreaterThanOrEqual(4);
    expect(dev.filter((name) => prod.includes(name))).toEqual([]);
    expect(dev.some((name) => name.includes('/aws/vendedlogs/states/SecurityPipeline-dev-ScanDomain-'))).toBe(
      true,
    );
  });

  it('takes the stack name, account and Region from the configuration', () => {
    const app = testApp();
    const stack = addPipelineStack(
      app,
      parsePipelineConfig(
        { stack: { name: 'Pipeline-test', account: '123456789012', region: 'eu-west-1' } },
        'test',
      ),
    );
    expect([stack.stackName, stack.account, stack.region]).toEqual([
      'Pipeline-test',
      '123456789012',
      'eu-west-1',
    ]);
    expect(stack.node.id).toBe('Pipeline-test');
  });
});
