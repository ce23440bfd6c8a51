/** Checks shared by the domain-list parser tests. */
import { expect } from 'vitest';
import type { ParsedDomainList } from '#lambdas/domain-list/domain-list';

/** Every line read is a domain, an invalid line, a duplicate or ignored, and the samples are capped. */
export function expectAccounted(parsed: ParsedDomainList): void {
  expect(parsed.domains.length + parsed.invalidCount + parsed.duplicateCount + parsed.ignored).toBe(
    parsed.lines,
  );
  expect(parsed.invalid.length).toBe(Math.min(parsed.invalidCount, 1_000));
  expect(parsed.duplicates.length).toBe(Math.min(parsed.duplicateCount, 1_000));
}
