/**
 * cdk-nag, loaded when a pack is made or a rule runs, never when the package is imported: it is an
 * optional peer, installed only by the apps that run it, and an app without it still loads the
 * construct (acknowledgements are `Validations.of(…).acknowledge`, aws-cdk-lib's own).
 */
import { createRequire } from 'node:module';
import type * as CdkNag from 'cdk-nag';

let loaded: typeof CdkNag | undefined;

/** The cdk-nag module, or an error saying how to install it. */
export function loadCdkNag(): typeof CdkNag {
  if (loaded !== undefined) return loaded;
  try {
    loaded = createRequire(import.meta.url)('cdk-nag') as typeof CdkNag;
  } catch (error) {
    throw new Error(
      "PipelineChecks runs on cdk-nag, which this app does not have: install it beside aws-cdk-lib (npm install --save-dev cdk-nag@^3) to run the pipeline's rules",
      { cause: error },
    );
  }
  return loaded;
}

/** cdk-nag's rule outcomes, for a rule to return. */
export const ruleCompliance = (): typeof CdkNag.NagRuleCompliance => loadCdkNag().NagRuleCompliance;
