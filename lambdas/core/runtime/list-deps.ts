/**
 * Dependencies of the list-level handlers (prepare, summary, intake), built once per cold start
 * from the environment. Variables are validated here so a misconfigured function fails at once
 * with an error that names the variable.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { type Env, optionalEnv, readBucketEnv, requireEnv } from '#core/runtime/env';
import type { IntakeDeps } from '#core/scan/intake';
import type { ListDeps } from '#core/scan/list';

const DOMAIN_LIST_SUFFIXES = ['.txt', '.csv'];

export function listDepsFromEnvironment(env: Env = process.env): ListDeps {
  return {
    s3: new S3Client({}),
    logger: new Logger(),
    settings: {
      resultsBucket: readBucketEnv(env, 'RESULTS_BUCKET'),
      inputBucket: optionalEnv(env, 'INPUT_BUCKET'),
      suffixes: DOMAIN_LIST_SUFFIXES,
    },
  };
}

export function intakeDepsFromEnvironment(env: Env = process.env): IntakeDeps {
  return {
    sfn: new SFNClient({}),
    logger: new Logger(),
    settings: {
      stateMachineArn: requireEnv(env, 'DOMAIN_LIST_STATE_MACHINE_ARN'),
      prefix: optionalEnv(env, 'INTAKE_PREFIX') ?? 'incoming/',
      suffixes: DOMAIN_LIST_SUFFIXES,
      inputBucket: optionalEnv(env, 'INPUT_BUCKET'),
    },
  };
}
