/**
 * `npm run check-config -- FILE [--stack-name NAME]`: checks a pipeline configuration file the way
 * `cdk synth -c pipelineConfigFile=FILE` does, in seconds: the schema and the rules across
 * sections (lib/config/), then the stack built from it with every synth-time check (what the
 * constructs refuse, cdk-nag's packs and the pipeline's own rules). It skips what costs time and
 * checks nothing about the file: bundling the functions and CloudFormation's resource-schema
 * validation (`cdk synth` runs both).
 *
 * Every problem names its setting (`pipeline.poll.maxWaitSeconds must be …`) or the rule and the
 * resource. Exit codes: 0 the file is good, 1 it has problems, 2 usage (no file given).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PipelineConfigError } from '../lib/config/errors.ts';
import { loadPipelineConfig } from '../lib/config/load.ts';

const USAGE = 'usage: npm run check-config -- FILE [--stack-name NAME]';

/** What a check found: problems, each a line for the terminal. */
export interface ConfigCheck {
  readonly problems: readonly string[];
  /** The stack name the file gives (or the default), when the file parsed. */
  readonly stackName?: string;
}

/** Checks `file` (relative to `cwd`) as `cdk synth` would, less bundling and resource-schema validation. */
export async function checkConfigFile(
  file: string,
  options: { cwd?: string; stackName?: string } = {},
): Promise<ConfigCheck> {
  let config: ReturnType<typeof loadPipelineConfig>;
  try {
    config = loadPipelineConfig(
      {
        pipelineConfigFile: file,
        ...(options.stackName === undefined ? {} : { stackName: options.stackName }),
      },
      options.cwd,
    );
  } catch (error) {
    if (error instanceof PipelineConfigError) return { problems: error.issues.map(describeIssue) };
    throw error;
  }
  // Loaded only for a file that parsed: aws-cdk-lib and cdk-nag are most of the check's time, and
  // a file with a wrong setting is answered without them.
  const [{ addPipelineChecks, addPipelineStack }, { cdkSynthApp }] = await Promise.all([
    import('../lib/pipeline-app.ts'),
    import('../local/synth/synth.ts'),
  ]);
  const outdir = mkdtempSync(join(tmpdir(), 'security-pipeline-check-'));
  try {
    const app = cdkSynthApp({ outdir });
    try {
      addPipelineStack(app, config);
      addPipelineChecks(app);
      app.synth();
    } catch (error) {
      // A construct's refusal, or the validation report of the nag packs: both name what is wrong.
      return { problems: [(error as Error).message.trim()], stackName: config.stack.name };
    }
    return { problems: [], stackName: config.stack.name };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

function describeIssue(issue: { readonly setting: string; readonly problem: string }): string {
  return `${issue.setting} ${issue.problem}`;
}

async function main(argv: readonly string[]): Promise<number> {
  const args = [...argv];
  const nameAt = args.indexOf('--stack-name');
  const stackName = nameAt >= 0 ? args.splice(nameAt, 2)[1] : undefined;
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (args.length !== 1 || (nameAt >= 0 && stackName === undefined) || args[0]?.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  const file = args[0] as string;
  const started = performance.now();
  const { problems, stackName: name } = await checkConfigFile(
    file,
    stackName === undefined ? {} : { stackName },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (problems.length === 0) {
    console.log(
      `${file}: OK (stack ${name}; schema, cross-section rules, constructs and cdk-nag checked in ${seconds} s)`,
    );
    return 0;
  }
  console.error(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
  for (const problem of problems) console.error(`  - ${problem}`);
  return 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = await main(process.argv.slice(2));
