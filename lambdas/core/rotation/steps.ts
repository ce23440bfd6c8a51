/**
 * The four steps of Secrets Manager's rotation protocol, for a key the vendor generates and kills
 * the old one the moment it does (docs: ../DESIGN "Key rotation"; docs/runbooks/key-rotation.md).
 *
 * The invariant every step keeps: either the key that works at the vendor is stored (AWSCURRENT or
 * AWSPENDING), or a RotationResponseLost error (metric, alarm, runbook) names the lockout. Rotate is
 * called at most once per claim, and a new claim for a token is only taken after its last one was
 * released (the rotate provably did nothing) or a probe with the current key proved the vendor did
 * not rotate.
 */
import {
  ConfigurationError,
  VendorAuthError,
  VendorHttpError,
  VendorNetworkError,
  VendorThrottledError,
} from '#core/errors';
import { METRIC } from '#core/metrics';
import { type SecretState, STAGE } from '#core/secret-writer';
import { parseVendorCredentials, type VendorCredentialsValue } from '#core/secrets';
import type { RotateKeyResult } from '#core/vendor/types';
import { clearClaim, latestClaim, writeClaim } from './claim.ts';
import type { RotationDeps } from './deps.ts';
import {
  PendingKeyRefusedError,
  RotateAnswerUnparsableError,
  RotationInProgressError,
  RotationOutcomeUnknownError,
  RotationResponseLostError,
  RotationStateError,
} from './errors.ts';
import { type FollowUpResult, runFollowUps } from './follow-ups.ts';

export const ROTATION_STEPS = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const;
export type RotationStep = (typeof ROTATION_STEPS)[number];

/** What Secrets Manager sends the rotation function. */
export interface RotationRequest {
  readonly Step: RotationStep;
  readonly SecretId: string;
  readonly ClientRequestToken: string;
}

export type RotationOutcome =
  | 'rotated'
  | 'already-stored'
  | 'stored-by-peer'
  | 'nothing-to-set'
  | 'pending-key-works'
  | 'finished'
  | 'already-finished';

export interface RotationStepResult {
  readonly step: RotationStep;
  readonly outcome: RotationOutcome;
  readonly followUps?: FollowUpResult;
}

/** The field holding an answer no key could be found in (no `apiKey`: readers skip it). */
export const UNREADABLE_ANSWER_FIELD = 'unreadableRotateAnswer';
/** Secrets Manager holds 65,536 bytes per value; the rest of the secret needs a little room. */
const MAX_STORED_ANSWER_CHARS = 60_000;

export async function runRotationStep(
  request: RotationRequest,
  deps: RotationDeps,
): Promise<RotationStepResult> {
  const { Step: step, SecretId: secretId, ClientRequestToken: token } = request;
  const state = await deps.secrets.describe(secretId);
  const stages = state.versions.get(token);
  if (stages === undefined)
    throw new RotationStateError(secretId, token, 'the secret has no version for this token');
  switch (step) {
    case 'createSecret':
      if (stages.includes(STAGE.current)) return { step, outcome: 'already-finished' };
      if (!stages.includes(STAGE.pending)) {
        throw new RotationStateError(secretId, token, 'the version is not staged AWSPENDING');
      }
      return { step, outcome: await createSecret(deps, secretId, token, state) };
    case 'setSecret':
      // The vendor generated the key and already holds it: there is nothing to set.
      return { step, outcome: 'nothing-to-set' };
    case 'testSecret':
      return { step, outcome: await testSecret(deps, secretId, token) };
    case 'finishSecret':
      return { step, ...(await finishSecret(deps, secretId, token, state)) };
  }
}

