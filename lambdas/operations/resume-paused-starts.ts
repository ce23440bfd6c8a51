/**
 * The resume function's entry: after a pause, every intake event the switch refused goes back to
 * its intake (lambdas/platform/runs/held-starts.ts). Deployed by lib/workflows/operations/pipeline-pause.ts.
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError } from '#lambdas/platform/errors';
import { type ResumeDeps, type ResumeResult, resumePausedStarts } from '#lambdas/platform/runs/held-starts';
import { requireEnv } from '#lambdas/platform/runtime/env';
import { pipelineLoggerFromPowertools } from '#lambdas/platform/runtime/logger';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { pauseSwitchFromEnvironment } from '#lambdas/platform/runtime/pause-deps';
import { ENV } from '#lambdas/platform/runtime/variables';

/**
 * After a pause: give every upload and schedule fire the intake refused while paused back to it.
 * Run by the pause parameter's change event and every 15 minutes (lib/workflows/operations/pipeline-pause.ts).
 */
export function createResumePausedStartsHandler(deps: ResumeDeps): Handler<unknown, ResumeResult> {
  // The trigger's event says nothing the run needs: the switch and the queues are read afresh.
  return async () => resumePausedStarts(deps);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools): ResumeDeps => {
    const pause = pauseSwitchFromEnvironment(process.env, tools);
    if (pause === undefined) throw new ConfigurationError(ENV.pauseParameterName, 'is required to resume');
    return {
      sqs: tools.tracer.captureAWSv3Client(new SQSClient({})),
      lambda: tools.tracer.captureAWSv3Client(new LambdaClient({})),
      pause,
      logger: pipelineLoggerFromPowertools(tools.logger),
      queueUrls: requireEnv(process.env, ENV.heldStartQueueUrls)
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean),
    };
  },
  handler: createResumePausedStartsHandler,
});
