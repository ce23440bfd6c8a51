/**
 * Building blocks for the project's zod schemas: bounded numbers with messages that show the bad
 * value, and the translation of zod issues into `{ setting, problem }` pairs whose setting is named
 * the way its reader knows it (`pipeline.poll.minWaitSeconds` at synth, `POLL_MIN_WAIT_SECONDS` at a
 * cold start, `--min-wait` on the command line).
 *
 * Plain TypeScript with zod only: the CDK app, the handlers and the local runner all import it.
 *
 * Every schema in the project uses `zod/mini`: zod's classic API is not tree-shakable and put
 * 443 KiB into every Lambda bundle, the same schemas in mini take 14 KiB (bench/bundles.ts).
 * Mini registers no language for zod's own messages (they would all read "Invalid input"), so the
 * English ones are registered here, once, for every schema: about 11 KiB per bundle.
 */

import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { ConfigurationError, InvalidInputError } from '#lambdas/platform/errors';

z.config(en());

/** A path segment as zod reports it. */
export type IssuePath = readonly PropertyKey[];

/** One problem, named for its reader. */
export interface SettingProblem {
  readonly setting: string;
  readonly problem: string;
}

/** Inclusive bounds of a numeric setting. */
export interface NumberBounds {
  readonly min: number;
  readonly max: number;
  /** Reject fractions. @default false */
  readonly integer?: boolean;
}

/** A value, shortened and quoted for a message. Never used for secrets or personal data. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** An object whose unknown keys are reported (a typo must not fall back to a default silently). */
export function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'invalid_type' ? `must be an object (got ${describeValue(issue.input)})` : undefined,
  });
}

/**
 * A finite number within `bounds`. The messages are the ones users already know:
 * `must be a number (got "x")`, `must be a whole number (got 1.5)`,
 * `must be between 1 and 3600 (got 0)`.
 */
export function boundedNumber(bounds: NumberBounds) {
  return z.number({ error: (issue) => `must be a number (got ${describeValue(issue.input)})` }).check(
    z.refine((value) => Number.isFinite(value), {
      error: (issue) => `must be a finite number (got ${describeValue(issue.input)})`,
      abort: true,
    }),
    z.refine((value) => bounds.integer !== true || Number.isInteger(value), {
      error: (issue) => `must be a whole number (got ${describeValue(issue.input)})`,
      abort: true,
    }),
    z.refine((value) => value >= bounds.min && value <= bounds.max, {
      error: (issue) => `must be between ${bounds.min} and ${bounds.max} (got ${describeValue(issue.input)})`,
      abort: true,
    }),
  );
}

/**
 * A number read from text (an environment variable, a CLI flag), then held to `bounds`. Blank text
 * is left to the caller (unset means "use the default").
 */
export function numberFromText(bounds: NumberBounds) {
  return z.pipe(
    z.pipe(
      z.string(),
      z.transform((text: string, context) => {
        const value = Number(text.trim());
        if (text.trim() === '' || !Number.isFinite(value)) {
          context.issues.push({
            code: 'custom',
            message: `must be a number (got ${describeValue(text)})`,
            input: text,
          });
          return z.NEVER;
        }
        return value;
      }),
    ),
    boundedNumber(bounds),
  );
}

/** A validator that throws InvalidInputError, as a zod transform: its own reason becomes the issue. */
export function validated<T>(check: (value: string) => T) {
  return z.transform((value: string, context): T => {
    try {
      return check(value);
    } catch (error) {
      context.issues.push({
        code: 'custom',
        message: error instanceof InvalidInputError ? error.reason : 'is not valid',
        input: value,
      });
      return z.NEVER;
    }
  });
}

/** A non-empty string (after trimming), `must be a non-empty string (got …)` otherwise. */
export function nonEmptyString() {
  return z
    .string({ error: (issue) => `must be a non-empty string (got ${describeValue(issue.input)})` })
    .check(
      z.refine((value) => value.trim().length > 0, {
        error: (issue) => `must be a non-empty string (got ${describeValue(issue.input)})`,
        abort: true,
      }),
    );
}

/** One of `allowed`, with the list in the message. */
export function oneOf<const T extends readonly [string, ...string[]]>(allowed: T) {
  return z.enum(allowed, {
    error: (issue) =>
      `must be one of ${allowed.map((a) => `'${a}'`).join(', ')} (got ${describeValue(issue.input)})`,
  });
}

