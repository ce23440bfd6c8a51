/**
 * The four steps of Secrets Manager's rotation protocol, for a key the vendor generates and kills
 * the old one the moment it does (docs/key-rotation.md; docs/runbooks/key-rotation.md).
 *
 * The invariant every step keeps: either the key that works at the vendor is stored (AWSCURRENT or
 * AWSPENDING), or a RotationResponseLost error (metric, alarm, runbook) names the lockout. Rotate is
 * called at most once per claim (./create.ts).
 *
 * Every step first checks that the token's version holds AWSPENDING, as AWS's rotation templates
 * do: a stale or foreign token acts on nothing. A version that is already AWSCURRENT is done.
 */
import { VendorAuthError } from '#lambdas/platform/errors';
import type { InvocationContext } from '#lambdas/platform/runtime/observability';
import { isUnseededPlaceholder } from '#lambdas/platform/secret-placeholder';
import { parseVendorCredentials } from '#lambdas/platform/secrets';
import { ROTATION_METRIC, VENDOR_APIS } from '#lambdas/registry';
import { type SecretState, STAGE, StageMovedError } from '#lambdas/rotation/secret-writer';
import { ANSWER_FIELD, clearAnswer, pendingKeyOf } from './answer.ts';
import { clearClaim, latestClaim } from './claim.ts';
import { createSecret, orgOf } from './create.ts';
import type { RotationDeps } from './deps.ts';
import { PendingKeyRefusedError, RotationInProgressError, RotationStateError } from './errors.ts';
import { type FollowUpResult, runFollowUps } from './follow-ups.ts';
import type { RotationOutcome, RotationRequest, RotationStep } from './request.ts';

export interface RotationStepResult {
  readonly step: RotationStep;
  readonly outcome: RotationOutcome;
  readonly followUps?: FollowUpResult;
}

export async function runRotationStep(
  request: RotationRequest,
  deps: RotationDeps,
  context?: InvocationContext,
): Promise<RotationStepResult> {
  const { Step: step, SecretId: secretId, ClientRequestToken: token } = request;
  // Read first: Lambda's clock for this invocation starts before any work here.
  const remainingMs = context?.getRemainingTimeInMillis?.() ?? deps.settings.invocationMs;
  const deadline = deps.clock().getTime() + remainingMs;
  const state = await deps.secrets.describe(secretId);
  const stages = state.versions.get(token);
  if (stages === undefined)
    throw new RotationStateError(secretId, token, 'the secret has no version for this token');
  const current = stages.includes(STAGE.current);
  const pending = stages.includes(STAGE.pending);
  if (current && !pending) {
    if (step === 'finishSecret')
      await heldByPeerOnConflict(deps, secretId, state, token, () =>
        clearMarkers(deps, secretId, state, token),
      );
    return { step, outcome: 'already-finished' };
  }
  if (!pending) {
    throw new RotationStateError(
      secretId,
      token,
      `the version is not staged AWSPENDING (it holds ${stages.join(', ') || 'no label'}): a stale or foreign token; nothing was done`,
    );
  }
  switch (step) {
    case 'createSecret':
      if (current) return { step, outcome: 'already-finished' };
      return { step, outcome: await createSecret(deps, secretId, token, state, deadline) };
    case 'setSecret':
      // The vendor generated the key and already holds it: there is nothing to set.
      return { step, outcome: 'nothing-to-set' };
    case 'testSecret':
      if (current) return { step, outcome: 'already-finished' };
      return { step, outcome: await testSecret(deps, secretId, token, state) };
    case 'finishSecret':
      return {
        step,
        ...(await heldByPeerOnConflict(deps, secretId, state, token, () =>
          finishSecret(deps, secretId, token, state),
        )),
      };
  }
}

async function testSecret(
  deps: RotationDeps,
  secretId: string,
  token: string,
  state: SecretState,
): Promise<RotationOutcome> {
  const pending = await deps.secrets.read(secretId, { versionId: token });
  if (pending === undefined || isUnseededPlaceholder(pending.value)) {
    // Secrets Manager tests a new rotation configuration (RotateImmediately false, as the stack
    // sets it) by creating an AWSPENDING version and running testSecret on it alone ("The test
    // creates an AWSPENDING version of the secret and then removes it":
    // https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_RotateSecret.html).
    // Before the operator seeds the secret there is no key to test: pass quietly, without the vendor.
    const claimed = (await latestClaim(deps.secrets, secretId, state, token)) !== undefined;
    if (!claimed && (await neverSeeded(deps, secretId))) {
      deps.logger.info('configuration test on a secret not seeded yet: nothing to test', { secretId, token });
      return 'not-seeded';
    }
    if (pending === undefined) {
      // No claim means createSecret never ran for this token, which a rotation always runs first:
      // this is the configuration test of a schedule changed after seeding, on a value-less version.
      // Test what it can test without rotating: that the stored key still works.
      if (!claimed) return await testCurrentKey(deps, secretId, token);
      throw new RotationStateError(secretId, token, 'createSecret stored no pending value');
    }
  }
  const key = pendingKeyOf(pending.value).key;
  if (key === undefined) throw noKeyInPending(secretId, token, pending.value);
  await requireAccepted(
    deps,
    secretId,
    token,
    key,
    orgOf(deps, secretId, parseVendorCredentials(pending.value, secretId, VENDOR_APIS)),
  );
  return 'pending-key-works';
}

