/**
 * What finishSecret does once AWSCURRENT names the new key: tell dependents (ApiKeyRotated) and
 * copy the value into the mirror secrets integrations read. Neither can undo the rotation: a
 * failure is retried a few times, then counted (an alarm) and logged by secret id, never thrown.
 */

import { ROTATION_METRIC } from '#lambdas/registry';
import { STAGE } from '#lambdas/rotation/secret-writer';
import type { ApiKeyRotatedDetail, RotationDeps } from './deps.ts';

export interface FollowUpResult {
  readonly eventPublished: boolean;
  readonly mirrorsWritten: number;
  readonly mirrorsFailed: number;
}

export async function runFollowUps(
  deps: RotationDeps,
  detail: ApiKeyRotatedDetail,
  value: string,
): Promise<FollowUpResult> {
  const eventPublished = await withRetries(deps, deps.settings.mirrorAttempts, () =>
    deps.events.publish(detail),
  );
  if (!eventPublished.ok) {
    deps.metrics.record(ROTATION_METRIC.rotationEventFailures, 1, 'Count', { workflow: 'rotation' });
    deps.logger.error('ApiKeyRotated could not be published; dependents were not told', {
      secretArn: detail.secretArn,
      versionId: detail.versionId,
      errorName: eventPublished.errorName,
    });
  }
  let mirrorsWritten = 0;
  let mirrorsFailed = 0;
  for (const mirror of deps.settings.mirrorSecretIds) {
    const written = await withRetries(deps, deps.settings.mirrorAttempts, async () => {
      // The rotation's token as the mirror's version id: a repeated finishSecret is a no-op.
      await deps.secrets.put(mirror, detail.versionId, value, [STAGE.current]);
      const readBack = await deps.secrets.read(mirror, { stage: STAGE.current });
      if (readBack?.value !== value) throw new MirrorMismatchError();
    });
    if (written.ok) {
      mirrorsWritten += 1;
      continue;
    }
    mirrorsFailed += 1;
    deps.metrics.record(ROTATION_METRIC.mirrorWriteFailures, 1, 'Count', { workflow: 'rotation' });
    deps.logger.error(
      'mirror secret not updated after the rotation; integrations reading it hold a dead key',
      {
        mirrorSecretId: mirror,
        versionId: detail.versionId,
        errorName: written.errorName,
      },
    );
  }
  return { eventPublished: eventPublished.ok, mirrorsWritten, mirrorsFailed };
}

class MirrorMismatchError extends Error {
  constructor() {
    super('the mirror secret does not read back the value just written');
    this.name = 'MirrorMismatchError';
  }
}

async function withRetries(
  deps: RotationDeps,
  attempts: number,
  action: () => Promise<void>,
): Promise<{ ok: true } | { ok: false; errorName: string }> {
  let errorName = 'UnknownError';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await action();
      return { ok: true };
    } catch (error) {
      errorName = error instanceof Error ? error.name : 'UnknownError';
      if (attempt < attempts) await deps.sleep(500 * 2 ** (attempt - 1));
    }
  }
  return { ok: false, errorName };
}
