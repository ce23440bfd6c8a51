/**
 * The platform's environment variables, named once; each workflow names its own in
 * `lambdas/<workflow>/variables.ts`. The CDK bindings set them through these names and the handlers
 * read them through the same names, so the two cannot drift apart (a renamed variable is a compile
 * error on both sides). docs/contracts.md lists which handler reads which. Each vendor API's URL
 * and key secret are named from the API's name, by `vendorApiVariables` (vendor-api-variables.ts).
 *
 * Plain data with no imports: the CDK app, the handlers and the local runner all load it.
 */
export const ENV = {
  /** Scan outputs, manifests, failure records and list summaries. */
  resultsBucket: 'RESULTS_BUCKET',
  /** Where the intakes' inputs are uploaded. */
  inputBucket: 'INPUT_BUCKET',
  /**
   * Comma-separated origins vendor requests may reach as they are, besides the APIs' base URLs
   * (every other destination must be https to a public address). Unset in a deployment by default.
   */
  vendorAllowedOrigins: 'VENDOR_ALLOWED_ORIGINS',
  /** The organisation's UUID in key-management paths. */
  orgUuid: 'ORG_UUID',
  /** The org key's secret (single mode, or the one API a function calls in per-api mode). */
  vendorKeySecretArn: 'VENDOR_API_KEY_SECRET_ARN',
  /** Comma-separated special-use suffixes scanned anyway. */
  allowSpecialUseDomains: 'ALLOW_SPECIAL_USE_DOMAINS',
  /** Key prefix and suffixes that make an upload an intake's input. */
  intakePrefix: 'INTAKE_PREFIX',
  intakeSuffixes: 'INTAKE_SUFFIXES',
  /** The EventBridge bus ApiKeyRotated is published on. */
  eventBusName: 'EVENT_BUS_NAME',
  /** The rotated secret whose age the daily check measures. */
  rotatedSecretArn: 'ROTATED_SECRET_ARN',
  /** The SSM parameter whose value (`running` or `paused`) pauses every intake and schedule. */
  pauseParameterName: 'PAUSE_PARAMETER_NAME',
  /** Comma-separated dead-letter queues whose paused starts the resume function replays. */
  heldStartQueueUrls: 'HELD_START_QUEUE_URLS',
  /** Powertools: service name and log level, set by the function defaults. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
} as const;
