/**
 * Powertools' Logger behind the small `ScanLogger` interface the core uses.
 *
 * Forwards the four levels (each line through `redactDeep`, the last net for vendor text) and maps
 * `createChild`/`appendKeys`, so a handler can tag one
 * invocation's lines without touching the shared instance, and so the core depends on this small
 * interface rather than on Powertools' wider (and changing) signatures.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { redactDeep, redactText } from '#lambdas/platform/redact';
import type { ScanLogger } from '#lambdas/scan/deps';

export function scanLoggerFromPowertools(logger: Logger): ScanLogger {
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
    createChild: () => scanLoggerFromPowertools(logger.createChild()),
    appendKeys: (keys) => logger.appendKeys(redactDeep(keys) as LogAttributes),
  };
}
