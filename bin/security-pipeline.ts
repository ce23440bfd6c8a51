#!/usr/bin/env node
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { PipelineConfigError } from '../lib/config/errors.ts';
import { buildPipelineApp, type PipelineAppParts } from '../lib/pipeline-app.ts';
import { synthVerdict } from '../lib/synth-verdict.ts';

const app = new App();
let parts: PipelineAppParts;
try {
  parts = buildPipelineApp(app);
} catch (error) {
  if (!(error instanceof PipelineConfigError)) throw error;
  // The message lists every problem with the setting it is about; a stack trace would only hide it.
  console.error(error.message);
  process.exit(1);
}
// Synthesized here rather than when the process exits, so the last line says how it went: a
// `--quiet` synth prints no template, and a passing one would otherwise end on the last bundle.
const verdict = () =>
  synthVerdict({ outdir: app.outdir, stacks: [parts.stack.stackName], checks: parts.checks });
// A report an earlier synth left in the same folder must not speak for this one.
rmSync(join(app.outdir, VALIDATION_REPORT_FILE), { force: true });
try {
  app.synth();
} catch (error) {
  // Failed checks throw here where the CDK CLI does not take the report itself; anything else
  // failed before the checks had their say.
  const failed = verdict();
  if (failed.findings > 0) console.error(failed.line);
  throw error;
}
console.error(verdict().line);
