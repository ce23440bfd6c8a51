/**
 * What the rotation steps work with. Clients are parameters: the Lambda passes Secrets Manager,
 * the vendor's key API and EventBridge; the tests and `npm start -- rotate` pass the stand-in and
 * the simulator.
 */
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { SecretWriter } from '#lambdas/platform/secret-writer';
import type { RotateKeyResult, VendorLogger } from '#lambdas/platform/vendor-api/types';

/** The vendor's key-management API, authorised with one fixed key. */
export interface KeyManagement {
  getKeyInfo(): Promise<{ raw: unknown }>;
  /** One `GET …/api/key` with exactly this key: true on 200, false on 401/403; throws otherwise. */
  keyAccepted(): Promise<boolean>;
  rotateKey(): Promise<RotateKeyResult>;
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
}

export interface RotationDeps {
  readonly secrets: SecretWriter;
  readonly keys: KeyManagementFactory;
  readonly events: RotationEventPublisher;
  readonly metrics: PipelineMetrics;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  readonly sleep: (ms: number) => Promise<void>;
  readonly settings: RotationSettings;
}

export const DEFAULT_ROTATION_SETTINGS = {
  claimLeaseMs: 5 * 60_000,
  peerWaitMs: 10_000,
  mirrorAttempts: 3,
} as const;
