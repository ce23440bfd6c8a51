/**
 * The package's entry point (`import { SecurityPipeline } from 'vendor-security-pipeline'`): the
 * construct, its props, the stack the app deploys, and the pipeline's own cdk-nag rules.
 */

/** The vendor APIs' names (`scan`, `keys`, `breach`): what `vendorSecrets.secretFor(api)` takes. */
export type { VendorApi } from '../lambdas/registry.ts';
export type { SecurityPipelineResources, VendorKeySecrets } from './brought-resources.ts';
export { type ConfigIssue, PipelineConfigError } from './config/errors.ts';
export { parsePipelineConfig } from './config/parse.ts';
export type { PipelineConfig, PipelineConfigInput } from './config/schema.ts';
export type { BreachProps, WatchlistScheduleProps } from './construct/breach-props.ts';
export { pipelinePropsFromConfig } from './construct/config-to-props.ts';
export {
  BreachArchiveOrigin,
  BreachReportOutcome,
  ScanFailureReason,
} from './construct/metric-dimensions.ts';
export {
  type AlarmProps,
  type DomainListProps,
  type DomainListScheduleProps,
  type IntakeProps,
  type MirrorSecretProps,
  type NotificationProps,
  type PollProps,
  type RotationProps,
  type SecurityPipelineSettingsProps,
  VendorKeyStorage,
  type VendorProps,
} from './construct/props.ts';
export type {
  ScanListFieldsProps,
  ScanProps,
  ScanReconciliationProps,
  ScanStatsFieldsProps,
  StatusVocabularyProps,
} from './construct/scan-props.ts';
export type { PipelineScheduleProps } from './construct/schedule-props.ts';
export { SecurityPipelineBase } from './construct/security-pipeline-base.ts';
// The classes of SecurityPipeline's public members, so a team can name their types.
export type { DeadLetterQueue } from './platform/dead-letter-queue.ts';
export type { PipelineStorage } from './platform/pipeline-storage.ts';
export { PipelineChecks } from './platform/rules/pipeline-checks.ts';
export type { ScheduledCatchUp } from './platform/scheduled-catch-up.ts';
export type { ScheduledRuns } from './platform/scheduled-runs.ts';
export type { UploadIntake } from './platform/upload-intake.ts';
export type { VendorSecrets } from './platform/vendor-secrets.ts';
export { SecurityPipeline, type SecurityPipelineProps } from './security-pipeline.ts';
export { SecurityPipelineStack, type SecurityPipelineStackProps } from './security-pipeline-stack.ts';
export type { BreachWorkflow } from './workflows/breach/breach-workflow.ts';
export type { DomainListWorkflow } from './workflows/domain-list/domain-list-workflow.ts';
export type { AlarmNotifications } from './workflows/operations/alarm-notifications.ts';
export type { PipelineDashboard } from './workflows/operations/pipeline-dashboard.ts';
export type { PipelineMetricAlarms } from './workflows/operations/pipeline-metric-alarms.ts';
export type { PipelinePause } from './workflows/operations/pipeline-pause.ts';
export type { RunNotifications } from './workflows/operations/run-notifications.ts';
export type { VendorStatistics } from './workflows/operations/vendor-statistics.ts';
export type { KeyRotation } from './workflows/rotation/key-rotation.ts';
export type { EarlyEndWatcher } from './workflows/scan/early-end-watcher.ts';
export type { ScanReconciliation } from './workflows/scan/scan-reconciliation.ts';
export type { ScanWorkflow } from './workflows/scan/scan-workflow.ts';
export type { WatchlistWorkflow } from './workflows/watchlist/watchlist-workflow.ts';
