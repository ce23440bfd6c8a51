/**
 * Powertools' Logger behind the small `ScanLogger` interface the core uses.
 *
 * Forwards the four levels and maps `createChild`/`appendKeys`, so a handler can tag one
 * invocation's lines without touching the shared instance, and so the core depends on this small
 * interface rather than on Powertools' wider (and changing) signatures.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, LogLevel } from '@aws-lambda-powertools/logger/types';
import type { ScanLogger } from '#core/workflows/scan/deps';

export function scanLoggerFromPowertools(logger: Logger): ScanLogger {
  const forward =
    (log: (message: string, ...extra: LogAttributes[]) => void) =>
    (message: string, ...extra: Record<string, unknown>[]): void => {
      log.call(logger, message, ...(extra as LogAttributes[]));
    };
  return {
    debug: forward(logger.debug),
    info: forward(logger.info),
    warn: forward(logger.warn),
    error: forward(logger.error),
    createChild: () => scanLoggerFromPowertools(logger.createChild()),
    appendKeys: (keys) => logger.appendKeys(keys as LogAttributes),
  };
}

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

/**
 * A Powertools Logger as a ScanLogger. `logLevel` (e.g. POWERTOOLS_LOG_LEVEL from the env object the
 * deps are built from) wins over what Powertools reads from process.env; unknown words are ignored.
 */
export function createServiceLogger(
  serviceName: string,
  logLevel?: string,
): { logger: ScanLogger; powertools: Logger } {
  const level = logLevel?.trim().toUpperCase();
  const known = LOG_LEVELS.find((l) => l === level);
  const powertools = new Logger({ serviceName, ...(known ? { logLevel: known as LogLevel } : {}) });
  return { logger: scanLoggerFromPowertools(powertools), powertools };
}
