/**
 * cdk-nag rule `Pipeline-EventPatternWildcards`: no field of an EventBridge rule's pattern holds
 * more than {@link MAX_WILDCARDS_PER_FIELD} `wildcard` matchers.
 *
 * EventBridge refuses a rule whose wildcard matching is too complex ("Rule is too complex") and
 * publishes no number: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html
 * (wildcard matching complexity). Its open-source engine (aws/event-ruler, `Machine.evaluateComplexity`)
 * scores 2 wildcards in a field 4, and a public stack's rule was refused at 12, so 2 keeps far
 * below any refusal; `prefix`, `suffix` and `equals-ignore-case` cost the matcher nothing and
 * serve where a case-insensitive or partial match is needed.
 */
import { type CfnResource, Stack } from 'aws-cdk-lib';
import { CfnRule } from 'aws-cdk-lib/aws-events';
import type { NagRuleCompliance } from 'cdk-nag';
import { ruleCompliance } from './cdk-nag.ts';

export const MAX_WILDCARDS_PER_FIELD = 2;

/** Each leaf field of `pattern` (dotted path; `$or` branches count toward the field they name) with its wildcard count. */
export function wildcardsPerField(pattern: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  const visit = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$or' && Array.isArray(value)) {
        for (const alternative of value) visit(alternative, at);
      } else if (Array.isArray(value)) {
        const field = at === '' ? key : `${at}.${key}`;
        const wildcards = value.filter((m) => m !== null && typeof m === 'object' && 'wildcard' in m).length;
        counts.set(field, (counts.get(field) ?? 0) + wildcards);
      } else {
        visit(value, at === '' ? key : `${at}.${key}`);
      }
    }
  };
  visit(pattern, '');
  return counts;
}

export default Object.defineProperty(
  (node: CfnResource): NagRuleCompliance => {
    if (!(node instanceof CfnRule) || node.eventPattern === undefined) return ruleCompliance().NOT_APPLICABLE;
    const pattern = Stack.of(node).resolve(node.eventPattern) as unknown;
    const tooMany = [...wildcardsPerField(pattern).values()].some((n) => n > MAX_WILDCARDS_PER_FIELD);
    return tooMany ? ruleCompliance().NON_COMPLIANT : ruleCompliance().COMPLIANT;
  },
  'name',
  { value: 'EventPatternWildcards' },
);
