/**
 * Remembers allowed decisions, so a 5,000-domain run does not simulate 50,000 near-identical S3
 * writes. A decision depends on the resource ARN only through which Resource/NotResource patterns
 * of the policies in play it matches, and on the request context only through the condition keys
 * those policies name: two calls by the same function with the same action, the same kind of
 * resource, the same values of the named keys and the same matched patterns get the same answer
 * from IAM. Only allows are remembered; a denial is simulated every time (and rare).
 *
 * Nothing is remembered for policies whose answer could depend on more than that: a policy variable
 * (`${aws:username}`) anywhere, or a condition on the clock (aws:CurrentTime, aws:EpochTime).
 */
import type { PolicyDocument } from './view.ts';

const CLOCK_KEYS = new Set(['aws:currenttime', 'aws:epochtime']);

interface Patterns {
  /** Every Resource and NotResource pattern, compiled; undefined when nothing may be remembered. */
  readonly compiled: readonly RegExp[] | undefined;
  /** Every condition key the policies name, lowercased (IAM compares key names case-insensitively). */
  readonly conditionKeys: ReadonlySet<string>;
}

/** IAM's wildcards: `*` any run of characters, `?` one character; case-sensitive. */
function compile(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's');
}

function patternsOf(documents: readonly PolicyDocument[]): Patterns {
  const text = JSON.stringify(documents).toLowerCase();
  const never: Patterns = { compiled: undefined, conditionKeys: new Set() };
  if (text.includes('${') || [...CLOCK_KEYS].some((key) => text.includes(key))) return never;
  const patterns: string[] = [];
  const conditionKeys = new Set<string>();
  for (const document of documents) {
    for (const statement of document.Statement) {
      for (const operands of Object.values((statement.Condition ?? {}) as Record<string, object>)) {
        for (const key of Object.keys(operands)) conditionKeys.add(key.toLowerCase());
      }
      for (const field of ['Resource', 'NotResource']) {
        const value = statement[field];
        if (value === undefined) continue;
        for (const pattern of ([] as unknown[]).concat(value)) {
          if (typeof pattern !== 'string') return never;
          patterns.push(pattern);
        }
      }
    }
  }
  return { compiled: patterns.map(compile), conditionKeys };
}

/** `arn:aws:s3:::bucket` -> `arn:aws:s3::: bucket`; `…/key` -> `… object`; else up to the resource type. */
function resourceKind(resource: string): string {
  const parts = resource.split(':');
  const head = parts.slice(0, 5).join(':');
  const rest = parts.slice(5).join(':');
  if (parts[2] === 's3') return `${head} ${rest.includes('/') ? 'object' : 'bucket'}`;
  return `${head} ${rest.split(/[/:]/)[0]}`;
}

export interface DecisionMemo {
  /** The memo key of this request, or undefined when its answer must not be remembered. */
  keyOf(
    scope: string,
    documents: readonly PolicyDocument[],
    action: string,
    resource: string,
    context: Readonly<Record<string, string | string[]>>,
  ): string | undefined;
  isAllowed(key: string | undefined): boolean;
  rememberAllowed(key: string | undefined): void;
}

export function createDecisionMemo(): DecisionMemo {
  const allowed = new Set<string>();
  const patternsByScope = new Map<string, Patterns>();
  return {
    keyOf(scope, documents, action, resource, context) {
      let patterns = patternsByScope.get(scope);
      if (!patterns) {
        patterns = patternsOf(documents);
        patternsByScope.set(scope, patterns);
      }
      if (!patterns.compiled) return undefined;
      const matched = patterns.compiled.map((pattern) => (pattern.test(resource) ? '1' : '0')).join('');
      const conditions = Object.entries(context)
        .filter(([key]) => patterns.conditionKeys.has(key.toLowerCase()))
        .sort(([a], [b]) => (a < b ? -1 : 1));
      return JSON.stringify([scope, action, resourceKind(resource), matched, conditions]);
    },
    isAllowed: (key) => key !== undefined && allowed.has(key),
    rememberAllowed: (key) => {
      if (key !== undefined) allowed.add(key);
    },
  };
}
