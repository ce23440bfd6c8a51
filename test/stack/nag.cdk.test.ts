import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { PipelineChecks } from '../../lib/platform/rules/pipeline-checks.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { testApp } from '../kit/synth.ts';

/** Everything the stack can contain: optional delete step, per-API secrets, schedules, destroy mode. */
const everything: PipelineConfigInput = {
  vendor: { scanApiUrl: 'https://scan.vendor.test', keys: 'per-api' },
  scan: { deleteAtVendorAfterManifest: true },
  removalPolicy: 'destroy',
  domainLists: { main: { objectKey: 'lists/main.txt' } },
  schedules: [
    { name: 'nightly', expression: 'cron(0 2 * * ? *)', domainList: 'main' },
    { name: 'hourly', expression: 'rate(1 hour)', domains: ['example.com'] },
  ],
};

function build(raw?: PipelineConfigInput) {
  const app = testApp();
  const stack = new SecurityPipelineStack(app, 'SecurityPipeline', {
    config: parsePipelineConfig(raw, 'test'),
  });
  return { app, stack };
}

/** Acknowledged rule ids recorded on `construct` itself (not on its children). */
function acknowledgementsOn(construct: IConstruct): Record<string, string> {
  return Object.assign(
    {},
    ...construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .map((entry) => entry.data as Record<string, string>),
  );
}

const PACKS = {
  AwsSolutions: (app: App) => new AwsSolutionsChecks(app, { verbose: true }),
  Serverless: (app: App) => new ServerlessChecks(app, { verbose: true }),
};

describe('cdk-nag AwsSolutions and Serverless', () => {
  it.each([
    ['AwsSolutions', 'the default configuration', undefined],
    ['AwsSolutions', 'every optional feature', everything],
    ['Serverless', 'the default configuration', undefined],
    ['Serverless', 'every optional feature', everything],
  ] as const)('%s reports no unacknowledged finding for %s', (pack, _name, raw) => {
    // Prepare
    const { app } = build(raw);
    app.synth();

    // Act
    const report = PACKS[pack](app).validateScope(app);

    // Assess
    const findings = report.violations.map(
      (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );
    expect(findings).toEqual([]);
  });

  it('passes the synth-time validation the CDK app registers', () => {
    const { app } = build(everything);
    Validations.of(app).addPlugins(PACKS.AwsSolutions(app), PACKS.Serverless(app), new PipelineChecks(app));
    expect(() => app.synth()).not.toThrow();
  });

  it('acknowledges SMG4 only on secrets the stack does not rotate, saying why', () => {
    const rotated = build().stack.pipeline.vendorSecrets.secrets;
    expect(rotated.map((secret) => acknowledgementsOn(secret)['Annotation::AwsSolutions-SMG4'])).toEqual([
      undefined,
    ]);
    const off = build({ rotation: { enabled: false } }).stack.pipeline.vendorSecrets.secrets;
    expect(acknowledgementsOn(off[0] as IConstruct)['Annotation::AwsSolutions-SMG4']).toMatch(
      /rotation\.enabled is false/,
    );
    const perApi = build({ vendor: { keys: 'per-api' } }).stack.pipeline.vendorSecrets;
    const reasons = perApi.secrets.map(
      (secret) => acknowledgementsOn(secret)['Annotation::AwsSolutions-SMG4'],
    );
    expect(reasons.filter((reason) => reason === undefined)).toHaveLength(1);
    expect(acknowledgementsOn(perApi.secretFor('keys'))['Annotation::AwsSolutions-SMG4']).toBeUndefined();
    for (const reason of reasons.filter(Boolean)) expect(reason).toMatch(/rotates the org key only/);
  });

  it('acknowledges rules on individual resources only, never the stack, each with a reason', () => {
    // Prepare
    const { stack } = build(everything);
    const acknowledged: [string, string, string][] = [];
    for (const construct of stack.node.findAll()) {
      for (const [id, reason] of Object.entries(acknowledgementsOn(construct))) {
        acknowledged.push([construct.node.path, id, reason]);
      }
    }

    // Assess
    expect(acknowledgementsOn(stack)).toEqual({});
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const [path, id, reason] of acknowledged) {
      expect(reason.length, `${path} ${id}`).toBeGreaterThan(40);
      // Wildcard permissions are acknowledged one finding at a time, never the whole IAM5 rule.
      if (id.includes('AwsSolutions-IAM5')) expect(id, path).toMatch(/AwsSolutions-IAM5\[.+\]$/);
    }
  });

  it('does not acknowledge a wildcard on a whole bucket for the results bucket', () => {
    const { stack } = build();
    const ids = stack.node.findAll().flatMap((c) => Object.keys(acknowledgementsOn(c)));
    expect(ids.filter((id) => /StorageResults\w+\.Arn>\/\*\]/.test(id))).toEqual([]);
  });
});
