/**
 * The rotation function's wiring from its environment: Secrets Manager (reader and writer of the
 * rotated secret and its mirrors), the vendor's key API at KEYS_API_URL, EventBridge for
 * ApiKeyRotated. No key is ever in the environment: the function reads it from the secret.
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import { numberFromText, parseWith } from '#lambdas/platform/schema';
import { createSecretWriter } from '#lambdas/platform/secret-writer';
import { KeysClient } from '#lambdas/platform/vendor-api/keys-client';
import type { VendorHttpSettings } from '#lambdas/platform/vendor-api/types';
import {
  DEFAULT_ROTATION_SETTINGS,
  type KeyManagementFactory,
  type RotationDeps,
  type RotationEventPublisher,
} from '#lambdas/rotation/deps';
import { type Env, optionalEnv, readUrlEnv } from '../platform/runtime/env.ts';
import { putEvent } from '../platform/runtime/event-bridge.ts';
import { pipelineLoggerFromPowertools } from '../platform/runtime/logger.ts';
import {
  type Observability,
  powertoolsMetrics,
  vendorMetricsObserver,
} from '../platform/runtime/observability.ts';
import { ENV } from '../platform/runtime/variables.ts';

export const ROTATION_EVENT = {
  source: 'security-pipeline.key-rotation',
  detailType: 'ApiKeyRotated',
} as const;

export interface RotationClients {
  readonly secretsManager: SecretsManagerClient;
  readonly eventBridge: EventBridgeClient;
}

/** Opens the key API with one fixed key: no refresh and no pending fallback can change it. */
export function keyManagementFactory(
  settings: Omit<VendorHttpSettings, 'credentials'>,
): KeyManagementFactory {
  return (apiKey, orgUuid) =>
    new KeysClient({
      ...settings,
      orgUuid,
      credentials: async (request) => (request?.pending === true ? undefined : apiKey),
    });
}

/** Publishes ApiKeyRotated; a rejected entry is an error, not a silent drop. */
export function eventBridgePublisher(
  client: EventBridgeClient,
  busName: string | undefined,
): RotationEventPublisher {
  return {
    publish: (detail) =>
      putEvent(client, {
        source: ROTATION_EVENT.source,
        detailType: ROTATION_EVENT.detailType,
        detail,
        busName,
      }),
  };
}

const leaseSeconds = numberFromText({ min: 60, max: 3600, integer: true });

export function rotationDepsFromEnvironment(
  env: Env,
  tools: Observability,
  clients: RotationClients,
): RotationDeps {
  const logger = pipelineLoggerFromPowertools(tools.logger);
  const metrics: PipelineMetrics = powertoolsMetrics(tools.metrics);
  const lease = optionalEnv(env, ENV.rotationClaimLeaseSeconds);
  const mirrors = optionalEnv(env, ENV.rotationMirrorSecretArns);
  return {
    secrets: createSecretWriter(clients.secretsManager),
    keys: keyManagementFactory({
      baseUrl: readUrlEnv(env, ENV.keysApiUrl),
      logger,
      observer: vendorMetricsObserver(metrics),
    }),
    events: eventBridgePublisher(clients.eventBridge, optionalEnv(env, ENV.eventBusName)),
    metrics,
    logger,
    clock: () => new Date(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    settings: {
      orgUuid: optionalEnv(env, ENV.orgUuid),
      claimLeaseMs:
        lease === undefined
          ? DEFAULT_ROTATION_SETTINGS.claimLeaseMs
          : parseWith(leaseSeconds, lease, ENV.rotationClaimLeaseSeconds) * 1000,
      peerWaitMs: DEFAULT_ROTATION_SETTINGS.peerWaitMs,
      mirrorSecretIds:
        mirrors === undefined
          ? []
          : mirrors
              .split(',')
              .map((arn) => arn.trim())
              .filter(Boolean),
      mirrorAttempts: DEFAULT_ROTATION_SETTINGS.mirrorAttempts,
      newKeyFieldPath: optionalEnv(env, ENV.newKeyFieldPath),
    },
  };
}
