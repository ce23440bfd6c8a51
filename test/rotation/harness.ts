/**
 * One rotation world: the vendor simulator over loopback, the stateful Secrets Manager stand-in
 * behind aws-sdk-client-mock, a clock the tests move, and the real rotation steps wired to them.
 */
import {
  CreateSecretCommand,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { afterEach } from 'vitest';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import type { ApiKeyRotatedDetail, RotationDeps } from '#lambdas/rotation/deps';
import { keyManagementFactory } from '#lambdas/rotation/deps';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import { createSecretWriter } from '#lambdas/rotation/secret-writer';
import { driveRotation, LOCAL_ROTATION_LAMBDA_ARN } from '#local/runner/rotation-driver';
import { SecretsManagerStandIn, type StandInHook } from '#local/services/secrets-manager/stand-in';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { createMemoryLogger } from '../kit/loggers.ts';
import { mockSecretsManager } from '../kit/secrets-manager-mock.ts';

export const ROTATE_ROUTE = 'POST /orgs/{org_uuid}/api/key/rotate';
export const KEY_INFO_ROUTE = 'GET /orgs/{org_uuid}/api/key';
export const LEASE_MS = 180_000;
/** The ARN RotateSecret names; the stand-in invokes the real steps behind it. */
export const ROTATION_FUNCTION_ARN = LOCAL_ROTATION_LAMBDA_ARN;

/** A crash: the process dies here, so nothing after it in that invocation happens. */
export class SimulatedCrash extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'SimulatedCrash';
  }
}

export function throttling(): Error {
  return new SecretsManagerServiceException({
    name: 'ThrottlingException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Rate exceeded',
  });
}

export interface RotationWorld {
  readonly sim: VendorSimulator;
  readonly store: SecretsManagerStandIn;
  readonly client: SecretsManagerClient;
  readonly secretId: string;
  readonly deps: RotationDeps;
  readonly metrics: ReturnType<typeof createMetricsRecorder>;
  readonly logger: ReturnType<typeof createMemoryLogger>;
  readonly events: ApiKeyRotatedDetail[];
  /** Every key the vendor ever issued, oldest first. */
  readonly now: { ms: number };
  /** Moves the clock (a later Secrets Manager attempt, after the claim lease). */
  advance(ms: number): void;
  /** Runs one rotation as Secrets Manager would (resuming an unfinished token). */
  rotate(): ReturnType<typeof driveRotation>;
  /** Installs a Secrets Manager fault; see {@link StandInHook}. */
  onSecretsCall(hook: StandInHook | undefined): void;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Status polls before a simulated scan finishes. @default 0 */
  readonly pollsToFinish?: number;
  readonly newKeyFieldPath?: string;
  /** The propagation window (rotation.keyPropagationSeconds), on the test's clock. @default 60 s */
  readonly keyPropagationMs?: number;
  /**
   * The vendor keeps the test's clock too, so a key refused for a while (`delaySeconds`) starts
   * working as the rotation's sleeps move the clock. @default false: the vendor's own clock
   */
  readonly vendorOnTestClock?: boolean;
  readonly mirrorSecretIds?: readonly string[];
  /** The secret's first value. @default the simulator's key, the org and a note */
  readonly initialValue?: (sim: VendorSimulator) => string;
  /** The key API the rotation calls, instead of the simulator's (test/kit/generated-vendor.ts). */
  readonly keysApiUrl?: string;
  /** The test's clock, shared with such a key API. @default a clock of its own, from 2026-11-01 */
  readonly now?: { ms: number };
}

