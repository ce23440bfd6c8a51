/**
 * Secrets Manager's rotation function for the vendor org key: createSecret, setSecret, testSecret
 * and finishSecret (lambdas/core/rotation/steps.ts). Secrets Manager invokes it; nothing else should.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { RotationDeps } from '#core/rotation/deps';
import { parseRotationRequest } from '#core/rotation/request';
import { type RotationStepResult, runRotationStep } from '#core/rotation/steps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { rotationDepsFromEnvironment } from '#core/runtime/rotation-deps';

export function createRotateApiKeyHandler(deps: RotationDeps): Handler<unknown, RotationStepResult> {
  return async (event) => runRotationStep(parseRotationRequest(event), deps);
}

export const handler = createLazyHandler({
  deps: (tools) =>
    rotationDepsFromEnvironment(process.env, tools, {
      secretsManager: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})),
      eventBridge: tools.tracer.captureAWSv3Client(new EventBridgeClient({})),
    }),
  handler: createRotateApiKeyHandler,
});
