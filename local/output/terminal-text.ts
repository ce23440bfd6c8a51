/**
 * What `npm start` prints of text it did not write itself (a vendor's status word, error bodies and
 * report names, the user's own list lines and flags) goes through here: every control and format
 * character becomes a visible escape, as `summary.json` shows them. A status word holding escape
 * sequences once set the window title, erased a line and printed a fake `=> succeeded`.
 *
 * Kept: a line feed and a tab where the CLI's own text has them (`terminalText` on whole lines).
 * Escaped: the rest of C0 (CR and ESC included), DEL, C1, and Unicode format characters (bidi
 * overrides, zero-width joiners), which can reorder or hide what a line shows.
 */
import type { Writable } from 'node:stream';

/** Cc is C0, DEL and C1; Cf the format characters. */
const UNSAFE_IN_LINES = /(?![\n\t])[\p{Cc}\p{Cf}]/gu;
const UNSAFE_IN_VALUES = /[\p{Cc}\p{Cf}]/gu;

function escaped(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** `text` (whole lines of the CLI's output) with every control and format character but \n and \t escaped. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE_IN_LINES, escaped);
}

/** One value inside a line: a line feed or tab in it is escaped too, so it cannot start a line of its own. */
export function terminalValue(value: unknown): string {
  return String(value).replace(UNSAFE_IN_VALUES, escaped);
}

/**
 * A template literal whose interpolated values are escaped (`terminalValue`) and whose own text is
 * kept as written: for the progress reporter, whose own text carries the terminal's line controls.
 */
export function terminal(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce(
    (line, part, i) => line + part + (i < values.length ? terminalValue(values[i]) : ''),
    '',
  );
}

/** How long a wait may stay silent before it says what it waits for. */
export const QUIET_WAIT_MS = 2_000;

let pendingNotice: NodeJS.Timeout | undefined;

/**
 * Says `text` once nothing has been written for `afterMs` from now: a wait that turns out long says
 * what it waits for, a short one adds no line. Any line written first cancels it, and so does a
 * later notice (one wait at a time); it never keeps the process alive.
 */
export function sayIfStillQuiet(
  text: string,
  stream: Pick<Writable, 'write'> = process.stdout,
  afterMs = QUIET_WAIT_MS,
): void {
  clearTimeout(pendingNotice);
  pendingNotice = setTimeout(() => {
    pendingNotice = undefined;
    stream.write(terminalText(text));
  }, afterMs);
  pendingNotice.unref();
}

/** Writes whole lines to the terminal, escaped (`terminalText`). */
export function writeTerminal(stream: Pick<Writable, 'write'>, text: string): void {
  if (text === '') return;
  clearTimeout(pendingNotice);
  pendingNotice = undefined;
  stream.write(terminalText(text));
}

/** `writeTerminal` to standard output and standard error. */
export const say = (text: string): void => writeTerminal(process.stdout, text);
export const complain = (text: string): void => writeTerminal(process.stderr, text);
