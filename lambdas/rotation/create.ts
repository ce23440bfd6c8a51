/**
 * createSecret: rotate the key at the vendor at most once per claim, keep the answer, and store the
 * key that works under AWSPENDING.
 *
 * A new claim for a token is only taken after its last one was released (the rotate provably did
 * nothing) or a probe with the current key proved the vendor did not rotate. Once the vendor has
 * answered, whatever the status, the answer is stored before it is read (./answer.ts); from then on
 * every attempt resumes from the stored answer and none calls rotate again, unless the answer was
 * an error and the current key still works (the vendor did not rotate).
 *
 * The kept answer's candidates are probed (./probe.ts) over the propagation window; each later
 * attempt probes again. Only a window without an accepted candidate is a lockout, and AWSPENDING
 * is written only with a key that works, so a later attempt that finds one still recovers.
 */
import {
  ConfigurationError,
  VendorNetworkError,
  VendorThrottledError,
  vendorHttpError,
} from '#lambdas/platform/errors';
import { parseVendorCredentials, type VendorCredentialsValue } from '#lambdas/platform/secrets';
import { ROTATION_METRIC, VENDOR_APIS } from '#lambdas/registry';
import { type SecretState, STAGE } from '#lambdas/rotation/secret-writer';
import type { RotateKeyResult } from '#lambdas/vendor-api/keys/types';
import {
  ANSWER_STAGE,
  isSuccessAnswer,
  pendingKeyOf,
  pendingValue,
  readAnswer,
  type StoredAnswer,
  storeAnswer,
} from './answer.ts';
import { latestClaim, writeClaim } from './claim.ts';
import type { RotationDeps } from './deps.ts';
import {
  NewKeyNotWorkingYetError,
  RotationInProgressError,
  RotationOutcomeUnknownError,
  RotationResponseLostError,
  RotationStateError,
} from './errors.ts';
import { probeAnswer } from './probe.ts';
import type { RotationOutcome } from './request.ts';

/** When the invocation must have returned, on `deps.clock`'s time line (milliseconds). */
export type InvocationDeadline = number;