async function createSecret(
  deps: RotationDeps,
  secretId: string,
  token: string,
  state: SecretState,
): Promise<RotationOutcome> {
  if ((await deps.secrets.read(secretId, { versionId: token })) !== undefined) return 'already-stored';
  const current = await readCurrent(deps, secretId);
  const orgUuid = orgOf(deps, secretId, current);

  const claim = await latestClaim(deps.secrets, secretId, state, token);
  let attempt = 1;
  if (claim?.state === 'released') {
    attempt = claim.attempt + 1;
  } else if (claim?.state === 'claimed') {
    const age = deps.clock().getTime() - Date.parse(claim.claimedAt);
    if (!(age >= deps.settings.claimLeaseMs)) {
      // Its owner may be inside the vendor call right now: wait for its answer, never rotate.
      if (await peerStored(deps, secretId, token)) return 'stored-by-peer';
      throw new RotationInProgressError(secretId, token, claim.claimedAt);
    }
    await probeCurrentKey(deps, secretId, token, current.apiKey, orgUuid);
    attempt = claim.attempt + 1;
  }
  const claimed = await writeClaim(deps.secrets, secretId, {
    rotationClaim: token,
    attempt,
    claimedAt: deps.clock().toISOString(),
    state: 'claimed',
  });
  if (!claimed) {
    if (await peerStored(deps, secretId, token)) return 'stored-by-peer';
    throw new RotationInProgressError(secretId, token, deps.clock().toISOString());
  }

  const vendor = deps.keys(current.apiKey, orgUuid);
  let answer: RotateKeyResult;
  try {
    answer = await vendor.rotateKey();
  } catch (error) {
    if (!provablyNotProcessed(error)) {
      // Settle it now if we can: a refused current key proves the vendor rotated (lost answer).
      // A 200 proves nothing yet (the request may still be in flight there): the claim stays,
      // and the next attempt probes again once the lease has passed.
      await vendor.close();
      await probeCurrentKey(deps, secretId, token, current.apiKey, orgUuid);
      throw new RotationOutcomeUnknownError(secretId, token, error);
    }
    await writeClaim(deps.secrets, secretId, {
      rotationClaim: token,
      attempt: attempt + 1,
      claimedAt: deps.clock().toISOString(),
      state: 'released',
      reason: error instanceof Error ? error.name : 'UnknownError',
    });
    throw error;
  } finally {
    await vendor.close();
  }

  // From here the old key is dead and `answer` is the only copy of the new one: store it first.
  const value = pendingValue(current, orgUuid, answer);
  try {
    await storePending(deps, secretId, token, value);
  } catch (error) {
    deps.metrics.record(METRIC.rotationResponseLost, 1, 'Count', { workflow: 'rotation' });
    deps.logger.error('the vendor rotated and storing the new key failed: lockout', {
      secretId,
      token,
      errorName: error instanceof Error ? error.name : 'UnknownError',
    });
    throw new RotationResponseLostError(
      secretId,
      token,
      `storing it failed: ${error instanceof Error ? error.name : 'error'}`,
    );
  }
  if (answer.newKey === undefined) {
    deps.metrics.record(METRIC.rotateAnswerUnparsable, 1, 'Count', { workflow: 'rotation' });
    throw new RotateAnswerUnparsableError(secretId, token);
  }
  deps.logger.info('the vendor rotated the key; the new key is stored under AWSPENDING', { secretId, token });
  return 'rotated';
}

/** Puts the pending value; a put whose answer was lost may still have stored it, so look first. */
async function storePending(
  deps: RotationDeps,
  secretId: string,
  token: string,
  value: string,
): Promise<void> {
  try {
    await deps.secrets.put(secretId, token, value, [STAGE.pending]);
  } catch (error) {
    const stored = await deps.secrets.read(secretId, { versionId: token }).catch(() => undefined);
    if (stored?.value !== value) throw error;
  }
}

/**
 * Met a claim whose owner is gone without a stored answer: did the vendor rotate? A 200 with the
 * current key proves it did not; a refusal proves the new key was lost.
 */
async function probeCurrentKey(
  deps: RotationDeps,
  secretId: string,
  token: string,
  currentKey: string,
  orgUuid: string,
): Promise<void> {
  const vendor = deps.keys(currentKey, orgUuid);
  try {
    await vendor.getKeyInfo();
  } catch (error) {
    if (error instanceof VendorAuthError) {
      deps.metrics.record(METRIC.rotationResponseLost, 1, 'Count', { workflow: 'rotation' });
      deps.logger.error('the current key is refused after a claimed rotate left no answer: lockout', {
        secretId,
        token,
        status: error.status,
      });
      throw new RotationResponseLostError(
        secretId,
        token,
        `the current key is refused with HTTP ${error.status}`,
      );
    }
    throw error;
  } finally {
    await vendor.close();
  }
  deps.logger.warn('a claimed rotate left no answer, and the current key still works: rotating again', {
    secretId,
    token,
  });
}

async function testSecret(deps: RotationDeps, secretId: string, token: string): Promise<RotationOutcome> {
  const pending = await deps.secrets.read(secretId, { versionId: token });
  if (pending === undefined)
    throw new RotationStateError(secretId, token, 'createSecret stored no pending value');
  if (pending.value.includes(`"${UNREADABLE_ANSWER_FIELD}"`))
    throw new RotateAnswerUnparsableError(secretId, token);
  const credentials = parseVendorCredentials(pending.value, secretId);
  const vendor = deps.keys(credentials.apiKey, orgOf(deps, secretId, credentials));
  try {
    await vendor.getKeyInfo();
  } catch (error) {
    if (error instanceof VendorAuthError) throw new PendingKeyRefusedError(secretId, token, error.status);
    throw error;
  } finally {
    await vendor.close();
  }
  return 'pending-key-works';
}

