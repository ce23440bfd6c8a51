/**
 * The verdict `cdk synth` ends with (lib/synth-verdict.ts), from the validation report aws-cdk-lib
 * writes: findings that fail the synth counted by check, warnings apart. test/stack/synth-verdict.test.ts
 * runs the app as the CDK CLI does.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { synthVerdict } from '../../lib/synth-verdict.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'synth-verdict-format-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the verdict', () => {
  function reportWith(pluginReports: unknown[]): string {
    const outdir = join(dir, 'out');
    mkdirSync(outdir, { recursive: true });
    writeFileSync(join(outdir, VALIDATION_REPORT_FILE), JSON.stringify({ pluginReports }));
    return outdir;
  }
  const violation = (severity: string) => ({ ruleName: 'r', description: 'd', severity });

  it('counts the findings that fail the synth by check, apart from the warnings, and names the report', () => {
    const outdir = reportWith([
      { pluginName: 'AwsSolutions', violations: [violation('error'), violation('error')] },
      { pluginName: 'Pipeline', violations: [violation('fatal')] },
      { pluginName: 'Construct Annotations', violations: [violation('warning')] },
    ]);

    const verdict = synthVerdict({
      outdir,
      stacks: ['Dev'],
      checks: ['AwsSolutions', 'Serverless', 'Pipeline'],
      cwd: dir,
    });

    expect(verdict.findings).toBe(3);
    expect(verdict.line).toBe(
      'Synthesis failed: the checks AwsSolutions, Serverless and Pipeline found 3 finding(s) (AwsSolutions 2, Pipeline 1), ' +
        `printed above and in ${join('out', VALIDATION_REPORT_FILE)}; 1 warning(s) printed above (Construct Annotations)`,
    );
  });

  it('says 0 findings when the checks reported nothing, relative to where it ran', () => {
    const verdict = synthVerdict({
      outdir: reportWith([]),
      stacks: ['Dev', 'Prod'],
      checks: ['AwsSolutions'],
      cwd: dir,
    });

    expect(verdict).toEqual({
      findings: 0,
      line: 'Synthesized Dev and Prod into out; the checks AwsSolutions ran: 0 findings',
    });
  });
});
