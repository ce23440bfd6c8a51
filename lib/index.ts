/**
 * The package's entry point (`import { SecurityPipeline } from 'vendor-security-pipeline'`): the
 * construct, its props, the stack the app deploys, and the pipeline's own cdk-nag rules.
 */

// The vendor APIs' names (`VendorApi`) are registered by type modules no export below imports: this
// keeps them in a consumer's program, so `pipeline.vendorSecrets.secretFor('keys')` type-checks.
export type {} from '#lambdas/vendor-apis';
export type { SecurityPipelineResources, VendorKeySecrets } from './brought-resources.ts';
export {
  type ConfigIssue,
  type PipelineConfig,
  PipelineConfigError,
  type PipelineConfigInput,
  parsePipelineConfig,
} from './config/index.ts';
export type { BreachProps, WatchlistScheduleProps } from './construct/breach-props.ts';
export { pipelinePropsFromConfig } from './construct/config-to-props.ts';
export {
  type AlarmProps,
  type DomainListProps,
  type DomainListScheduleProps,
  type IntakeProps,
  type MirrorSecretProps,
  type NotificationProps,
  type PipelineScheduleProps,
  type PollProps,
  type RotationProps,
  type ScanListFieldsProps,
  type ScanProps,
  type ScanReconciliationProps,
  type ScanStatsFieldsProps,
  type SecurityPipelineSettingsProps,
  type StatusVocabularyProps,
  VendorKeyStorage,
  type VendorProps,
} from './construct/props.ts';
export { PipelineChecks } from './platform/rules/pipeline-checks.ts';
export { SecurityPipeline, type SecurityPipelineProps } from './security-pipeline.ts';
export { SecurityPipelineStack, type SecurityPipelineStackProps } from './security-pipeline-stack.ts';
