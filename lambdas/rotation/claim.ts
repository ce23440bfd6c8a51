/**
 * The durable claim that makes `rotate` at most once per token.
 *
 * A claim is a version of the rotated secret itself, labelled ROTATION-CLAIM, whose id is derived
 * from the token and an attempt number. Secrets Manager makes it atomic: a version id can hold one
 * value only, so of two invocations writing claim N with their own owner ids, exactly one gets it
 * and the other gets ResourceExistsException. It is as durable as the secret, lives next to the
 * key it protects, and needs no other store or permission.
 *
 * Claim records never hold a key. Readers never read the ROTATION-CLAIM label; finishSecret
 * removes it, leaving the claim deprecated for Secrets Manager to clean up.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SecretState, SecretWriter } from '#lambdas/rotation/secret-writer';
import { VersionConflictError } from '#lambdas/rotation/secret-writer';

export const CLAIM_STAGE = 'ROTATION-CLAIM';

export interface ClaimRecord {
  /** The rotation token the claim is for. */
  readonly rotationClaim: string;
  readonly attempt: number;
  /** A random id of the invocation that wrote it. */
  readonly owner: string;
  readonly claimedAt: string;
  /**
   * `claimed`: the owner may call rotate. `released`: its rotate provably did nothing (refused,
   * throttled, never sent), so the next attempt may claim at once.
   */
  readonly state: 'claimed' | 'released';
  readonly reason?: string;
}

/** Version ids are at most 64 characters; a token may be 64 already, so it is hashed. */
export function claimVersionId(token: string, attempt: number): string {
  return `claim-${attempt}-${createHash('sha256').update(token).digest('hex').slice(0, 40)}`;
}

/** The newest claim record for `token`, or undefined when none names it. */
export async function latestClaim(
  secrets: SecretWriter,
  secretId: string,
  state: SecretState,
  token: string,
): Promise<(ClaimRecord & { versionId: string }) | undefined> {
  const holder = [...state.versions].find(([, stages]) => stages.includes(CLAIM_STAGE))?.[0];
  if (holder === undefined) return undefined;
  const stored = await secrets.read(secretId, { versionId: holder });
  if (stored === undefined) return undefined;
  const record = parseClaim(stored.value);
  return record?.rotationClaim === token ? { ...record, versionId: holder } : undefined;
}

/**
 * Writes claim `attempt` for `token`. True when this call owns it; false when another invocation
 * wrote that attempt first.
 */
export async function writeClaim(
  secrets: SecretWriter,
  secretId: string,
  record: Omit<ClaimRecord, 'owner'> & { owner?: string },
): Promise<boolean> {
  const full: ClaimRecord = { ...record, owner: record.owner ?? randomUUID() };
  try {
    await secrets.put(secretId, claimVersionId(record.rotationClaim, record.attempt), JSON.stringify(full), [
      CLAIM_STAGE,
    ]);
    return true;
  } catch (error) {
    if (error instanceof VersionConflictError) return false;
    throw error;
  }
}

/** Removes the claim label once the rotation is finished; the claim's job is done. */
export async function clearClaim(
  secrets: SecretWriter,
  secretId: string,
  state: SecretState,
  token: string,
): Promise<void> {
  const claim = await latestClaim(secrets, secretId, state, token);
  if (claim !== undefined) await secrets.removeStage(secretId, CLAIM_STAGE, claim.versionId);
}

function parseClaim(value: string): ClaimRecord | undefined {
  try {
    const json = JSON.parse(value) as Partial<ClaimRecord>;
    if (typeof json.rotationClaim !== 'string' || typeof json.attempt !== 'number') return undefined;
    if (json.state !== 'claimed' && json.state !== 'released') return undefined;
    return json as ClaimRecord;
  } catch {
    return undefined;
  }
}
