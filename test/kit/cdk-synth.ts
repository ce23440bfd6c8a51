/**
 * Synthesis as `cdk synth` runs it, for the tests that hold documented configurations and the
 * first-deploy runbook: the App bin/security-pipeline.ts builds (lib/pipeline-app.ts) from CDK
 * context, with cdk-nag's packs, the pipeline's own rules and aws-cdk-lib's CloudFormation
 * validation all on. Only bundling is skipped (esbuild's output changes no check).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { buildPipelineApp } from '../../lib/pipeline-app.ts';
import { cdkSynthApp } from '../../local/synth/synth.ts';
import { testOutdir } from './synth-outdir.ts';

interface ValidationReport {
  readonly pluginReports: {
    readonly pluginName: string;
    readonly violations: {
      readonly ruleName: string;
      readonly description: string;
      readonly severity?: string;
    }[];
  }[];
}

/** An App as `cdk synth` builds it from cdk.json and `context` (`-c key=value`), validation included. */
export function appAsCdkSynth(context: Record<string, unknown> = {}): App {
  return cdkSynthApp({ outdir: testOutdir(), context, cloudFormationValidation: true });
}

/**
 * What the CloudFormation plugin found (warnings too, which `cdk synth` only prints), from the
 * report the synthesis writes beside the templates. Synthesizes `app`: an error-level finding of
 * any plugin (cdk-nag's included) throws, as it fails `cdk synth`.
 */
export function cloudFormationFindings(app: App): string[] {
  const report = join(app.synth().directory, 'validation-report.json');
  if (!existsSync(report)) return [];
  return (JSON.parse(readFileSync(report, 'utf8')) as ValidationReport).pluginReports
    .filter((plugin) => plugin.pluginName === 'CloudFormation Validate')
    .flatMap((plugin) => plugin.violations)
    .map((violation) => `${violation.severity ?? 'finding'} ${violation.ruleName}: ${violation.description}`);
}

/**
 * `npx cdk synth --quiet -c <context>` run in `cwd`, less bundling: the stack, cdk-nag and the
 * pipeline's rules, CloudFormation validation. Throws what would fail the synth; returns the
 * CloudFormation plugin's findings, which must be none.
 */
export function cdkSynth(
  context: Record<string, unknown>,
  cwd: string,
): { stackName: string; findings: string[] } {
  const app = appAsCdkSynth(context);
  const stack = buildPipelineApp(app, cwd);
  return { stackName: stack.stackName, findings: cloudFormationFindings(app) };
}
