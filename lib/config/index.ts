/**
 * The pipeline's configuration: one object, validated once, read by the CDK app
 * (bin/security-pipeline.ts) and by the local runner (local/**).
 *
 * - `schema.ts`: the zod schemas of every section and the types inferred from them;
 * - `parse.ts`: section-by-section validation plus the rules that span sections;
 * - `defaults.ts`: the configuration when nothing is set (derived from the schemas);
 * - `schedule-expression.ts`: the EventBridge Scheduler expression grammar;
 * - `rotation-rules.ts`: Secrets Manager's rules for a rotation schedule and its window;
 * - `vendor-url.ts`: what a vendor base URL may be (https, or http to loopback only);
 * - `load.ts`: CDK context and configuration files;
 * - `environment.ts`: the handler environment derived from a configuration.
 *
 * Every error names the setting it is about, e.g.
 * `pipeline.poll.maxWaitSeconds must be between 1 and 3600 (got 7200)`.
 */
export { DEFAULT_PIPELINE_CONFIG } from './defaults.ts';
export {
  allowSpecialUseEnvironment,
  pollEnvironment,
  scanListFieldsEnvironment,
  statusVocabularyEnvironment,
} from './environment.ts';
export { type ConfigIssue, PipelineConfigError } from './errors.ts';
export { loadPipelineConfig, loadPipelineConfigFile, type PipelineContext } from './load.ts';
export { parsePipelineConfig } from './parse.ts';
export {
  MAX_KEY_PROPAGATION_SECONDS,
  type MirrorSecret,
  maxKeyAgeDays,
  ROTATION_CALL_RESERVE_SECONDS,
  ROTATION_FUNCTION_TIMEOUT_SECONDS,
  type RotationConfig,
  rotationPeriodDays,
  rotationScheduleProblem,
  rotationWindowProblem,
} from './rotation-schema.ts';
export { scheduleExpressionProblem } from './schedule-expression.ts';
export {
  type DataRemovalPolicy,
  DEFAULT_SCHEDULE_SETTINGS,
  type DomainListDefinition,
  type IntakeConfig,
  isLoopbackHost,
  LAMBDA_RUNTIMES,
  type LambdaRuntimeName,
  LOG_RETENTION_DAYS,
  type PipelineConfig,
  type PipelineConfigInput,
  type PollConfig,
  type ScanConfig,
  type ScheduleConfig,
  type StatusVocabularyConfig,
  VENDOR_URL_PLACEHOLDER,
  type VendorConfig,
  type VendorKeyMode,
  vendorUrlProblem,
} from './schema.ts';
export { DEFAULT_STACK_NAME, type StackConfig } from './stack-schema.ts';
