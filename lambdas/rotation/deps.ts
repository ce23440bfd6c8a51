/**
 * What the rotation steps work with. Clients are parameters: the Lambda passes Secrets Manager,
 * the vendor's key API and EventBridge; the tests and `npm start -- rotate` pass the stand-in and
 * the simulator.
 *
 * The wiring below imports the vendor's key client: rotation has one function, which calls the
 * vendor, so no bundle carries a client it does not use.
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { numberFromText, parseWith } from '#lambdas/platform/input/schema';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { MetricName } from '#lambdas/registry';
import { createSecretWriter, type SecretWriter } from '#lambdas/rotation/secret-writer';
import { ROTATION_VARIABLES } from '#lambdas/rotation/variables';
import { KeysClient } from '#lambdas/vendor-api/keys/keys-client';
import type { KeyProbe, RotateKeyOptions, RotateKeyResult } from '#lambdas/vendor-api/keys/types';
import type { RetryMode } from '#lambdas/vendor-api/transport/http';
import type { VendorHttpSettings, VendorLogger } from '#lambdas/vendor-api/transport/types';
import { type Env, optionalEnv, readOriginsEnv, readUrlEnv } from '../platform/runtime/env.ts';
import { putEvent } from '../platform/runtime/event-bridge.ts';
import { pipelineLoggerFromPowertools } from '../platform/runtime/logger.ts';
import {
  type Observability,
  powertoolsMetrics,
  vendorMetricsObserver,
} from '../platform/runtime/observability.ts';
import { ENV } from '../platform/runtime/variables.ts';
import { vendorApiVariables } from '../platform/runtime/vendor-api-variables.ts';

/** The vendor's key-management API, authorised with one fixed key. */
export interface KeyManagement {
  getKeyInfo(): Promise<{ raw: unknown }>;
  /** What one `GET …/api/key` with exactly this key says of it (KeysClient.probeKey). */
  probeKey(retry?: RetryMode): Promise<KeyProbe>;
  /** As probeKey, retried: true when it works, false when not; throws when the vendor proves nothing. */
  keyAccepted(): Promise<boolean>;
  /** Rotates; the answer is read to its end within `options.timeoutMs` (KeysClient.rotateKey). */
  rotateKey(options: RotateKeyOptions): Promise<RotateKeyResult>;
  close(): Promise<void>;
}

/** Opens the key-management API for `orgUuid`, sending `apiKey` and no other. */
export type KeyManagementFactory = (apiKey: string, orgUuid: string) => KeyManagement;

/** The ApiKeyRotated event: who, which secret and version, when. Never the key. */
export interface ApiKeyRotatedDetail {
  readonly orgUuid: string;
  readonly secretArn: string;
  readonly versionId: string;
  readonly rotatedAt: string;
}

export interface RotationEventPublisher {
  publish(detail: ApiKeyRotatedDetail): Promise<void>;
}

export interface RotationSettings {
  /** The org whose key is rotated, when the secret has no `orgUuid`. */
  readonly orgUuid: string | undefined;
  /**
   * How long a claim protects an invocation that may still be calling the vendor: the function's
   * timeout plus a margin. Only after it may another invocation probe and take over.
   */
  readonly claimLeaseMs: number;
  /** How long an invocation that met a live claim waits for that rotation's answer to be stored. */
  readonly peerWaitMs: number;
  /** Secrets that integrations read and that get the new value after every rotation. */
  readonly mirrorSecretIds: readonly string[];
  /** Attempts per mirror (write, then read back and compare). */
  readonly mirrorAttempts: number;
  /**
   * Dot path of the new key in the rotate answer (`rotation.newKeyFieldPath`): probed first. The
   * other strings in the answer are probed after it, so a wrong path costs requests, not the key.
   */
  readonly newKeyFieldPath?: string | undefined;
  /**
   * How long after the rotate answer a key in it may still be refused because it has not reached
   * every vendor server yet (`rotation.keyPropagationSeconds`): the candidates are probed again,
   * with backoff, until then, and only a window without an accepted candidate is a lockout.
   */
  readonly keyPropagationMs: number;
  /**
   * The invocation's time when Lambda's context does not tell it (the local runner, tests): the
   * function's timeout.
   */
  readonly invocationMs: number;
  /**
   * Time kept back at the end of an invocation: after the rotate exchange, to store its answer;
   * after probing, to store the key found. The rotate answer may take the rest, however slow.
   */
  readonly reserveMs: number;
}

export interface RotationDeps {
  readonly secrets: SecretWriter;
  readonly keys: KeyManagementFactory;
  readonly events: RotationEventPublisher;
  readonly metrics: PipelineMetrics<MetricName>;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  readonly settings: RotationSettings;
}

export const DEFAULT_ROTATION_SETTINGS = {
  claimLeaseMs: 5 * 60_000,
  peerWaitMs: 10_000,
  mirrorAttempts: 3,
  keyPropagationMs: 180_000,
  invocationMs: 600_000,
  reserveMs: 20_000,
} as const;

// ---------------------------------------------------------------------------------------------
// The rotation function's wiring from its environment: Secrets Manager (reader and writer of the
// rotated secret and its mirrors), the vendor's key API at KEYS_API_URL, EventBridge for
// ApiKeyRotated. No key is ever in the environment: the function reads it from the secret.
// ---------------------------------------------------------------------------------------------

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
const propagationSeconds = numberFromText({ min: 0, max: 900, integer: true });

export function rotationDepsFromEnvironment(
  env: Env,
  tools: Observability,
  clients: RotationClients,
): RotationDeps {
  const logger = pipelineLoggerFromPowertools(tools.logger);
  const metrics: PipelineMetrics<MetricName> = powertoolsMetrics(tools.metrics);
  const lease = optionalEnv(env, ROTATION_VARIABLES.claimLeaseSeconds);
  const mirrors = optionalEnv(env, ROTATION_VARIABLES.mirrorSecretArns);
  const propagation = optionalEnv(env, ROTATION_VARIABLES.keyPropagationSeconds);
  return {
    secrets: createSecretWriter(clients.secretsManager),
    keys: keyManagementFactory({
      baseUrl: readUrlEnv(env, vendorApiVariables('keys').url),
      allowedOrigins: readOriginsEnv(env, ENV.vendorAllowedOrigins),
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
          : parseWith(leaseSeconds, lease, ROTATION_VARIABLES.claimLeaseSeconds) * 1000,
      peerWaitMs: DEFAULT_ROTATION_SETTINGS.peerWaitMs,
      mirrorSecretIds:
        mirrors === undefined
          ? []
          : mirrors
              .split(',')
              .map((arn) => arn.trim())
              .filter(Boolean),
      mirrorAttempts: DEFAULT_ROTATION_SETTINGS.mirrorAttempts,
      newKeyFieldPath: optionalEnv(env, ROTATION_VARIABLES.newKeyFieldPath),
      keyPropagationMs:
        propagation === undefined
          ? DEFAULT_ROTATION_SETTINGS.keyPropagationMs
          : parseWith(propagationSeconds, propagation, ROTATION_VARIABLES.keyPropagationSeconds) * 1000,
      // Lambda's context tells every invocation its time; this is for a caller without one.
      invocationMs: DEFAULT_ROTATION_SETTINGS.invocationMs,
      reserveMs: DEFAULT_ROTATION_SETTINGS.reserveMs,
    },
  };
}
