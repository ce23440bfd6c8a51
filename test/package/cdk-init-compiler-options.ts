/**
 * The compiler options of a fresh `cdk init app --language typescript` (the template the installed
 * aws-cdk CLI writes), with `skipLibCheck` off: the package's declarations, and everything they
 * import, must then type-check in the consumer's program.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../lib/platform/pipeline-function.ts';

const TEMPLATE = 'node_modules/aws-cdk/lib/init-templates/app/typescript/tsconfig.json';

export function cdkInitCompilerOptions(): Record<string, unknown> {
  const { compilerOptions } = JSON.parse(readFileSync(join(REPO_ROOT, TEMPLATE), 'utf8')) as {
    compilerOptions: Record<string, unknown>;
  };
  return {
    ...compilerOptions,
    skipLibCheck: false,
    // cdk init installs @types/node (and jest's, which the example does not use); the offline app
    // has none, so this repository's copy stands in for it.
    types: ['node'],
    typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
    // The template type-checks only; a test that runs the output turns emitting on.
    noEmit: false,
  };
}
