/**
 * The workflow names still in the platform's code, each with why: the layout test
 * (layout.test.ts, "names no workflow") requires exactly these counts, so a new name fails it and
 * a removed one must be taken off this list. Issue #36 asks for none; what is left is below.
 */

/** The vendor calls its three APIs scan, keys and breach (shared/seeds): the API, not the workflow. */
const VENDOR_API = 'the vendor API of that name (URL, key secret, operation names)';

export interface KnownWorkflowNames {
  readonly reason: string;
  /** Each workflow word (workflow-words.ts) and how often the file's code has it. */
  readonly words: Readonly<Record<string, number>>;
}

export const KNOWN_WORKFLOW_NAMES: Readonly<Record<string, KnownWorkflowNames>> = {
  'lambdas/platform/handler-declaration.ts': { reason: VENDOR_API, words: { breach: 1, scan: 1 } },
  'lambdas/platform/runtime/variables.ts': { reason: VENDOR_API, words: { breach: 4, scan: 4 } },
  'lambdas/platform/secrets.ts': { reason: VENDOR_API, words: { breach: 1, scan: 2 } },
  'lambdas/platform/vendor-api/types.ts': { reason: VENDOR_API, words: { breach: 1, breaches: 1, scan: 5 } },
  'lib/platform/bindings.ts': { reason: VENDOR_API, words: { scan: 1 } },
  'lib/platform/vendor-secrets.ts': { reason: VENDOR_API, words: { breach: 7, rotation: 1, scan: 5 } },
};

/** Platform files whose own path has a workflow word, with why. */
export const KNOWN_WORKFLOW_FILE_NAMES: Readonly<Record<string, string>> = {};
