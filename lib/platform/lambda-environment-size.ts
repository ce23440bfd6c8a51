/**
 * Lambda refuses a function whose environment variables total more than 4 KB ("Environment
 * variables: 4 KB, for all environment variables associated with the function, combined";
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). Settings flow into
 * variables (mirror secret ARNs, status words, vendor URLs), so the size is checked at synth.
 *
 * What is measured is a lower bound: Lambda's error shows the variables as a JSON object, so that is
 * what is counted, with each unresolved reference (a bucket name, an ARN) counted as empty. A
 * function refused here would certainly be refused at deploy; none that passes here is refused
 * because of this count alone.
 */
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { IConstruct } from 'constructs';

export const MAX_ENVIRONMENT_BYTES = 4096;

/** The literal text of a resolved value: intrinsics contribute only their literal parts. */
function literalText(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (Array.isArray(value)) return value.map(literalText).join('');
  if (value !== null && typeof value === 'object') {
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (join) return join[1].map(literalText).join(join[0]);
  }
  return '';
}

/** What is wrong with `variables` (resolved, as in the template), or undefined. */
export function environmentSizeProblem(variables: Readonly<Record<string, unknown>>): string | undefined {
  const literal = Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, literalText(value)]),
  );
  const bytes = Buffer.byteLength(JSON.stringify(literal), 'utf8');
  if (bytes <= MAX_ENVIRONMENT_BYTES) return undefined;
  const largest = Object.entries(literal)
    .sort(([, a], [, b]) => b.length - a.length)
    .slice(0, 2)
    .map(([name, value]) => `${name} ${Buffer.byteLength(value, 'utf8')} bytes`)
    .join(', ');
  return `environment variables take at least ${bytes} bytes; Lambda allows ${MAX_ENVIRONMENT_BYTES} in all (largest: ${largest})`;
}

/** Adds the check to `fn`'s synth-time validations (run after every variable has been added). */
export function validateEnvironmentSize(fn: IConstruct): void {
  fn.node.addValidation({
    validate: () => {
      const cfn = fn.node.defaultChild as CfnFunction;
      const environment = Stack.of(fn).resolve(cfn.environment) as
        | { variables?: Record<string, unknown> }
        | undefined;
      const problem = environmentSizeProblem(environment?.variables ?? {});
      return problem === undefined ? [] : [problem];
    },
  });
}
