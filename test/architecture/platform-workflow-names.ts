/**
 * The workflow names still in the platform's code, each with why: the layout test
 * (layout.test.ts, "names no workflow") requires exactly these counts, so a new name fails it and
 * a removed one must be taken off this list. Issue #36 asks for none; what is left is below.
 */

export interface KnownWorkflowNames {
  readonly reason: string;
  /** Each workflow word (workflow-words.ts) and how often the file's code has it. */
  readonly words: Readonly<Record<string, number>>;
}

export const KNOWN_WORKFLOW_NAMES: Readonly<Record<string, KnownWorkflowNames>> = {};

/** Platform files whose own path has a workflow word, with why. */
export const KNOWN_WORKFLOW_FILE_NAMES: Readonly<Record<string, string>> = {};
