/**
 * Deps of the watchlist steps: the breach settings, the identity key's secret
 * (BREACH_IDENTITY_KEY_SECRET_ARN, read once per cold start and cached) and, for the summary,
 * DescribeExecution on BreachReport executions (BREACH_STATE_MACHINE_ARN).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { ConfigurationError } from '#core/errors';
import { type Env, optionalEnv } from '#core/runtime/env';
import { sfnExecutionLookup } from '#core/runtime/execution-lookup';
import { NO_S3_ACCESS } from '#core/runtime/no-access';
import type { Observability } from '#core/runtime/observability';
import { ENV } from '#core/runtime/variables';
import { createSecretsManagerReader, type SecretReader } from '#core/secrets';
import type { WatchlistDeps } from '#core/workflows/breach/watchlist-run';
import { breachSettingsFromEnv } from './breach-deps.ts';
import { scanLoggerFromPowertools } from './logger.ts';

/** The identity key is no vendor key, but is read through the same reader. */
function secretReader(tools: Observability, secrets?: SecretReader): SecretReader {
  return (
    secrets ??
    createSecretsManagerReader({ client: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})) })
  );
}

export function watchlistDepsFromEnvironment(
  env: Env,
  tools: Observability,
  options: { readonly s3?: S3Client; readonly secrets?: SecretReader } = {},
): WatchlistDeps {
  const settings = breachSettingsFromEnv(env);
  const secretId = optionalEnv(env, ENV.breachIdentityKeySecretArn);
  const breachStateMachineArn = optionalEnv(env, ENV.breachStateMachineArn);
  const reader = secretId === undefined ? undefined : secretReader(tools, options.secrets);
  let key: Promise<string> | undefined;
  return {
    s3: options.s3 ?? NO_S3_ACCESS,
    logger: scanLoggerFromPowertools(tools.logger),
    clock: () => new Date(),
    settings: { resultsBucket: settings.resultsBucket, maxEmails: settings.maxEmails },
    ...(breachStateMachineArn === undefined
      ? {}
      : {
          executions: sfnExecutionLookup(
            tools.tracer.captureAWSv3Client(new SFNClient({})),
            breachStateMachineArn,
          ),
        }),
    identityKey: () => {
      if (secretId === undefined || reader === undefined) {
        return Promise.reject(
          new ConfigurationError(
            ENV.breachIdentityKeySecretArn,
            'is required: the secret of the key that names people',
          ),
        );
      }
      key ??= reader.getSecretString(secretId).catch((error: unknown) => {
        key = undefined;
        throw error;
      });
      return key;
    },
  };
}
