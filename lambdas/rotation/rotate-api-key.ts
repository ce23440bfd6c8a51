/**
 * Secrets Manager's rotation function for the vendor org key: createSecret, setSecret, testSecret
 * and finishSecret (lambdas/rotation/rotation-step.ts). Secrets Manager invokes it; nothing else should.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { type RotationDeps, rotationDepsFromEnvironment } from '#lambdas/rotation/deps';
import { parseRotationRequest } from '#lambdas/rotation/request';
import { type RotationStepResult, runRotationStep } from '#lambdas/rotation/rotation-step';

export function createRotateApiKeyHandler(deps: RotationDeps): Handler<unknown, RotationStepResult> {
  return async (event, context) => runRotationStep(parseRotationRequest(event), deps, context);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) =>
    rotationDepsFromEnvironment(process.env, tools, {
      secretsManager: tools.tracer.captureAWSv3Client(new SecretsManagerClient({})),
      eventBridge: tools.tracer.captureAWSv3Client(new EventBridgeClient({})),
    }),
  handler: createRotateApiKeyHandler,
});
