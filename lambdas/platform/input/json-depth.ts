/**
 * How deep a JSON text nests, found without parsing it or recursing: for the bounds on vendor JSON
 * (vendor-api/json.ts) and for redaction, which walks parsed values recursively. No imports, so
 * any module may use it without an import cycle.
 */

/**
 * True when the arrays and objects of `text` nest deeper than `maxDepth`, brackets inside strings
 * aside. One pass without recursion, before the text is parsed; malformed text is left to
 * JSON.parse to refuse.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}
