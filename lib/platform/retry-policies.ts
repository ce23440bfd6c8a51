/**
 * Retry policies shared by the state machines. Error names are the ones the handlers throw
 * (lambdas/platform/errors.ts) or Step Functions reports; renaming one breaks these rules.
 */
import { Duration } from 'aws-cdk-lib';
import { JitterType, type RetryProps } from 'aws-cdk-lib/aws-stepfunctions';
import { ERROR_NAME } from '#lambdas/platform/errors';

/** Transient failures of the Lambda service itself; the function may not even have run. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'Lambda.ClientExecutionTimeoutException',
] as const;

/** Vendor errors that may pass by themselves (429 / 5xx / timeouts / network). */
export const VENDOR_TRANSIENT_ERRORS = [
  ERROR_NAME.VendorThrottledError,
  ERROR_NAME.VendorUnavailableError,
  ERROR_NAME.VendorTimeoutError,
  ERROR_NAME.VendorNetworkError,
  // A subclass of VendorNetworkError, but Step Functions matches names exactly, not classes.
  ERROR_NAME.VendorUnframedBodyError,
] as const;

/** Secrets Manager throttling or outage while reading the API key (permanent problems are ConfigurationError). */
export const SECRET_TRANSIENT_ERRORS = [ERROR_NAME.SecretAccessError] as const;

/**
 * Never retried: a retry cannot fix them, so they go straight to the Catch. Listed for the tests
 * and for readers; no rule below may contain them.
 */
export const PERMANENT_ERRORS = [
  ERROR_NAME.VendorHttpError,
  ERROR_NAME.VendorResponseError,
  ERROR_NAME.VendorInsecureRedirectError,
  ERROR_NAME.VendorBodyTooLargeError,
  ERROR_NAME.VendorDecodingRatioError,
  ERROR_NAME.VendorDestinationRefusedError,
  ERROR_NAME.VendorJsonLimitError,
  ERROR_NAME.ReportNameRefusedError,
  ERROR_NAME.InvalidInputError,
  ERROR_NAME.ConfigurationError,
] as const;

/**
 * For every task that calls the vendor, next to its own policy: a 401/403 that survived a re-read
 * of AWSCURRENT and a try of AWSPENDING. During a key rotation that happens for the seconds between
 * the vendor's rotate and finishSecret (or longer, if a rotation step failed and is retried), so it
 * is retried past that window before the Catch treats the key as dead. Safe for non-idempotent
 * calls too: a refused request proves the vendor did nothing. No jitter, so the span is known:
 * 20 + 40 + 80 = 140 s.
 */
export const VENDOR_AUTH_RETRY: RetryProps = {
  errors: [ERROR_NAME.VendorAuthError],
  interval: Duration.seconds(20),
  backoffRate: 2,
  maxAttempts: 3,
  jitterStrategy: JitterType.NONE,
};

/** For tasks that are safe to run twice (reads, idempotent writes, DELETE). */
export const IDEMPOTENT_TASK_RETRY: RetryProps = {
  errors: [...LAMBDA_SERVICE_ERRORS, ...VENDOR_TRANSIENT_ERRORS, ...SECRET_TRANSIENT_ERRORS],
  interval: Duration.seconds(5),
  backoffRate: 2,
  maxAttempts: 5,
  maxDelay: Duration.minutes(2),
  jitterStrategy: JitterType.FULL,
};

/**
 * For calls that are not idempotent (StartScan, Recon): a blind retry after the POST may have
 * reached the vendor would start a second scan or make a second report. Only errors that prove the request was not processed are
 * retried: Lambda throttled the invocation (the handler never ran), or the vendor answered 429.
 */
export const NON_IDEMPOTENT_CALL_RETRY: RetryProps = {
  errors: ['Lambda.TooManyRequestsException', ERROR_NAME.VendorThrottledError],
  interval: Duration.seconds(10),
  backoffRate: 2,
  maxAttempts: 4,
  maxDelay: Duration.minutes(2),
  jitterStrategy: JitterType.FULL,
};

/**
 * For a non-idempotent call whose step waits out the vendor's throttling itself (it answers a 429
 * with the wait it computed, and the state machine waits it): only Lambda's own throttling. A
 * vendor 429 is not retried here, since this retry's full jitter may come back sooner than the
 * vendor's Retry-After.
 */
export const LAMBDA_THROTTLE_ONLY_RETRY: RetryProps = {
  ...NON_IDEMPOTENT_CALL_RETRY,
  errors: ['Lambda.TooManyRequestsException'],
};

/**
 * Starting a child execution: its name is deterministic, so a repeated StartExecution finds the
 * same execution (or ExecutionAlreadyExists) and never starts a second scan.
 */
export const START_CHILD_EXECUTION_RETRY: RetryProps = {
  errors: [
    'StepFunctions.ExecutionLimitExceededException',
    'StepFunctions.SdkClientException',
    'StepFunctions.AWSStepFunctionsException',
  ],
  interval: Duration.seconds(5),
  backoffRate: 2,
  maxAttempts: 6,
  maxDelay: Duration.minutes(5),
  jitterStrategy: JitterType.FULL,
};
