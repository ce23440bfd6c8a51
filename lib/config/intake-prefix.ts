/** The rule for an intake prefix (an S3 key prefix EventBridge matches), shared by every intake's schema. */
import { describeValue } from '#lambdas/platform/input/schema';

export function intakePrefixProblem(prefix: string): string | undefined {
  const got = `(got ${describeValue(prefix)})`;
  if (prefix.length === 0) return `must be a non-empty string ${got}`;
  if (prefix.startsWith('/')) return `must not start with '/' (S3 keys have no leading slash) ${got}`;
  if (!prefix.endsWith('/')) return `must end with '/' ${got}`;
  // '*' and '\' are special in EventBridge wildcard patterns; '//' is almost certainly a typo.
  if (/[*?\\]/.test(prefix) || prefix.includes('//')) return `must not contain '*', '?', '\\' or '//' ${got}`;
  return undefined;
}