/** `true` or `false`, nothing else (no "yes", no 1). */
export function strictBoolean() {
  return z.boolean({ error: (issue) => `must be true or false (got ${describeValue(issue.input)})` });
}

/** `data.items`, `scan.0.id`: the dot paths the settings that point into a vendor answer take. */
const DOT_PATH = /^[\w-]+(\.[\w-]+)*$/;

/** An optional dot path into a vendor answer (`scan.reconciliation.listFields`, `statsFields`). */
export function dotPath() {
  return z.optional(
    z.string({ error: 'must be a dot path such as data.items' }).check(
      z.regex(DOT_PATH, {
        error: (issue) => `must be a dot path such as data.items (got ${describeValue(issue.input)})`,
      }),
    ),
  );
}

/**
 * A JSON environment variable checked with `schema`; a problem is a ConfigurationError naming the
 * variable and the field (`SCAN_RECONCILIATION.horizonDays`).
 */
export function parseJsonVariable<T extends z.ZodMiniType>(
  json: string,
  variable: string,
  schema: T,
): z.output<T> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ConfigurationError(variable, 'is not valid JSON');
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const [problem] = problemsOf(result.error, (path) => [variable, ...path.map(String)].join('.'));
  throw new ConfigurationError(problem?.setting ?? variable, problem?.problem ?? 'is not valid');
}

/**
 * Zod issues as `{ setting, problem }` pairs. `nameOf` names the setting at a path (the root path
 * included); unknown keys become one problem per key, listing the keys that are known there, so a
 * typo (`scanApiURL`) is reported instead of silently falling back to a default.
 */
export function problemsOf(
  error: z.core.$ZodError,
  nameOf: (path: IssuePath) => string,
  knownKeysAt?: (path: IssuePath) => readonly string[] | undefined,
): SettingProblem[] {
  const problems: SettingProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt?.(issue.path);
      for (const key of issue.keys) {
        problems.push({
          setting: nameOf([...issue.path, key]),
          problem: `is not a known setting${known ? ` (known: ${known.join(', ')})` : ''}`,
        });
      }
      continue;
    }
    problems.push({ setting: nameOf(issue.path), problem: issue.message });
  }
  return problems;
}

/** The keys an object schema knows at `path` (through optionals, defaults, arrays and records). */
export function knownKeysOf(schema: z.core.$ZodType, path: IssuePath): readonly string[] | undefined {
  let current: z.core.$ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current === undefined) return undefined;
    const def = current._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
    if (def.type === 'object') {
      current = unwrap((def.shape as Record<string, z.core.$ZodType>)[String(segment)]);
    } else if (def.type === 'array') {
      current = unwrap(def.element as z.core.$ZodType);
    } else if (def.type === 'record') {
      current = unwrap(def.valueType as z.core.$ZodType);
    } else {
      return undefined;
    }
  }
  return current?._zod.def.type === 'object'
    ? Object.keys((current._zod.def as unknown as { shape: object }).shape)
    : undefined;
}

/** Through the wrappers that do not change an object's keys, whichever zod flavour built them. */
function unwrap(schema: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  let current = schema;
  for (let depth = 0; depth < 10 && current !== undefined; depth++) {
    const def = current._zod.def as z.core.$ZodTypeDef & {
      innerType?: z.core.$ZodType;
      in?: z.core.$ZodType;
    };
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) {
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in) {
      current = def.in;
    } else {
      break;
    }
  }
  return current;
}

/**
 * Parses `value` with `schema`; the first problem becomes an InvalidInputError naming its field
 * (`poll.attempt`, `stored[0].sha256`, or `root` for the value as a whole).
 */
export function parseWith<S extends z.ZodMiniType>(schema: S, value: unknown, root = 'input'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new InvalidInputError(fieldName(root, issue?.path ?? []), issue?.message ?? 'is not valid');
}

function fieldName(root: string, path: IssuePath): string {
  if (path.length === 0) return root;
  const relative = root === 'input' ? path : [root, ...path];
  return relative.reduce<string>(
    (name, segment) =>
      typeof segment === 'number'
        ? `${name}[${segment}]`
        : name === ''
          ? String(segment)
          : `${name}.${String(segment)}`,
    '',
  );
}
