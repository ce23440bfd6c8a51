/**
 * The organisation's single API key. One key serves all three APIs, so rotating or replacing it
 * kills the old one everywhere at the same instant.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function newApiKey(): string {
  return `sk_sim_${randomBytes(16).toString('hex')}`;
}

function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Told of every key any simulator in this process issues (test/kit/leak-watch.ts listens). */
const keyListeners = new Set<(key: string) => void>();

/**
 * Calls `listener` with every key a simulator of this process issues from now on (its first key,
 * a rotated or replaced one), so a test can look for the exact values a run used. Returns the
 * unsubscribe.
 */
export function onSimulatorKey(listener: (key: string) => void): () => void {
  keyListeners.add(listener);
  return () => keyListeners.delete(listener);
}

export interface KeyMetadata {
  readonly org_uuid: string;
  readonly key_id: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly rotated_at: string | null;
}

export class KeyStore {
  private key: string;
  private keyDigest: Buffer;
  private keyId = newKeyId();
  private createdAt: Date;
  private lastUsedAt: Date | null = null;
  private rotatedAt: Date | null = null;
  /** Before this time (ms, on `now`) the key is refused: a new key still propagating. */
  private activeFrom = 0;

  constructor(
    initialKey: string | undefined,
    private readonly now: () => Date,
  ) {
    if (initialKey !== undefined && !/^[\x21-\x7e]+$/.test(initialKey)) {
      throw new TypeError('apiKey must be a non-empty string of printable ASCII without spaces');
    }
    this.key = initialKey ?? newApiKey();
    for (const listener of keyListeners) listener(this.key);
    this.keyDigest = digest(this.key);
    this.createdAt = now();
  }

  get current(): string {
    return this.key;
  }

  /** Constant-time check, so response timing says nothing about how much of a guess was right. */
  accepts(candidate: string | undefined): boolean {
    if (candidate === undefined || candidate === '') return false;
    return timingSafeEqual(digest(candidate), this.keyDigest) && this.now().getTime() >= this.activeFrom;
  }

  touch(): void {
    this.lastUsedAt = this.now();
  }

  metadata(orgUuid: string): KeyMetadata {
    return {
      org_uuid: orgUuid,
      key_id: this.keyId,
      created_at: this.createdAt.toISOString(),
      last_used_at: this.lastUsedAt?.toISOString() ?? null,
      rotated_at: this.rotatedAt?.toISOString() ?? null,
    };
  }

  /**
   * Issues a new key; the old one is dead from this moment. `propagationMs`: the new key is refused
   * for that long (it has not reached every server yet), so no key works in between.
   */
  rotate(propagationMs = 0): { apiKey: string; keyId: string; createdAt: Date } {
    this.install(newApiKey());
    this.rotatedAt = this.createdAt;
    this.activeFrom = this.createdAt.getTime() + propagationMs;
    return { apiKey: this.key, keyId: this.keyId, createdAt: this.createdAt };
  }

  /** A rotate that changed nothing: the key in use, as a rotate answer would name it. */
  unchanged(): { apiKey: string; keyId: string; createdAt: Date } {
    return { apiKey: this.key, keyId: this.keyId, createdAt: this.createdAt };
  }

  /** Revokes the key out of band (as if it expired or an admin revoked it) and issues a new one. */
  replace(): string {
    this.install(newApiKey());
    return this.key;
  }

  private install(key: string): void {
    for (const listener of keyListeners) listener(key);
    this.key = key;
    this.keyDigest = digest(key);
    this.keyId = newKeyId();
    this.createdAt = this.now();
    this.lastUsedAt = null;
    this.activeFrom = 0;
  }
}
