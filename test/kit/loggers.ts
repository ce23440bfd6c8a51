/**
 * A logger that keeps its lines in memory, for asserting what was (and was not) logged. It has the
 * shape of the core's PipelineLogger / VendorLogger, including `createChild` and `appendKeys`: a child
 * shares the parent's line list and adds its own keys to each line.
 */
import { redactDeep, redactText } from '#lambdas/platform/redaction/redact';
import { checkText } from './leak-watch.ts';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  /** The appended keys merged with the call's extra fields. */
  readonly fields: Readonly<Record<string, unknown>>;
}

export interface MemoryLogger {
  readonly lines: LogLine[];
  debug(message: string, ...extra: Record<string, unknown>[]): void;
  info(message: string, ...extra: Record<string, unknown>[]): void;
  warn(message: string, ...extra: Record<string, unknown>[]): void;
  error(message: string, ...extra: Record<string, unknown>[]): void;
  createChild(): MemoryLogger;
  appendKeys(keys: Record<string, unknown>): void;
  /** Every line serialised, for "this text never appears" assertions. */
  text(): string;
}

export function createMemoryLogger(
  lines: LogLine[] = [],
  inherited: Record<string, unknown> = {},
): MemoryLogger {
  const keys: Record<string, unknown> = { ...inherited };
  const log =
    (level: LogLine['level']) =>
    (message: string, ...extra: Record<string, unknown>[]): void => {
      const fields = Object.assign({ ...keys }, ...extra);
      lines.push({ level, message, fields });
      // What the deployed logger would write to CloudWatch (runtime/logger.ts redacts every line).
      checkText(
        `log line (${level}) "${message.slice(0, 60)}"`,
        JSON.stringify({ message: redactText(message), fields: redactDeep(fields) }),
      );
    };
  return {
    lines,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    createChild: () => createMemoryLogger(lines, keys),
    appendKeys: (more) => {
      Object.assign(keys, more);
    },
    text: () => lines.map((line) => JSON.stringify(line)).join('\n'),
  };
}
