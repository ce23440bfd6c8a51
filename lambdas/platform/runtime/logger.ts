/**
 * Powertools' Logger behind the small `PipelineLogger` interface the steps use.
 *
 * Forwards the four levels (each line through `redactDeep`, the last net for vendor text) and maps
 * `createChild`/`appendKeys`, so a handler can tag one
 * invocation's lines without touching the shared instance, and so the core depends on this small
 * interface rather than on Powertools' wider (and changing) signatures.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { redactDeep, redactText } from '#lambdas/platform/redaction/redact';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';

/**
 * A structured logger, the one every workflow's steps take. Powertools' Logger satisfies it; when `createChild` and `appendKeys` exist the
 * handlers use them to tag one invocation's lines without touching the shared instance (the local
 * runner drives many domains concurrently through one logger).
 */
export interface PipelineLogger extends VendorLogger {
  createChild?(): PipelineLogger;
  appendKeys?(keys: Record<string, unknown>): void;
}

export function pipelineLoggerFromPowertools(logger: Logger): PipelineLogger {
  const forward =
    (log: (message: string, ...extra: LogAttributes[]) => void) =>
    (message: string, ...extra: Record<string, unknown>[]): void => {
      // The net under every line: what reaches CloudWatch passes the one redaction.
      log.call(
        logger,
        redactText(message),
        ...(extra.map((fields) => redactDeep(fields)) as LogAttributes[]),
      );
    };
  return {
    debug: forward(logger.debug),
    info: forward(logger.info),
    warn: forward(logger.warn),
    error: forward(logger.error),
    createChild: () => pipelineLoggerFromPowertools(logger.createChild()),
    appendKeys: (keys) => logger.appendKeys(redactDeep(keys) as LogAttributes),
  };
}