async function finishSecret(
  deps: RotationDeps,
  secretId: string,
  token: string,
  state: SecretState,
): Promise<{ outcome: RotationOutcome; followUps?: FollowUpResult }> {
  const currentVersion = [...state.versions].find(([, s]) => s.includes(STAGE.current))?.[0];
  const pending = await deps.secrets.read(secretId, { versionId: token });
  if (pending === undefined)
    throw new RotationStateError(secretId, token, 'createSecret stored no pending value');
  const key = pendingKeyOf(pending.value).key;
  if (key === undefined) throw noKeyInPending(secretId, token, pending.value);
  const credentials = parseVendorCredentials(pending.value, secretId, VENDOR_APIS);
  const orgUuid = orgOf(deps, secretId, credentials);
  if (currentVersion !== token) {
    // Never promote a key the vendor refuses: whatever called finishSecret, the test runs again here.
    await requireAccepted(deps, secretId, token, key, orgUuid);
    const unchanged = await currentKeyIs(deps, secretId, key);
    await deps.secrets.moveStage(secretId, STAGE.current, token, currentVersion);
    // A key handed back unchanged was counted as such by createSecret (RotateKeyUnchanged).
    if (!unchanged) deps.metrics.record(ROTATION_METRIC.keyRotations, 1, 'Count', { workflow: 'rotation' });
    if (pending.created !== undefined) {
      const window = (deps.clock().getTime() - pending.created.getTime()) / 1000;
      deps.metrics.record(ROTATION_METRIC.rotationWindow, Math.max(0, window), 'Seconds', {
        workflow: 'rotation',
      });
    }
  }
  const followUps = await runFollowUps(
    deps,
    { orgUuid, secretArn: state.arn, versionId: token, rotatedAt: deps.clock().toISOString() },
    mirrorValue(pending.value),
  );
  // Last, so a finishSecret interrupted before here still finds work to do and redoes the above.
  await deps.secrets.removeStage(secretId, STAGE.pending, token);
  await clearMarkers(deps, secretId, state, token);
  deps.logger.info('rotation finished: AWSCURRENT names the new key', { secretId, token });
  return { outcome: 'finished', followUps };
}

/**
 * Runs `finish`; when a staging-label update in it is refused because the label is no longer where
 * this invocation saw it, and the labels did change since, another invocation finished or is
 * finishing the same token: that is what the error says, not a permission problem.
 */
async function heldByPeerOnConflict<T>(
  deps: RotationDeps,
  secretId: string,
  seen: SecretState,
  token: string,
  finish: () => Promise<T>,
): Promise<T> {
  try {
    return await finish();
  } catch (error) {
    if (!(error instanceof StageMovedError)) throw error;
    const now = await deps.secrets.describe(secretId).catch(() => undefined);
    const labels = (state: SecretState) =>
      JSON.stringify([...state.versions].map(([id, stages]) => [id, [...stages].sort()]).sort());
    if (now === undefined || labels(now) === labels(seen)) throw error;
    const stages = now.versions.get(token) ?? [];
    throw new RotationInProgressError(
      secretId,
      token,
      `the secret's staging labels changed while this invocation finished it; the token's version now holds ${stages.join(', ') || 'no label'}`,
    );
  }
}

async function clearMarkers(deps: RotationDeps, secretId: string, state: SecretState, token: string) {
  await clearClaim(deps.secrets, secretId, state, token);
  await clearAnswer(deps, secretId, state, token);
}

async function currentKeyIs(deps: RotationDeps, secretId: string, key: string): Promise<boolean> {
  const current = await deps.secrets.read(secretId, { stage: STAGE.current });
  if (current === undefined) return false;
  try {
    return parseVendorCredentials(current.value, secretId, VENDOR_APIS).apiKey === key;
  } catch {
    return false;
  }
}

/** One GET key info with the pending key; a refusal leaves AWSCURRENT where it is. */
async function requireAccepted(
  deps: RotationDeps,
  secretId: string,
  token: string,
  key: string,
  orgUuid: string,
): Promise<void> {
  const vendor = deps.keys(key, orgUuid);
  try {
    if (!(await vendor.keyAccepted())) throw new PendingKeyRefusedError(secretId, token, 401);
  } catch (error) {
    if (error instanceof VendorAuthError) throw new PendingKeyRefusedError(secretId, token, error.status);
    throw error;
  } finally {
    await vendor.close();
  }
}

/** The configuration test on a seeded secret: one GET key info with AWSCURRENT's key, never a rotate. */
async function testCurrentKey(deps: RotationDeps, secretId: string, token: string): Promise<RotationOutcome> {
  const current = await deps.secrets.read(secretId, { stage: STAGE.current });
  if (current === undefined)
    throw new RotationStateError(secretId, token, 'the secret has no AWSCURRENT value');
  const credentials = parseVendorCredentials(current.value, secretId, VENDOR_APIS);
  await requireAccepted(deps, secretId, token, credentials.apiKey, orgOf(deps, secretId, credentials));
  deps.logger.info('configuration test on a seeded secret: the current key works', { secretId, token });
  return 'current-key-works';
}

/** Whether AWSCURRENT still holds the stack's placeholder. */
async function neverSeeded(deps: RotationDeps, secretId: string): Promise<boolean> {
  const current = await deps.secrets.read(secretId, { stage: STAGE.current });
  return current !== undefined && isUnseededPlaceholder(current.value);
}

function noKeyInPending(secretId: string, token: string, value: string): RotationStateError {
  return new RotationStateError(
    secretId,
    token,
    pendingKeyOf(value).hasAnswer
      ? "the pending version holds the vendor's answer but no key that works (see RotationResponseLost); AWSCURRENT was not moved"
      : 'the pending version holds no "apiKey"; AWSCURRENT was not moved',
  );
}

/** Mirrors get what integrations read: the secret without the vendor's raw answer. */
function mirrorValue(value: string): string {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(value) as Record<string, unknown>;
  } catch {
    return value;
  }
  const { [ANSWER_FIELD]: _a, ...rest } = json;
  return JSON.stringify(rest);
}
