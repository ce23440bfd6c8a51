/**
 * What `npm start -- rotate` says while the rotation function waits on the vendor: its answer to
 * the rotate (which a vendor may trickle for half a minute), the probes of a new key the vendor
 * does not accept yet (the propagation window), the pauses between them, and the check scan. The
 * function itself is the deployed one and says nothing to a terminal; these wrap the clients and
 * the sleep it is given, so each wait over about two seconds is named (local/output/progress.ts).
 */
import type { KeyManagementFactory, RotationDeps } from '#lambdas/rotation/deps';
import type { RotationStep } from '#lambdas/rotation/request';
import type { WaitNotices } from '../output/progress.ts';

export interface RotationWaits {
  /** The key API as the function gets it, each call a named wait. */
  readonly keys: KeyManagementFactory;
  /** The function's sleep: part of the wait under way (probing again), else a pause of its own. */
  readonly sleep: RotationDeps['sleep'];
  /** Runs one step of the rotation: its waits are named with it, and end with it. */
  step<T>(step: RotationStep, run: () => Promise<T>): Promise<T>;
  /** Runs `run` as one wait for `what` (the check scan). */
  during<T>(what: string, run: () => Promise<T>): Promise<T>;
}

export function rotationWaits(
  notices: WaitNotices,
  keys: KeyManagementFactory,
  sleep: RotationDeps['sleep'],
  propagationSeconds: number,
): RotationWaits {
  let step: RotationStep | undefined;
  /** The wait that probing and the pauses between probes belong to, once a probe began. */
  let probing = false;
  const probes = `the vendor to accept the new key, probing it within the ${propagationSeconds} s propagation window`;
  /** A wait that ends with its call. */
  const during = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    probing = false;
    notices.waitingFor(what, step);
    try {
      return await run();
    } finally {
      notices.done();
    }
  };
  /** A probe: its wait goes on through the next probes and the pauses between them. */
  const probe = <T>(run: () => Promise<T>): Promise<T> => {
    probing = true;
    notices.waitingFor(probes, step);
    return run();
  };
  return {
    keys: (apiKey, orgUuid) => {
      const client = keys(apiKey, orgUuid);
      return {
        getKeyInfo: () => during("the vendor's key info", () => client.getKeyInfo()),
        probeKey: (retry) => probe(() => client.probeKey(retry)),
        keyAccepted: () => probe(() => client.keyAccepted()),
        rotateKey: (options) => during("the vendor's answer to the rotate", () => client.rotateKey(options)),
        close: () => client.close(),
      };
    },
    sleep: (ms) => {
      notices.waitingFor(probing ? probes : 'the rotation function to try again after a pause', step);
      return sleep(ms);
    },
    async step(name, run) {
      step = name;
      probing = false;
      try {
        return await run();
      } finally {
        notices.done();
        step = undefined;
        probing = false;
      }
    },
    during,
  };
}
