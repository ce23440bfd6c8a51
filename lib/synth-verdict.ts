/**
 * The line `cdk synth` ends with (bin/security-pipeline.ts): which stacks were synthesized and what
 * the synth-time checks found, so a synth whose template is kept off the terminal (`--quiet`) still
 * says that it passed, and a failed one how many findings failed it. The counts are the validation
 * report's, which aws-cdk-lib writes beside the templates on every synthesis; a check with nothing
 * to report has no entry there, and counts 0.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';

/** What the verdict reads of the validation report. */
interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations: readonly { readonly severity?: string }[];
  }[];
}

/** Severities that fail a synth; a warning or an informational finding is printed and passes. */
const FAILING = new Set(['error', 'fatal']);

export interface SynthOutcome {
  /** The cloud assembly's folder (the app's outdir). */
  readonly outdir: string;
  readonly stacks: readonly string[];
  /** The checks the app registered, by the name their reports carry (`AwsSolutions`, `Pipeline`…). */
  readonly checks: readonly string[];
  /** The directory paths are shown relative to. @default process.cwd() */
  readonly cwd?: string;
}

export interface SynthVerdict {
  /** Findings that fail the synth (error and fatal severity), over every check. */
  readonly findings: number;
  /** `Synthesized SecurityPipeline into cdk.out; the checks AwsSolutions, … ran: 0 findings`. */
  readonly line: string;
}

export function synthVerdict(outcome: SynthOutcome): SynthVerdict {
  const cwd = outcome.cwd ?? process.cwd();
  const reportPath = join(outcome.outdir, VALIDATION_REPORT_FILE);
  const report: ValidationReport = existsSync(reportPath)
    ? (JSON.parse(readFileSync(reportPath, 'utf8')) as ValidationReport)
    : { pluginReports: [] };
  const findings = new Map<string, number>();
  const warnings = new Map<string, number>();
  for (const plugin of report.pluginReports) {
    for (const violation of plugin.violations) {
      const tally = FAILING.has(violation.severity ?? 'error') ? findings : warnings;
      tally.set(plugin.pluginName, (tally.get(plugin.pluginName) ?? 0) + 1);
    }
  }
  const total = (tally: Map<string, number>) => [...tally.values()].reduce((sum, n) => sum + n, 0);
  const byCheck = (tally: Map<string, number>) =>
    [...tally].map(([name, count]) => `${name} ${count}`).join(', ');
  const checks = `checks ${listed(outcome.checks)}`;
  const warned =
    warnings.size === 0
      ? ''
      : `; ${total(warnings)} warning(s) printed above (${listed([...warnings.keys()])})`;
  if (findings.size > 0) {
    return {
      findings: total(findings),
      line:
        `Synthesis failed: the ${checks} found ${total(findings)} finding(s) (${byCheck(findings)}), ` +
        `printed above and in ${shownPath(cwd, reportPath)}${warned}`,
    };
  }
  return {
    findings: 0,
    line: `Synthesized ${listed(outcome.stacks)} into ${shownPath(cwd, outcome.outdir)}; the ${checks} ran: 0 findings${warned}`,
  };
}

/** `cdk.out` for a folder where the synth ran, an absolute path for one elsewhere. */
function shownPath(cwd: string, path: string): string {
  const inside = relative(cwd, path);
  return inside.startsWith('..') || isAbsolute(inside) ? path : inside || '.';
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
