/**
 * EventBridge event-pattern matching, as the EventBridge user guide defines it, for tests that feed
 * real events (S3 "Object Created", Secrets Manager, Step Functions) through the rules the stack
 * synthesizes: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html and
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html.
 *
 * No npm package implements these semantics (AWS's engine is aws/event-ruler, in Java; the SDK's
 * TestEventPattern needs an account), so this is the documented subset the stack can use. An
 * operator it does not know throws instead of matching or not matching by accident: a rule that
 * starts using one fails its test until the operator is modelled here.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Matcher = Json;

/** Whether `event` matches `pattern` (an EventBridge pattern object). */
export function matchesEventPattern(pattern: Record<string, Json>, event: unknown): boolean {
  return matchObject(pattern, event);
}

function matchObject(pattern: Record<string, Json>, value: unknown): boolean {
  for (const [field, expected] of Object.entries(pattern)) {
    if (field === '$or') {
      if (!Array.isArray(expected)) throw new Error('$or must hold an array of patterns');
      const any = expected.some((alternative) => matchObject(alternative as Record<string, Json>, value));
      if (!any) return false;
      continue;
    }
    const actual = isRecord(value) ? value[field] : undefined;
    if (Array.isArray(expected)) {
      if (!matchField(expected, actual)) return false;
    } else if (isRecord(expected)) {
      if (!matchObject(expected, actual)) return false;
    } else {
      throw new Error(`pattern field ${field} must be an array of matchers or an object`);
    }
  }
  return true;
}

/** A leaf field: any matcher in the list matches the value (or, for an array value, any element). */
function matchField(matchers: readonly Matcher[], actual: unknown): boolean {
  return matchers.some((matcher) => {
    if (isRecord(matcher) && 'exists' in matcher) {
      // Exists looks at presence only (arrays included: an empty array does not exist).
      const present = actual !== undefined && !(Array.isArray(actual) && actual.length === 0);
      return matcher.exists === present;
    }
    if (actual === undefined) return false;
    const values = Array.isArray(actual) ? actual : [actual];
    return values.some((v) => matchValue(matcher, v));
  });
}

function matchValue(matcher: Matcher, value: unknown): boolean {
  if (!isRecord(matcher)) return matcher === value;
  const entries = Object.entries(matcher);
  if (entries.length !== 1) throw new Error(`a matcher has one operator: ${JSON.stringify(matcher)}`);
  const [operator, argument] = entries[0] as [string, Json];
  switch (operator) {
    case 'prefix':
      return typeof value === 'string' && affix(argument, value, (v, a) => v.startsWith(a));
    case 'suffix':
      return typeof value === 'string' && affix(argument, value, (v, a) => v.endsWith(a));
    case 'equals-ignore-case':
      return typeof value === 'string' && typeof argument === 'string' && fold(value) === fold(argument);
    case 'wildcard':
      return (
        typeof value === 'string' && typeof argument === 'string' && wildcardRegExp(argument).test(value)
      );
    case 'anything-but':
      return anythingBut(argument, value);
    case 'numeric':
      return typeof value === 'number' && numeric(argument, value);
    default:
      throw new Error(`event-pattern operator ${operator} is not modelled in test/kit/event-pattern.ts`);
  }
}

/** `prefix`/`suffix` take a string, or `{ "equals-ignore-case": string }`. */
function affix(argument: Json, value: string, test: (value: string, affix: string) => boolean): boolean {
  if (typeof argument === 'string') return test(value, argument);
  if (isRecord(argument) && typeof argument['equals-ignore-case'] === 'string') {
    return test(fold(value), fold(argument['equals-ignore-case']));
  }
  throw new Error(`unsupported prefix/suffix argument ${JSON.stringify(argument)}`);
}

function anythingBut(argument: Json, value: unknown): boolean {
  if (Array.isArray(argument)) return !argument.includes(value as Json);
  if (isRecord(argument)) return !matchValue(argument, value);
  return argument !== value;
}

function numeric(argument: Json, value: number): boolean {
  if (!Array.isArray(argument) || argument.length % 2 !== 0) throw new Error('numeric takes operator pairs');
  for (let i = 0; i < argument.length; i += 2) {
    const [op, bound] = [argument[i], argument[i + 1] as number];
    const ok =
      op === '='
        ? value === bound
        : op === '<'
          ? value < bound
          : op === '<='
            ? value <= bound
            : op === '>'
              ? value > bound
              : op === '>='
                ? value >= bound
                : undefined;
    if (ok === undefined) throw new Error(`unknown numeric operator ${String(op)}`);
    if (!ok) return false;
  }
  return true;
}

/** `*` matches any run of characters; `\*` and `\\` are a literal star and backslash. */
function wildcardRegExp(wildcard: string): RegExp {
  let source = '';
  for (let i = 0; i < wildcard.length; i++) {
    const char = wildcard[i] as string;
    if (char === '\\' && i + 1 < wildcard.length) {
      source += escapeRegExp(wildcard[++i] as string);
    } else {
      source += char === '*' ? '.*' : escapeRegExp(char);
    }
  }
  return new RegExp(`^${source}$`, 's');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** EventBridge folds case with Unicode's simple case folding; lower-casing agrees for these keys. */
function fold(text: string): string {
  return text.toLowerCase();
}

function isRecord(value: unknown): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
