/**
 * The pause switch: one SSM parameter, `running` or `paused`, read by every intake (uploads and
 * schedule fires) so that an operator can stop new runs during a vendor outage without a deploy.
 *
 * A paused intake refuses with PipelinePausedError. Lambda keeps the event: after its retries it
 * goes to the intake's dead-letter queue (the on-failure destination), whole. On resume,
 * `resumePausedStarts` (lambdas/platform/runs/held-starts.ts) replays exactly those events; the deterministic
 * execution names make a replay of anything that did start harmless.
 */
import { ConfigurationError, ERROR_NAME } from '#lambdas/platform/errors';

export const PAUSE_STATE = { running: 'running', paused: 'paused' } as const;

export class PipelinePausedError extends Error {
  constructor(parameterName: string) {
    super(
      `The pipeline is paused (${parameterName} = paused): nothing was started; the event waits in the dead-letter queue and starts on resume`,
    );
    this.name = ERROR_NAME.PipelinePausedError;
  }
}

export interface PauseSwitch {
  readonly parameterName: string;
  isPaused(): Promise<boolean>;
}

/** A switch over `read` (the parameter's value, cached by the caller). */
export function pauseSwitch(parameterName: string, read: () => Promise<string | undefined>): PauseSwitch {
  return {
    parameterName,
    async isPaused() {
      const value = (await read())?.trim();
      if (value === PAUSE_STATE.paused) return true;
      if (value === PAUSE_STATE.running) return false;
      throw new ConfigurationError(
        parameterName,
        `must be "running" or "paused" (got ${JSON.stringify(value ?? null)})`,
      );
    },
  };
}

/** Refuses with PipelinePausedError while the switch is on. */
export async function refuseWhilePaused(pause: PauseSwitch | undefined): Promise<void> {
  if (pause !== undefined && (await pause.isPaused())) throw new PipelinePausedError(pause.parameterName);
}
