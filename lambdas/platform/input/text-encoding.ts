/**
 * Lists (domain lists, watchlists) are UTF-8 text. A file saved in another encoding is refused as a
 * whole, once, naming the encoding and how to convert it, instead of a "control character" or a
 * "not a valid label" on every line: Excel and Windows tools save UTF-16 ("Unicode text") or
 * Windows-1252, and a list of them would otherwise read as many bad lines.
 */

/** The byte order marks of UTF-16, which UTF-8 text never starts with. */
const UTF16_BOMS: readonly { readonly bytes: readonly [number, number]; readonly name: string }[] = [
  { bytes: [0xff, 0xfe], name: 'UTF-16LE' },
  { bytes: [0xfe, 0xff], name: 'UTF-16BE' },
];

/** A shell-quoted file name for the conversion hint. */
function quoted(name: string): string {
  return /^[\w@%+=:,./-]+$/u.test(name) ? name : `'${name.replaceAll("'", `'\\''`)}'`;
}

/** The name the converted copy gets: `list.txt` → `list.utf8.txt`. */
function convertedName(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.utf8${name.slice(dot)}` : `${name}.utf8`;
}

function convertHint(from: string, file: string): string {
  return `convert it to UTF-8 first, e.g. iconv -f ${from} -t UTF-8 ${quoted(file)} > ${quoted(convertedName(file))}`;
}

/**
 * Where the first byte that cannot be UTF-8 is, or -1. With `partial`, a sequence cut off by the
 * end of `bytes` is not counted (the next chunk of a stream completes it).
 */
function firstInvalidByte(bytes: Uint8Array, partial = false): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] as number;
    const length =
      lead < 0x80
        ? 1
        : lead >= 0xc2 && lead <= 0xdf
          ? 2
          : lead >= 0xe0 && lead <= 0xef
            ? 3
            : lead >= 0xf0 && lead <= 0xf4
              ? 4
              : 0;
    if (length === 0) return index;
    for (let next = 1; next < length; next++) {
      if (index + next >= bytes.length) return partial ? -1 : index;
      const byte = bytes[index + next] as number;
      // The second byte's range is narrower after E0, ED, F0 and F4 (no overlongs, no surrogates).
      const [low, high] =
        next === 1 && lead === 0xe0
          ? [0xa0, 0xbf]
          : next === 1 && lead === 0xed
            ? [0x80, 0x9f]
            : next === 1 && lead === 0xf0
              ? [0x90, 0xbf]
              : next === 1 && lead === 0xf4
                ? [0x80, 0x8f]
                : [0x80, 0xbf];
      if (byte < low || byte > high) return index;
    }
    index += length;
  }
  return -1;
}

function hex(byte: number): string {
  return `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

export interface EncodingCheck {
  /** The file's name, for the conversion hint. */
  readonly file: string;
  /** `bytes` is the start of a stream, not the whole file. @default false */
  readonly partial?: boolean;
  /** Lines before `bytes` (a later chunk of a stream). @default 0 */
  readonly linesBefore?: number;
  /** `bytes` is where the file starts (where a byte order mark would be). @default true */
  readonly atStart?: boolean;
}

/**
 * Why `bytes` is not UTF-8 text, with the encoding it most likely is and the command that converts
 * it; undefined when it is UTF-8 (with or without a UTF-8 BOM).
 */
export function notUtf8Reason(bytes: Uint8Array, check: EncodingCheck): string | undefined {
  if (check.atStart !== false) {
    const bom = UTF16_BOMS.find(({ bytes: [a, b] }) => bytes[0] === a && bytes[1] === b);
    if (bom) {
      return `is ${bom.name} text (it starts with the byte order mark ${hex(bom.bytes[0])} ${hex(bom.bytes[1])}), not UTF-8: ${convertHint('UTF-16', check.file)}`;
    }
    // UTF-16 without a mark: ASCII characters with a zero byte beside each one.
    const head = bytes.subarray(0, 64);
    if (head.length >= 4 && head.filter((byte) => byte === 0).length * 3 >= head.length) {
      const from = head[0] === 0 ? 'UTF-16BE' : 'UTF-16LE';
      return `is not UTF-8: every other byte is zero, as in ${from} text without a byte order mark; ${convertHint(from, check.file)}`;
    }
  }
  const at = firstInvalidByte(bytes, check.partial);
  if (at < 0) return undefined;
  let line = (check.linesBefore ?? 0) + 1;
  for (let index = 0; index < at; index++) if (bytes[index] === 0x0a) line += 1;
  return `is not UTF-8: line ${line} has the byte ${hex(bytes[at] as number)}, which UTF-8 text cannot have there (Latin-1 or Windows-1252 text?); ${convertHint('WINDOWS-1252', check.file)}`;
}

/**
 * The characters a terminal or an editor acts on instead of showing: U+2028 and U+2029 (line and
 * paragraph separators: a JSON line that holds one reads as two lines to JavaScript before ES2019
 * and to many viewers), and the bidirectional controls U+202A–U+202E and U+2066–U+2069 (`cat` of
 * a record holding U+202E shows the text after it reversed). JSON allows them raw in a string.
 */
const INVISIBLE_CONTROLS = /[\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify`, with every line separator and bidirectional control written as its `\uXXXX`
 * escape: the same JSON value, but a stored record or log line shows what it holds. Outside
 * strings JSON has only ASCII, so the escape is always inside a string.
 */
export function jsonText(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? '').replace(
    INVISIBLE_CONTROLS,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
