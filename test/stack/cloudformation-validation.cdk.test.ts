/**
 * aws-cdk-lib checks each synthesized template against CloudFormation's resource schemas and rules
 * (its built-in "CloudFormation Validate" plugin). cdk.json's `@aws-cdk/core:validateAgainstDefaultRules`
 * makes an error-level finding fail `cdk synth`; warning-level ones (a value outside a property's
 * allowed values, say) are only printed. Here the stack must have no finding at all. The other CDK
 * tests synthesize without the plugin (test/kit/synth.ts: about 2.5 s of CPU per configuration, 7 s
 * for the first in a process), so it runs here as `cdk synth` runs it, on the default stack and on
 * one with every optional resource switched on.
 */
import { readFileSync } from 'node:fs';
import { Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { SecurityPipelineStack } from '../../lib/security-pipeline-stack.ts';
import { appAsCdkSynth, cloudFormationFindings } from '../kit/cdk-synth.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const example = JSON.parse(
  readFileSync(new URL('../../config/pipeline.example.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, unknown>>;

/** The example configuration plus every optional resource: per-API keys, deletes at the vendor,
 * both notification topics' subscriptions, watchlist schedules and a breach reconciliation. */
const EVERYTHING_ON: PipelineConfigInput = {
  ...example,
  vendor: { ...example.vendor, keys: 'per-api' },
  scan: { ...example.scan, deleteAtVendorAfterManifest: true },
  notifications: { email: 'oncall@example.com', runsEmail: 'team@example.com' },
  breach: {
    reconcileSchedule: 'cron(0 3 * * ? *)',
    schedules: [{ name: 'weekly-vips', expression: 'cron(0 6 ? * MON *)', watchlistKey: 'vips.csv' }],
  },
} as PipelineConfigInput;

describe('CloudFormation validation, as cdk synth runs it', () => {
  // The stack with every option first: the plugin builds its rule engine again (0.2 to 0.4 s of
  // CPU) for a template with a resource type the engine was not built for, and that stack has
  // every type the others have; in the other order it was built three times.
  it.each([
    ['every optional resource switched on', EVERYTHING_ON],
    ['the default configuration', undefined],
  ])('finds nothing at all in the stack with %s', (_name, raw) => {
    // Prepare
    const app = appAsCdkSynth();
    new SecurityPipelineStack(app, 'SecurityPipeline', { config: parsePipelineConfig(raw, 'test') });

    // Act
    const findings = cloudFormationFindings(app);

    // Assess
    expect(findings).toEqual([]);
  });

  it('runs in the app cdk synth builds, and reports a value CloudFormation would refuse', () => {
    // Prepare: a value CloudFormation would refuse
    const app = appAsCdkSynth();
    const bucket = new s3.Bucket(new Stack(app, 'Refused'), 'Bucket');
    (bucket.node.defaultChild as s3.CfnBucket).addPropertyOverride(
      'VersioningConfiguration.Status',
      'Sometimes',
    );

    // Act
    const findings = cloudFormationFindings(app);

    // Assess
    expect(findings).toEqual([
      expect.stringMatching(/^warning W3030: VersioningConfiguration\.Status: 'Sometimes'/),
    ]);
    expect(cdkJson.context['@aws-cdk/core:validateAgainstDefaultRules']).toBe(true);
  });
});