export async function createRotationWorld(options: WorldOptions = {}): Promise<RotationWorld> {
  const now = options.now ?? { ms: Date.parse('2026-11-01T00:00:00Z') };
  const clock = () => new Date(now.ms);
  const sim = await startVendorSimulator({
    pollsToFinish: options.pollsToFinish ?? 0,
    ...(options.vendorOnTestClock ? { now: clock } : {}),
  });
  const store = new SecretsManagerStandIn(clock);
  const { mock } = mockSecretsManager(store);
  const client = new SecretsManagerClient({ region: 'eu-west-1' });
  const created = await client.send(
    new CreateSecretCommand({
      Name: 'vendor/org-key',
      SecretString:
        options.initialValue?.(sim) ??
        JSON.stringify({ apiKey: sim.apiKey, orgUuid: sim.orgUuid, note: 'kept across rotations' }),
    }),
  );
  const metrics = createMetricsRecorder();
  const logger = createMemoryLogger();
  const events: ApiKeyRotatedDetail[] = [];
  const sleep = async (ms: number) => {
    now.ms += ms;
  };
  const deps: RotationDeps = {
    secrets: createSecretWriter(client, { sleep, random: () => 0.5 }),
    keys: keyManagementFactory({
      baseUrl: options.keysApiUrl ?? sim.url,
      retry: { maxAttempts: 2 },
      requestTimeoutMs: 2_000,
      sleep: async () => undefined,
    }),
    events: {
      async publish(detail) {
        events.push(detail);
      },
    },
    metrics,
    logger,
    clock,
    sleep,
    settings: {
      orgUuid: undefined,
      claimLeaseMs: LEASE_MS,
      peerWaitMs: 3_000,
      mirrorSecretIds: options.mirrorSecretIds ?? [],
      mirrorAttempts: 3,
      newKeyFieldPath: options.newKeyFieldPath,
      keyPropagationMs: options.keyPropagationMs ?? 60_000,
      invocationMs: 600_000,
      reserveMs: 20_000,
    },
  };
  // Secrets Manager invokes the function itself to test a configuration (RotateImmediately false).
  store.registerRotationFunction(ROTATION_FUNCTION_ARN, (event) => runRotationStep(event, deps));
  const secretId = created.ARN ?? 'vendor/org-key';
  return {
    sim,
    store,
    client,
    secretId,
    deps,
    metrics,
    logger,
    events,
    now,
    advance: (ms) => {
      now.ms += ms;
    },
    rotate: () => driveRotation(client, secretId, (request) => runRotationStep(request, deps)),
    onSecretsCall: (hook) => {
      store.hook = hook;
    },
    close: async () => {
      mock.restore();
      await sim.close();
    },
  };
}

/**
 * Registers an afterEach that closes the test's world, and returns the setUp that makes one: each
 * test builds its own (the options differ), and none outlives it.
 */
export function useRotationWorlds(): (options?: WorldOptions) => Promise<RotationWorld> {
  let world: RotationWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  return async (options = {}) => {
    world = await createRotationWorld(options);
    return world;
  };
}

/**
 * What the vendor accepts now, and where the secret holds it: as the key readers use (current or
 * pending `apiKey`), or only inside the vendor's kept answer (the ROTATION-ANSWER version, which
 * the next attempt resumes from).
 */
export function keyState(world: RotationWorld): {
  stored: 'current' | 'pending' | 'kept-answer' | 'none';
  workingKey: string;
} {
  const workingKey = world.sim.apiKey;
  const apiKeyAt = (stage: string) => {
    const value = world.store.valueAt(world.secretId, stage);
    return value === undefined ? undefined : (JSON.parse(value) as { apiKey?: string }).apiKey;
  };
  if (apiKeyAt('AWSCURRENT') === workingKey) return { stored: 'current', workingKey };
  if (apiKeyAt('AWSPENDING') === workingKey) return { stored: 'pending', workingKey };
  if (world.store.valueAt(world.secretId, 'ROTATION-ANSWER')?.includes(workingKey))
    return { stored: 'kept-answer', workingKey };
  return { stored: 'none', workingKey };
}

/** The vendor's answer as the ROTATION-ANSWER version keeps it (`rotateAnswer`). */
export function keptAnswer(world: RotationWorld): {
  body: string;
  truncated: boolean;
  bodyBytes: number;
  candidates?: string[];
} {
  return JSON.parse(world.store.valueAt(world.secretId, 'ROTATION-ANSWER') ?? '{}').rotateAnswer;
}

/** The rotation invariant: the working key is stored, or a named, counted lockout says it is not. */
export function invariantHolds(world: RotationWorld, errors: readonly unknown[]): boolean {
  if (keyState(world).stored !== 'none') return true;
  const named = errors.some((e) => e instanceof Error && e.name === 'RotationResponseLost');
  const counted = world.metrics.recorded.some((m) => m.name === 'RotationResponseLost');
  return named && counted;
}
