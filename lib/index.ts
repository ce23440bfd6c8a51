/**
 * The package's entry point (`import { SecurityPipeline } from 'vendor-security-pipeline'`): the
 * construct, its props, the stack the app deploys, and the pipeline's own cdk-nag rules.
 */

// The vendor APIs' names (`VendorApi`) are registered by type modules no export below imports: this
// keeps them in a consumer's program, so `pipeline.vendorSecrets.secretFor('keys')` type-checks.
export type {} from '#lambdas/vendor-apis';
export type { SecurityPipelineResources } from './brought-resources.ts';
export {
  type ConfigIssue,
  type PipelineConfig,
  PipelineConfigError,
  type PipelineConfigInput,
  parsePipelineConfig,
} from './config/index.ts';
export { PipelineChecks } from './platform/rules/pipeline-checks.ts';
export {
  SecurityPipeline,
  type SecurityPipelineProps,
  type SecurityPipelineSettings,
} from './security-pipeline.ts';
export { SecurityPipelineStack, type SecurityPipelineStackProps } from './security-pipeline-stack.ts';
