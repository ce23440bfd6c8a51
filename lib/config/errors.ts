/** The error a configuration fails with: every problem at once, each naming its setting. */

export interface ConfigIssue {
  /** Dotted path of the setting, e.g. `pipeline.poll.maxWaitSeconds`, or `schedule 'nightly' expression`. */
  readonly setting: string;
  readonly problem: string;
}

export class PipelineConfigError extends Error {
  readonly source: string;
  readonly issues: readonly ConfigIssue[];

  constructor(source: string, issues: readonly ConfigIssue[]) {
    const lines = issues.map((issue) => `  - ${issue.setting} ${issue.problem}`);
    super(`Invalid pipeline configuration (${source}):\n${lines.join('\n')}`);
    this.name = 'PipelineConfigError';
    this.source = source;
    this.issues = issues;
  }
}
