/**
 * After a pause: give every upload and schedule fire the intake refused while paused back to it.
 * Run by the pause parameter's change event and every 15 minutes (lib/constructs/pause-switch.ts).
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ConfigurationError } from '#core/errors';
import { requireEnv } from '#core/runtime/env';
import { scanLoggerFromPowertools } from '#core/runtime/logger';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { pauseSwitchFromEnvironment } from '#core/runtime/pause-deps';
import { ENV } from '#core/runtime/variables';
import { type ResumeDeps, type ResumeResult, resumePausedStarts } from '#core/workflows/list/resume';

export function createResumePausedStartsHandler(deps: ResumeDeps): Handler<unknown, ResumeResult> {
  // The trigger's event says nothing the run needs: the switch and the queues are read afresh.
  return async () => resumePausedStarts(deps);
}

export const handler = createLazyHandler({
  deps: (tools): ResumeDeps => {
    const pause = pauseSwitchFromEnvironment(process.env, tools);
    if (pause === undefined) throw new ConfigurationError(ENV.pauseParameterName, 'is required to resume');
    return {
      sqs: tools.tracer.captureAWSv3Client(new SQSClient({})),
      lambda: tools.tracer.captureAWSv3Client(new LambdaClient({})),
      pause,
      logger: scanLoggerFromPowertools(tools.logger),
      queueUrls: requireEnv(process.env, ENV.heldStartQueueUrls)
        .split(',')
        .map((url) => url.trim())
        .filter(Boolean),
    };
  },
  handler: createResumePausedStartsHandler,
});
