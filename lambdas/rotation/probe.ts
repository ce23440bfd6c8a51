/**
 * Finding the key in a kept rotate answer: each candidate is tried as the Bearer key of
 * `GET …/api/key`, and the answer classifies that candidate alone (KeyProbe): it works, it is not
 * this key, or the vendor proved nothing (429, 5xx, a timeout, a reset) and the same candidate is
 * tried again after a backoff that honours Retry-After. A wrong candidate's answer, whatever it is,
 * never ends the search.
 *
 * A key that does not work yet is not a lost key: many APIs take a while before a new key works
 * everywhere. So the candidates are tried in passes, with a pause between them, until the
 * propagation window (from the answer's arrival) has passed or the invocation's time runs short.
 * The bounds are the number of candidates (CANDIDATE_LIMITS.maxCandidates) and that time.
 */
import type { VendorCredentialsValue } from '#lambdas/platform/secrets';
import type { KeyProbe } from '#lambdas/vendor-api/keys/types';
import { candidatesOf, isSuccessAnswer, type StoredAnswer } from './answer.ts';
import type { RotationDeps } from './deps.ts';

/** What the probing found in a kept answer. */
export type Settled =
  /** `key` works and is not the current key: the vendor rotated. */
  | { readonly found: 'new-key'; readonly key: string; readonly tried: number; readonly passes: number }
  /** Only the current key, which the answer holds, works: the vendor handed it back unchanged. */
  | { readonly found: 'same-key'; readonly key: string; readonly tried: number; readonly passes: number }
  /**
   * An error answer (non-2xx) without a working key, and the current key still works: the vendor
   * did not rotate.
   */
  | { readonly found: 'not-rotated'; readonly tried: number; readonly passes: number }
  /** No key works, and the window (`windowOver`) or the invocation's time ran out first. */
  | {
      readonly found: 'nothing';
      readonly windowOver: boolean;
      readonly tried: number;
      readonly passes: number;
    };

/**
 * The pause between passes and between tries of a candidate the vendor proved nothing about:
 * doubled each time up to `maxMs`. A short window is probed at least a few times: the first pause
 * is at most an eighth of it.
 */
export const PROBE_BACKOFF = { firstMs: 1_000, minFirstMs: 50, maxMs: 30_000 } as const;

export function firstPauseMs(keyPropagationMs: number): number {
  return Math.max(PROBE_BACKOFF.minFirstMs, Math.min(PROBE_BACKOFF.firstMs, keyPropagationMs / 8));
}

/** When probing stops, on `deps.clock`'s time line (milliseconds). */
export interface ProbeTime {
  /** No pass starts after this, and no wait for a vendor that proved nothing goes past it. */
  readonly stopBy: number;
  /** No probe at all starts after this (the invocation must still store what it found). */
  readonly mustEndBy: number;
}

/**
 * Probes the kept answer until a key works, the vendor is proven not to have rotated, or time is
 * up. A pass tries every candidate; those the vendor proved nothing about are tried again, after a
 * backoff that honours Retry-After, until each has a definite answer (a vendor that throttles or
 * fails every wrong key still has the right one tried in the first round). Passes repeat, with a
 * pause, until the window is over; a pass begun before `stopBy` is finished (bar waits) while the
 * invocation has time, so every attempt, even one after the window, tries every candidate once.
 */
export async function probeAnswer(
  deps: RotationDeps,
  current: VendorCredentialsValue,
  orgUuid: string,
  kept: StoredAnswer,
  time: ProbeTime,
): Promise<Settled> {
  const candidates = candidatesOf(deps, kept.answer, [orgUuid]);
  const others = candidates.filter((candidate) => candidate !== current.apiKey);
  const holdsCurrent = others.length < candidates.length;
  // An error answer may come from a vendor that did nothing: the current key then still works.
  const success = isSuccessAnswer(kept.answer);
  let currentKeyMayWork = !success;
  const first = firstPauseMs(deps.settings.keyPropagationMs);
  let pause = first;
  let tried = 0;
  for (let passes = 1; ; passes++) {
    // The current key last: a new key anywhere in the answer wins over it.
    let unresolved = holdsCurrent || currentKeyMayWork ? [...others, current.apiKey] : others;
    let currentWorks = false;
    let laterWait = first;
    let outOfTime = false;
    while (unresolved.length > 0 && !outOfTime) {
      const later: string[] = [];
      let retryAfterMs = 0;
      for (const candidate of unresolved) {
        if (deps.clock().getTime() > time.mustEndBy) {
          outOfTime = true;
          break;
        }
        if (candidate !== current.apiKey || holdsCurrent) tried += 1;
        const probe = await probeOnce(deps, candidate, orgUuid);
        if (probe.verdict === 'works') {
          if (candidate !== current.apiKey) return { found: 'new-key', key: candidate, tried, passes };
          currentWorks = true;
        } else if (probe.verdict === 'try-later') {
          later.push(candidate);
          retryAfterMs = Math.max(retryAfterMs, probe.retryAfterMs ?? 0);
        } else if (candidate === current.apiKey) {
          // Refused: the vendor did rotate; its key is somewhere in the answer, or nowhere.
          currentKeyMayWork = false;
        }
      }
      if (later.length === 0 || outOfTime) break;
      const delay = Math.max(laterWait, retryAfterMs);
      if (deps.clock().getTime() + delay > time.stopBy) {
        outOfTime = true;
        break;
      }
      await deps.sleep(delay);
      laterWait = Math.min(laterWait * 2, PROBE_BACKOFF.maxMs);
      unresolved = later;
    }
    // An error answer and the current key works: the vendor did not rotate (nobody is locked out).
    if (currentWorks && !success) return { found: 'not-rotated', tried, passes };
    const now = deps.clock().getTime();
    const windowOver = now >= kept.receivedAt.getTime() + deps.settings.keyPropagationMs;
    // The answer holds the key in use, which works; every other string was refused, or the window
    // for proving them is over: the vendor handed the key back.
    if (currentWorks && (!outOfTime || windowOver))
      return { found: 'same-key', key: current.apiKey, tried, passes };
    if (outOfTime || now >= time.stopBy) return { found: 'nothing', windowOver, tried, passes };
    await deps.sleep(Math.min(pause, time.stopBy - now));
    pause = Math.min(pause * 2, PROBE_BACKOFF.maxMs);
  }
}

/** One `GET …/api/key` with `candidate`; the waits are the caller's, so the transport does not retry. */
async function probeOnce(deps: RotationDeps, candidate: string, orgUuid: string): Promise<KeyProbe> {
  const vendor = deps.keys(candidate, orgUuid);
  try {
    return await vendor.probeKey('never');
  } finally {
    await vendor.close();
  }
}
