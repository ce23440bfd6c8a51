/**
 * `expect(run).toExitWith(code)` for a CLI run (`{ code, stdout, stderr }`): on a mismatch it shows
 * what the run printed, so a failure that happens once on a loaded machine says why instead of only
 * "expected 1 to be 0".
 */
import { expect } from 'vitest';

interface ExitedRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The last lines of a stream, enough to see the summary and the error without the whole log. */
function tail(text: string, lines = 40): string {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? [`… (${all.length - lines} earlier lines)`, ...all.slice(-lines)] : all).join(
    '\n',
  );
}

expect.extend({
  toExitWith(received: ExitedRun, code: number) {
    const pass = received.code === code;
    return {
      pass,
      message: () =>
        `expected the run to exit ${pass ? 'with anything but ' : ''}${code}, it exited ${received.code}\n` +
        `--- stdout (tail) ---\n${tail(received.stdout)}\n--- stderr (tail) ---\n${tail(received.stderr)}`,
    };
  },
});

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: must match vitest's own declaration of Matchers<T = any>
  interface Matchers<T = any> {
    /** The run's exit code is `code`; a mismatch prints the tail of its stdout and stderr. */
    toExitWith(code: number): T;
  }
}