export async function createSecret(
  deps: RotationDeps,
  secretId: string,
  token: string,
  state: SecretState,
  deadline: InvocationDeadline,
): Promise<RotationOutcome> {
  const stored = await deps.secrets.read(secretId, { versionId: token });
  if (stored !== undefined) {
    const { key, hasAnswer } = pendingKeyOf(stored.value);
    if (key !== undefined) return 'already-stored';
    // An earlier release stored the answer alone under AWSPENDING, and a version's value never
    // changes: the lockout stands for this token (break-glass). Never rotate again.
    if (hasAnswer) throw lockout(deps, secretId, token, 'an earlier attempt found no working key in it');
    throw new RotationStateError(secretId, token, 'the pending version holds a value without a key');
  }
  const current = await readCurrent(deps, secretId);
  const orgUuid = orgOf(deps, secretId, current);

  const claim = await latestClaim(deps.secrets, secretId, state, token);
  const kept = await readAnswer(deps, secretId, token, { state });
  // An answer a later claim superseded was an error from a rotate proven to have done nothing.
  if (kept !== undefined && !(claim !== undefined && claim.attempt > kept.attempt)) {
    const settled = await settle(deps, secretId, token, current, orgUuid, kept, deadline);
    if (settled !== 'not-rotated')
      return settled === 'key-unchanged' ? 'key-unchanged' : 'resumed-from-answer';
  }

  let attempt = 1;
  if (claim?.state === 'released') {
    attempt = claim.attempt + 1;
  } else if (claim?.state === 'claimed') {
    const age = deps.clock().getTime() - Date.parse(claim.claimedAt);
    if (!(age >= deps.settings.claimLeaseMs)) {
      // Its owner may be inside the vendor call right now: wait for its answer, never rotate.
      if (await peerStored(deps, secretId, token)) return 'stored-by-peer';
      throw new RotationInProgressError(
        secretId,
        token,
        `it claimed the rotate at ${claim.claimedAt}, and may still be calling the vendor`,
      );
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
    throw new RotationInProgressError(
      secretId,
      token,
      `it claimed the rotate at ${deps.clock().toISOString()}, and may be calling the vendor now`,
    );
  }

  const vendor = deps.keys(current.apiKey, orgUuid);
  let answer: RotateKeyResult;
  try {
    // The one call that cannot be repeated: its answer may take all the time the invocation has
    // left, bar what storing it needs (never the per-request deadline of repeatable calls).
    const timeoutMs = Math.max(1_000, deadline - deps.clock().getTime() - deps.settings.reserveMs);
    answer = await vendor.rotateKey({ timeoutMs });
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

  // From here the old key may be dead and `answer` the only copy of the new one: store it first,
  // whatever its status (a vendor may rotate and then answer an error holding the key).
  try {
    await storeAnswer(deps, secretId, token, attempt, answer);
  } catch (error) {
    const how = `storing it failed: ${error instanceof Error ? error.name : 'error'}`;
    if (!isSuccessStatus(answer.status) && (await currentKeyStillWorks(deps, current.apiKey, orgUuid)))
      return await rotateDidNothing(deps, secretId, token, attempt, answer);
    throw lockout(deps, secretId, token, how);
  }
  const again = await readAnswer(deps, secretId, token, { attempt });
  if (again === undefined) throw lockout(deps, secretId, token, 'the stored answer does not read back');
  if (!isSuccessStatus(answer.status)) {
    deps.logger.warn(
      'the vendor answered the rotate with an error: its answer is kept and searched for a key',
      {
        secretId,
        token,
        status: answer.status,
      },
    );
  }
  if (answer.wordsSeen !== undefined && answer.wordsSeen > (answer.words?.length ?? 0)) {
    deps.logger.warn('the rotate answer holds more key-shaped strings than are probed', {
      secretId,
      token,
      wordsSeen: answer.wordsSeen,
      wordsKept: answer.words?.length ?? 0,
    });
  }
  const settled = await settle(deps, secretId, token, current, orgUuid, again, deadline);
  if (settled === 'not-rotated') return await rotateDidNothing(deps, secretId, token, attempt, answer);
  return settled === 'key-unchanged' ? 'key-unchanged' : 'rotated';
}

function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The rotate answered an error and the current key still works: the vendor did not rotate. As
 * for any refused call, a 4xx releases the claim (the next attempt may rotate at once); after a 5xx
 * the claim stays, and the next attempt past its lease probes the current key again first (the
 * vendor may still be acting on the request). Throws the vendor's error either way.
 */
async function rotateDidNothing(
  deps: RotationDeps,
  secretId: string,
  token: string,
  attempt: number,
  answer: RotateKeyResult,
): Promise<never> {
  const operation = 'keys.rotateKey';
  const { status, requestId, retryAfterMs } = answer;
  const error =
    status === 429
      ? new VendorThrottledError({ operation, retryAfterMs, requestId })
      : vendorHttpError({ operation, status, requestId });
  if (status >= 500) throw new RotationOutcomeUnknownError(secretId, token, error);
  await writeClaim(deps.secrets, secretId, {
    rotationClaim: token,
    attempt: attempt + 1,
    claimedAt: deps.clock().toISOString(),
    state: 'released',
    reason: error.name,
  });
  throw error;
}

async function currentKeyStillWorks(
  deps: RotationDeps,
  currentKey: string,
  orgUuid: string,
): Promise<boolean> {
  const vendor = deps.keys(currentKey, orgUuid);
  try {
    return await vendor.keyAccepted();
  } catch {
    return false;
  } finally {
    await vendor.close();
  }
}

/**
 * Probes the kept answer (./probe.ts) until its propagation window has passed or the invocation's
 * time runs short, and stores the key that works under AWSPENDING. `key-unchanged` when that key
 * is the current one (the vendor handed it back); `not-rotated` when the answer was an error and
 * the current key still works. No key yet: a lockout when the window is over, else
 * NewKeyNotWorkingYetError for the next attempt. Nothing is stored under AWSPENDING without a key,
 * so any later attempt can still store one.
 */
async function settle(
  deps: RotationDeps,
  secretId: string,
  token: string,
  current: VendorCredentialsValue,
  orgUuid: string,
  kept: StoredAnswer,
  deadline: InvocationDeadline,
): Promise<'rotated' | 'key-unchanged' | 'not-rotated'> {
  const windowEnds = kept.receivedAt.getTime() + deps.settings.keyPropagationMs;
  const mustEndBy = deadline - deps.settings.reserveMs;
  const found = await probeAnswer(deps, current, orgUuid, kept, {
    stopBy: Math.min(windowEnds, mustEndBy),
    mustEndBy,
  });
  const status = kept.answer.status ?? 200;
  const facts = { secretId, token, status, candidatesTried: found.tried, probeRounds: found.passes };
  if (found.found === 'not-rotated') {
    deps.logger.warn(
      'the rotate answered an error and the current key still works: the vendor did not rotate',
      facts,
    );
    return 'not-rotated';
  }
  if (found.found === 'nothing') {
    if (!found.windowOver) {
      deps.logger.warn('no key in the kept rotate answer works yet; the next attempt probes again', facts);
      throw new NewKeyNotWorkingYetError(secretId, token, new Date(windowEnds).toISOString(), found.tried);
    }
    deps.metrics.record(ROTATION_METRIC.rotateAnswerUnparsable, 1, 'Count', { workflow: 'rotation' });
    const answered = isSuccessAnswer(kept.answer) ? '' : ` (HTTP ${status})`;
    throw lockout(
      deps,
      secretId,
      token,
      `no string in the vendor's answer${answered} opened GET key info within the ${deps.settings.keyPropagationMs / 1000} s propagation window (${found.tried} tried in ${found.passes} pass${found.passes === 1 ? '' : 'es'}); the answer is kept in the secret's ${ANSWER_STAGE} version, and the next attempt probes it again`,
    );
  }
  await storePending(deps, secretId, token, pendingValue(current.fields, orgUuid, found.key, kept.answer));
  if (found.found === 'same-key') {
    // Not a lockout: the key in use still works. The rotation finishes with it, so AWSPENDING does
    // not block the next one, and the metric (with KeyNotRotated's key age) says nothing changed.
    deps.metrics.record(ROTATION_METRIC.rotateKeyUnchanged, 1, 'Count', { workflow: 'rotation' });
    deps.logger.warn('the vendor answered the rotate with the key in use: it did not change the key', facts);
    return 'key-unchanged';
  }
  deps.logger.info('the vendor rotated the key; the key that works is stored under AWSPENDING', {
    ...facts,
    answerTruncated: kept.answer.truncated,
  });
  return 'rotated';
}

function lockout(
  deps: RotationDeps,
  secretId: string,
  token: string,
  how: string,
): RotationResponseLostError {
  deps.metrics.record(ROTATION_METRIC.rotationResponseLost, 1, 'Count', { workflow: 'rotation' });
  deps.logger.error('the vendor rotated and no working key is stored: lockout', { secretId, token, how });
  return new RotationResponseLostError(secretId, token, how);
}

/** Puts the pending value; a put whose answer was lost may still have stored it, so look first. */
async function storePending(deps: RotationDeps, secretId: string, token: string, value: string) {
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
  let accepted: boolean;
  try {
    accepted = await vendor.keyAccepted();
  } finally {
    await vendor.close();
  }
  if (!accepted) throw lockout(deps, secretId, token, 'the current key is refused and no answer was kept');
  deps.logger.warn('a claimed rotate left no answer, and the current key still works: rotating again', {
    secretId,
    token,
  });
}

async function readCurrent(deps: RotationDeps, secretId: string): Promise<VendorCredentialsValue> {
  const stored = await deps.secrets.read(secretId, { stage: STAGE.current });
  if (stored === undefined) throw new ConfigurationError(secretId, 'has no AWSCURRENT value to rotate');
  const credentials = parseVendorCredentials(stored.value, secretId, VENDOR_APIS);
  if (credentials.apiKeys.keys !== undefined && credentials.apiKeys.keys !== credentials.apiKey) {
    // The probe would then prove nothing about the org key: refuse rather than risk a second rotate.
    throw new ConfigurationError(
      secretId,
      'has its own "apiKeys.keys": rotation authorises with the org key it rotates, so remove it or rotate by hand',
    );
  }
  return credentials;
}

/** Errors that prove the vendor did nothing with the rotate request (every answer is kept instead). */
function provablyNotProcessed(error: unknown): boolean {
  if (error instanceof VendorNetworkError) return error.requestNotSent;
  return error instanceof ConfigurationError;
}

/** Waits for a peer that holds the claim to store the pending value. */
async function peerStored(deps: RotationDeps, secretId: string, token: string): Promise<boolean> {
  const step = 1_000;
  for (let waited = 0; waited < deps.settings.peerWaitMs; waited += step) {
    await deps.sleep(step);
    if ((await deps.secrets.read(secretId, { versionId: token })) !== undefined) return true;
  }
  return false;
}

export function orgOf(deps: RotationDeps, secretId: string, credentials: VendorCredentialsValue): string {
  const org = credentials.orgUuid ?? deps.settings.orgUuid;
  if (org === undefined) throw new ConfigurationError(secretId, 'has no "orgUuid", and ORG_UUID is not set');
  return org;
}