async function finishSecret(
  deps: RotationDeps,
  secretId: string,
  token: string,
  state: SecretState,
): Promise<{ outcome: RotationOutcome; followUps?: FollowUpResult }> {
  const stages = state.versions.get(token) ?? [];
  const currentVersion = [...state.versions].find(([, s]) => s.includes(STAGE.current))?.[0];
  if (currentVersion === token && !stages.includes(STAGE.pending)) {
    await clearClaim(deps.secrets, secretId, state, token);
    return { outcome: 'already-finished' };
  }
  const pending = await deps.secrets.read(secretId, { versionId: token });
  if (pending === undefined)
    throw new RotationStateError(secretId, token, 'createSecret stored no pending value');
  if (currentVersion !== token) {
    await deps.secrets.moveStage(secretId, STAGE.current, token, currentVersion);
    deps.metrics.record(METRIC.keyRotations, 1, 'Count', { workflow: 'rotation' });
    if (pending.created !== undefined) {
      const window = (deps.clock().getTime() - pending.created.getTime()) / 1000;
      deps.metrics.record(METRIC.rotationWindow, Math.max(0, window), 'Seconds', { workflow: 'rotation' });
    }
  }
  const credentials = parseVendorCredentials(pending.value, secretId);
  const followUps = await runFollowUps(
    deps,
    {
      orgUuid: orgOf(deps, secretId, credentials),
      secretArn: state.arn,
      versionId: token,
      rotatedAt: deps.clock().toISOString(),
    },
    pending.value,
  );
  // Last, so a finishSecret interrupted before here still finds work to do and redoes the above.
  await deps.secrets.removeStage(secretId, STAGE.pending, token);
  await clearClaim(deps.secrets, secretId, state, token);
  deps.logger.info('rotation finished: AWSCURRENT names the new key', { secretId, token });
  return { outcome: 'finished', followUps };
}

async function readCurrent(deps: RotationDeps, secretId: string): Promise<VendorCredentialsValue> {
  const stored = await deps.secrets.read(secretId, { stage: STAGE.current });
  if (stored === undefined) throw new ConfigurationError(secretId, 'has no AWSCURRENT value to rotate');
  const credentials = parseVendorCredentials(stored.value, secretId);
  if (credentials.apiKeys.keys !== undefined && credentials.apiKeys.keys !== credentials.apiKey) {
    // The probe would then prove nothing about the org key: refuse rather than risk a second rotate.
    throw new ConfigurationError(
      secretId,
      'has its own "apiKeys.keys": rotation authorises with the org key it rotates, so remove it or rotate by hand',
    );
  }
  return credentials;
}

function orgOf(deps: RotationDeps, secretId: string, credentials: VendorCredentialsValue): string {
  const org = credentials.orgUuid ?? deps.settings.orgUuid;
  if (org === undefined) throw new ConfigurationError(secretId, 'has no "orgUuid", and ORG_UUID is not set');
  return org;
}

/** Errors that prove the vendor did nothing with the rotate request. */
function provablyNotProcessed(error: unknown): boolean {
  if (error instanceof VendorAuthError || error instanceof VendorThrottledError) return true;
  if (error instanceof VendorNetworkError) return error.requestNotSent;
  if (error instanceof VendorHttpError) return error.status >= 400 && error.status < 500;
  return error instanceof ConfigurationError;
}

async function peerStored(deps: RotationDeps, secretId: string, token: string): Promise<boolean> {
  const step = 1_000;
  for (let waited = 0; waited < deps.settings.peerWaitMs; waited += step) {
    await deps.sleep(step);
    if ((await deps.secrets.read(secretId, { versionId: token })) !== undefined) return true;
  }
  return false;
}

/**
 * The AWSPENDING value: the current secret with the new key, or, when no key was found, the whole
 * answer for a human (no `apiKey`, so no reader ever sends it).
 */
function pendingValue(current: VendorCredentialsValue, orgUuid: string, answer: RotateKeyResult): string {
  const { apiKey: _a, api_key: _b, key: _c, [UNREADABLE_ANSWER_FIELD]: _d, ...kept } = current.fields;
  if (answer.newKey !== undefined) return JSON.stringify({ ...kept, apiKey: answer.newKey, orgUuid });
  const body = answer.rawBody.slice(0, MAX_STORED_ANSWER_CHARS);
  return JSON.stringify({
    ...kept,
    orgUuid,
    [UNREADABLE_ANSWER_FIELD]: {
      body,
      contentType: answer.contentType ?? null,
      truncated: body.length < answer.rawBody.length,
    },
  });
}
